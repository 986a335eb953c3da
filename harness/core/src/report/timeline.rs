//! `timeline.jsonl`: one JSON object per line, every recorded control-plane event and every
//! per-second sidecar sample (`"event": "sample"` with its `pod`), in time order.

use std::io::Write;

use crate::measure::RunData;

/// The lines of `timeline.jsonl` for `data`.
pub fn render_timeline(data: &RunData) -> serde_json::Result<String> {
    let mut lines: Vec<(f64, serde_json::Value)> = Vec::new();
    for e in &data.events {
        lines.push((e.t_s, serde_json::to_value(e)?));
    }
    for pod in &data.pods {
        for s in &pod.samples {
            let mut v = serde_json::to_value(s)?;
            if let Some(obj) = v.as_object_mut() {
                obj.insert("event".into(), "sample".into());
                obj.insert("pod".into(), pod.name.clone().into());
            }
            lines.push((s.t_s, v));
        }
    }
    lines.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out = Vec::new();
    for (_, v) in lines {
        // Writing into a Vec cannot fail.
        let _ = writeln!(out, "{v}");
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{EventKind, PodRun, PodSample, RecordedEvent};

    #[test]
    fn events_and_samples_interleave_in_time_order() {
        let data = RunData {
            events: vec![
                RecordedEvent {
                    t_s: 0.5,
                    kind: EventKind::Endpoint {
                        pod: "pod-0".into(),
                        ready: true,
                    },
                },
                RecordedEvent {
                    t_s: 2.0,
                    kind: EventKind::Note {
                        message: "n".into(),
                    },
                },
            ],
            pods: vec![PodRun {
                name: "pod-0".into(),
                node: "n".into(),
                zone: "z".into(),
                max_concurrency: 4,
                samples: vec![PodSample {
                    t_s: 1.0,
                    in_flight: 2,
                    ..PodSample::default()
                }],
            }],
            ..RunData::default()
        };
        let text = render_timeline(&data).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let kinds: Vec<&str> = lines.iter().map(|l| l["event"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["endpoint", "sample", "note"]);
        assert_eq!(lines[1]["pod"], "pod-0");
        assert_eq!(lines[1]["inFlight"], 2);
        assert_eq!(lines[0]["tS"], 0.5);
    }
}

//! Rebuilding a run's reports without rerunning it: reads `summary.json` and `timeline.jsonl`
//! from a run directory, re-derives the series the timeline holds (per-pod arrivals, in
//! flight, queues, hints per endpoint, termination windows; the sidecar side of each pod when
//! the summary predates it), and writes `junit.xml`, `report.md` and `report.html` again —
//! after an upgrade of the harness, or for a run copied from CI.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::pod_views::pod_destination;
use super::series_views::timeline_series;
use crate::measure::{PodRun, PodSample, RecordedEvent, RunData};
use crate::report::{SUMMARY_SCHEMA, Summary, render_html, render_junit, render_markdown};

/// Why a run directory could not be re-rendered.
#[derive(Debug, thiserror::Error)]
pub enum RebuildError {
    #[error("cannot read {path}: {source} (is this a run directory written by `harness run`?)")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not a harness summary: {source}")]
    Summary {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error(
        "{path}: schema `{found}` is not `{SUMMARY_SCHEMA}`; this harness renders only that version"
    )]
    Schema { path: PathBuf, found: String },
    #[error("{path}:{line}: not a timeline record: {source}")]
    Timeline {
        path: PathBuf,
        line: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// A timeline file's contents: control-plane events and per-pod sidecar samples.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timeline {
    pub events: Vec<RecordedEvent>,
    pub samples: BTreeMap<String, Vec<PodSample>>,
}

/// Parses `timeline.jsonl` (one JSON object a line, as `harness run` writes it).
pub fn read_timeline(path: &Path) -> Result<Timeline, RebuildError> {
    let text = std::fs::read_to_string(path).map_err(|source| RebuildError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut timeline = Timeline::default();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let bad = |source| RebuildError::Timeline {
            path: path.to_path_buf(),
            line: i + 1,
            source,
        };
        let value: serde_json::Value = serde_json::from_str(line).map_err(bad)?;
        if value.get("event").and_then(|e| e.as_str()) == Some("sample") {
            let pod = value
                .get("pod")
                .and_then(|p| p.as_str())
                .unwrap_or_default()
                .to_string();
            let sample: PodSample = serde_json::from_value(value).map_err(bad)?;
            timeline.samples.entry(pod).or_default().push(sample);
        } else {
            timeline
                .events
                .push(serde_json::from_value(value).map_err(bad)?);
        }
    }
    Ok(timeline)
}

/// Reads and checks `summary.json`.
pub fn read_summary(path: &Path) -> Result<Summary, RebuildError> {
    let text = std::fs::read_to_string(path).map_err(|source| RebuildError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|source| RebuildError::Summary {
            path: path.to_path_buf(),
            source,
        })?;
    let found = value
        .get("schema")
        .and_then(|s| s.as_str())
        .unwrap_or("(none)");
    if found != SUMMARY_SCHEMA {
        return Err(RebuildError::Schema {
            path: path.to_path_buf(),
            found: found.to_string(),
        });
    }
    serde_json::from_value(value).map_err(|source| RebuildError::Summary {
        path: path.to_path_buf(),
        source,
    })
}

/// Brings the timeline's series of `summary` up to date from `timeline`.
pub fn refresh_from_timeline(summary: &mut Summary, timeline: Timeline) {
    let pods: Vec<PodRun> = summary
        .pods
        .iter()
        .map(|p| PodRun {
            name: p.name.clone(),
            node: p.node.clone(),
            zone: p.zone.clone(),
            max_concurrency: p.max_concurrency,
            samples: timeline.samples.get(&p.name).cloned().unwrap_or_default(),
        })
        .collect();
    for (pod, run) in summary.pods.iter_mut().zip(&pods) {
        if pod.destination.is_none() && !run.samples.is_empty() {
            pod.destination = pod_destination(run);
        }
    }
    let run = RunData {
        duration_s: summary.duration_s,
        pods,
        events: timeline.events,
        ..RunData::default()
    };
    let n = summary.series.attempted.len().max(run.seconds());
    timeline_series(&run, n).apply(&mut summary.series);
}

/// Rewrites junit.xml, report.md and report.html in `dir` from its summary and timeline (a
/// missing timeline.jsonl leaves the summary's series as they are); returns the paths.
pub fn rebuild_reports(dir: &Path) -> Result<Vec<PathBuf>, RebuildError> {
    let mut summary = read_summary(&dir.join("summary.json"))?;
    let timeline_path = dir.join("timeline.jsonl");
    if timeline_path.exists() {
        refresh_from_timeline(&mut summary, read_timeline(&timeline_path)?);
    }
    let files = [
        ("junit.xml", render_junit(&summary)),
        ("report.md", render_markdown(&summary)),
        ("report.html", render_html(&summary)),
    ];
    let mut written = Vec::new();
    for (name, content) in files {
        let path = dir.join(name);
        std::fs::write(&path, content).map_err(|source| RebuildError::Write {
            path: path.clone(),
            source,
        })?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_samples_and_events_and_names_the_bad_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("timeline.jsonl");
        std::fs::write(
            &path,
            "{\"event\":\"endpoint\",\"pod\":\"pod-0\",\"ready\":true,\"t_s\":-1.0}\n\
             {\"admitted\":3,\"event\":\"sample\",\"in_flight\":1,\"pod\":\"pod-0\",\"queue_depth\":0,\"ready\":true,\"received\":4,\"rejected_queue_full\":0,\"rejected_queue_timeout\":0,\"t_s\":0.5}\n",
        )
        .unwrap();
        let t = read_timeline(&path).unwrap();
        assert_eq!(t.events.len(), 1);
        assert_eq!(t.samples["pod-0"][0].received, 4);
        std::fs::write(&path, "{\"event\":\"endpoint\"}\nnot json\n").unwrap();
        let e = read_timeline(&path).unwrap_err().to_string();
        assert!(e.contains("timeline.jsonl:1: not a timeline record"), "{e}");
    }

    #[test]
    fn refuses_another_schema_and_names_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::write(
            dir.join("summary.json"),
            "{\"schema\":\"harness-summary/v9\"}",
        )
        .unwrap();
        let e = rebuild_reports(dir).unwrap_err().to_string();
        assert!(
            e.contains("summary.json: schema `harness-summary/v9` is not"),
            "{e}"
        );
        let e = rebuild_reports(&dir.join("nowhere"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("cannot read") && e.contains("run directory"),
            "{e}"
        );
    }
}

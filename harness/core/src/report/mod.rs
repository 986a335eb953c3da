//! Run output: the summary model and every file of a run's directory, written by one
//! function ([`write_reports`]) — `summary.json`, `junit.xml` (a testcase per expectation),
//! `report.md` (fit for a CI step summary), `report.html` (one self-contained page with inline
//! SVG charts) and `timeline.jsonl` (the recorded events and samples).

mod html;
mod junit;
mod markdown;
pub mod summary;
mod svg;
mod timeline;

use std::path::{Path, PathBuf};

pub use html::render_html;
pub use junit::render_junit;
pub use markdown::render_markdown;
pub use summary::*;
pub use timeline::render_timeline;

use crate::measure::RunData;

/// Escapes text for XML and HTML element content and attribute values.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Writes summary.json, junit.xml, report.md, report.html and timeline.jsonl (from `data`)
/// into `dir`; returns their paths.
pub fn write_reports(
    dir: &Path,
    summary: &Summary,
    data: &RunData,
) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let json = serde_json::to_string_pretty(summary).map_err(std::io::Error::other)?;
    let timeline = render_timeline(data).map_err(std::io::Error::other)?;
    let files = [
        ("summary.json", json),
        ("junit.xml", render_junit(summary)),
        ("report.md", render_markdown(summary)),
        ("report.html", render_html(summary)),
        ("timeline.jsonl", timeline),
    ];
    let mut written = Vec::new();
    for (name, content) in files {
        let path = dir.join(name);
        std::fs::write(&path, content)?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
pub(crate) mod fixture {
    use super::*;
    use std::collections::BTreeMap;

    /// A small failing summary used by the renderers' tests.
    pub fn failing_summary() -> Summary {
        let mut requests_per_pod = BTreeMap::new();
        requests_per_pod.insert("pod-1".to_string(), vec![50, 60, 55]);
        requests_per_pod.insert("pod-2".to_string(), vec![0, 0, 1]);
        Summary {
            schema: SUMMARY_SCHEMA.to_string(),
            scenario: "topology-skew".into(),
            variant: Some("incident".into()),
            target: "local".into(),
            run_id: "20261129-000000-abcd".into(),
            seed: 7,
            started_at: "2026-11-29T00:00:00Z".into(),
            duration_s: 3.0,
            time_scale: 1.0,
            verdict: Verdict::Fail,
            partial: false,
            partial_reason: None,
            explanation: vec!["starvedPods = 1 > 0: pod-2 <starved> & idle".into()],
            expectations: vec![ExpectationResult {
                name: "no starved pods".into(),
                metric: "starvedPods".into(),
                window: WindowSummary {
                    text: "whole run".into(),
                    from_s: 0.0,
                    to_s: 3.0,
                },
                observed: Some(1.0),
                threshold: Threshold {
                    min: None,
                    max: Some(0.0),
                },
                passed: false,
                evidence: "pod-2 received 1 of 166 requests".into(),
            }],
            totals: Totals::default(),
            pods: vec![],
            skew: SkewSummary::default(),
            traffic_matrix: BTreeMap::new(),
            hints: HintsSummary {
                events: vec![
                    HintEventSummary {
                        t_s: -2.0,
                        kind: "Warning".into(),
                        reason: "TopologyAwareHintsDisabled".into(),
                        message: "Insufficient number of endpoints (0 endpoints, 2 zones)".into(),
                    },
                    HintEventSummary {
                        t_s: 1.5,
                        kind: "Normal".into(),
                        reason: "TopologyAwareHintsEnabled".into(),
                        message: "Topology Aware Hints has been enabled".into(),
                    },
                ],
                flaps: 1,
            },
            series: Series {
                requests_per_pod,
                error_rate: vec![0.0, 0.5, 0.1],
                attempted: vec![50, 120, 56],
                markers: vec![Marker {
                    t_s: 1.0,
                    label: "node-change".into(),
                }],
                hints_enabled: vec![false, true, true],
                destination_rps: vec![50.0, 60.0, 56.0],
                replicas: vec![2, 2, 2],
            },
        }
    }
}

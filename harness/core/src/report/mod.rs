//! Run output: the summary model and every file of a run's directory, written by one
//! function ([`write_reports`]) — `summary.json`, `junit.xml` (a testcase per expectation),
//! `report.md` (fit for a CI step summary), `report.html` (one self-contained page with inline
//! SVG charts) and `timeline.jsonl` (the recorded events and samples).

mod cross_zone_summary;
mod events;
mod html;
pub mod icons;
mod ingress_tables;
mod junit;
mod markdown;
pub mod reconcile;
pub mod summary;
mod svg;
pub mod text;
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
pub(crate) mod fixture;

#[cfg(test)]
mod tests {
    use super::*;

    /// The reports collapse identical events; the files of record do not: summary.json keeps
    /// the three recorded events, report.html and report.md show one row with ×3.
    #[test]
    fn only_the_views_collapse_repeated_events() {
        let mut summary = fixture::failing_summary();
        let event = HintEventSummary {
            t_s: 12.0,
            kind: "Warning".into(),
            reason: "TopologyAwareHintsDisabled".into(),
            message: "Insufficient number of endpoints".into(),
        };
        summary.hints.events = vec![event.clone(), event.clone(), event];
        let dir = tempfile::tempdir().unwrap();
        write_reports(dir.path(), &summary, &RunData::default()).unwrap();
        let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
        let written: Summary = serde_json::from_str(&read("summary.json")).unwrap();
        assert_eq!(written.hints.events, summary.hints.events);
        assert_eq!(read("report.html").matches("data-times=\"3\"").count(), 1);
        assert_eq!(
            read("report.md")
                .matches("- 12.0s TopologyAwareHintsDisabled ×3: Insufficient")
                .count(),
            1
        );
    }
}

//! Run output: the summary model and every file of a run's directory, written by one
//! function ([`write_reports`]) — `summary.json`, `junit.xml` (a testcase per expectation),
//! `report.md` (fit for a CI step summary), `report.html` (one self-contained page with inline
//! SVG charts) and `timeline.jsonl` (the recorded events and samples).

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

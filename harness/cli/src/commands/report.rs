//! `harness report DIR`: rebuilds a run's junit.xml, report.md and report.html from its
//! summary.json and timeline.jsonl, without rerunning (after an upgrade of the harness, or for
//! a run copied from CI). Exit 0 when the files were written, whatever the run's verdict; 2 when
//! the directory does not hold a readable run; 3 when a file cannot be written.

use std::path::PathBuf;

use anyhow::anyhow;
use harness_core::verdict::rebuild::{RebuildError, rebuild_reports};

use crate::exit::{Failure, Outcome};

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// A run directory (what `harness run` wrote: summary.json, timeline.jsonl, ...).
    pub dir: PathBuf,
}

pub fn run(args: ReportArgs) -> Outcome {
    let written = rebuild_reports(&args.dir).map_err(|e| match e {
        RebuildError::Write { .. } => Failure::Infrastructure(anyhow!("{e}")),
        _ => Failure::InvalidInput(anyhow!("{e}")),
    })?;
    let mut text = String::new();
    for path in written {
        text.push_str(&format!("wrote {}\n", path.display()));
    }
    crate::output::print(&text);
    Ok(())
}

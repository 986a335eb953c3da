//! `harness run --matrix`: one run per cell (checked before anything runs), each in its own
//! directory under the output directory (`<out>/<cell>/`, see `name`), then each run after the
//! first compared against the first (`harness compare`'s files in that run's directory), then
//! the roll-up (`rollup`): printed, and written as `<out>/matrix.md` and `<out>/matrix.json`.
//!
//! Exit: the worst of the runs' own verdicts, then of the comparisons (0, 1 a failed
//! expectation or a regression, 2 not comparable, 3 infrastructure or interrupted), the earliest
//! on a tie; a cell that cannot be started, or a comparison that cannot be made, stops the
//! matrix with its own failure. An interrupted cell (Ctrl-C) is the last one run.

use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};
use harness_core::compare::{CompareVerdict, Comparison};
use harness_kind::node_image::NodeImage;

use super::CellTarget;
use super::rollup::{CellRow, CellVerdict, ComparisonRow, Rollup, Source, Stop};
use crate::commands::compare;
use crate::commands::run::{Ran, RunArgs, run_once};
use crate::exit::{Failure, Outcome, worse};

pub fn run_matrix(args: &RunArgs) -> Outcome {
    if args.baseline.is_some() {
        return Err(Failure::InvalidInput(anyhow!(
            "--matrix compares its runs against the first combination; it does not take --baseline"
        )));
    }
    let (cells, name) = super::cells(
        &args.matrix,
        &args.set,
        &args.file,
        args.variant.as_deref(),
        &CellTarget {
            target: args.target,
            creates_cluster: args.kind.creates_cluster(),
            node_image: args.kind.node_image.as_ref(),
        },
    )?;
    let root = args.out.clone().unwrap_or_else(|| {
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        Path::new("results")
            .join(&name)
            .join(format!("matrix-{stamp}"))
    });
    // The cells' directories are claimed one by one (another run's results are refused unless
    // --replace); the roll-up of another matrix is protected the same way, before anything runs.
    let previous = root.join("matrix.json");
    if previous.exists() && !args.replace {
        return Err(Failure::InvalidInput(anyhow!(
            "{} holds the roll-up of another matrix; nothing was started and nothing was changed. Choose a new or empty --out, or pass --replace to run this matrix over it",
            previous.display()
        )));
    }
    eprintln!(
        "matrix: {} runs of {} into {}",
        cells.len(),
        args.file.display(),
        root.display()
    );
    let default_image = args
        .kind
        .node_image
        .clone()
        .unwrap_or_else(NodeImage::pinned);
    for (index, cell) in cells.iter().enumerate() {
        eprintln!("  {}", super::describe(index, cell, &name, &default_image));
    }
    let mut rows: Vec<CellRow> = cells
        .iter()
        .enumerate()
        .map(|(index, cell)| CellRow::not_run(index + 1, &cell.name, &cell.values))
        .collect();
    let rollup = |rows: Vec<CellRow>, stop: Option<Stop>| {
        let axes = args.matrix.iter().map(|a| a.path.clone()).collect();
        let file = args.file.display().to_string();
        Rollup::new(&name, &file, axes, rows, stop)
    };

    let mut outcome: Outcome = Ok(());
    let mut dirs: Vec<(usize, PathBuf)> = Vec::new();
    for (index, cell) in cells.iter().enumerate() {
        match run_once(
            args,
            &cell.overrides,
            &cell.kind,
            Some(root.join(&cell.name)),
        ) {
            Ok(ran) => {
                record_run(&mut rows[index], &ran);
                outcome = worse(outcome, ran.outcome);
                dirs.push((index, ran.dir));
                if ran.interrupted {
                    // Ctrl-C stops the matrix, not only the cell it came in.
                    break;
                }
            }
            Err(failure) => {
                record_failure(&mut rows[index], &failure);
                let stop = Stop {
                    cell: index,
                    by: Source::Run,
                };
                report(&rollup(rows, Some(stop)), &root).ok();
                return Err(failure);
            }
        }
    }
    if let Some(((_, first), rest)) = dirs.split_first() {
        for (index, dir) in rest {
            match compare::compare_dirs(first, dir, &args.max_regression, dir) {
                Ok(comparison) => {
                    rows[*index].compared(comparison_row(&comparison));
                    outcome = worse(outcome, compare::outcome_of(&comparison));
                }
                Err(failure) => {
                    rows[*index].compared(ComparisonRow {
                        verdict: "error".to_owned(),
                        exit: code_of_failure(&failure),
                        detail: Some(failure.to_string()),
                    });
                    let stop = Stop {
                        cell: *index,
                        by: Source::Comparison,
                    };
                    report(&rollup(rows, Some(stop)), &root).ok();
                    return Err(failure);
                }
            }
        }
    }
    let rollup = rollup(rows, None);
    debug_assert_eq!(
        rollup.exit.code,
        code(&outcome),
        "the roll-up names the exit code the matrix has"
    );
    match report(&rollup, &root) {
        Ok(()) => outcome,
        Err(e) => worse(outcome, Err(Failure::Infrastructure(e))),
    }
}

/// Prints the roll-up and writes matrix.md and matrix.json into `root`.
fn report(rollup: &Rollup, root: &Path) -> anyhow::Result<()> {
    println!();
    print!("{}", super::rollup::render_text(rollup));
    let written = write(rollup, root);
    match &written {
        Ok(()) => println!("Roll-up: {}", root.join("matrix.md").display()),
        Err(e) => eprintln!("error: {e:#}"),
    }
    written
}

fn write(rollup: &Rollup, root: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(root).with_context(|| format!("creating {}", root.display()))?;
    let json = serde_json::to_string_pretty(rollup)? + "\n";
    for (file, text) in [
        ("matrix.md", super::rollup::render_markdown(rollup)),
        ("matrix.json", json),
    ] {
        let path = root.join(file);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// The exit code of an outcome.
fn code(outcome: &Outcome) -> i32 {
    match outcome {
        Ok(()) => 0,
        Err(failure) => code_of_failure(failure),
    }
}

fn code_of_failure(failure: &Failure) -> i32 {
    match failure {
        Failure::ExpectationFailed => 1,
        Failure::InvalidInput(_) => 2,
        Failure::Infrastructure(_) => 3,
    }
}

/// A cell that ran (completely or not) and wrote its results.
fn record_run(row: &mut CellRow, ran: &Ran) {
    let verdict = match &ran.outcome {
        Ok(()) => CellVerdict::Passed,
        Err(Failure::ExpectationFailed) => CellVerdict::Failed,
        Err(Failure::InvalidInput(_)) => CellVerdict::Invalid,
        Err(Failure::Infrastructure(_)) if ran.interrupted => CellVerdict::Interrupted,
        Err(Failure::Infrastructure(_)) => CellVerdict::Infrastructure,
    };
    let expectations = &ran.summary.expectations;
    let failed: Vec<String> = expectations
        .iter()
        .filter(|e| !e.passed && e.incomplete.is_none())
        .map(|e| e.name.clone())
        .collect();
    let reason = match verdict {
        CellVerdict::Passed => None,
        CellVerdict::Failed => Some(format!(
            "{} of {} expectations failed",
            failed.len(),
            expectations.len()
        )),
        _ => Some(
            ran.reason
                .clone()
                .unwrap_or_else(|| verdict.as_str().to_owned()),
        ),
    };
    row.ran(verdict, failed, reason);
}

/// A cell that could not be run at all.
fn record_failure(row: &mut CellRow, failure: &Failure) {
    let (verdict, e) = match failure {
        Failure::InvalidInput(e) => (CellVerdict::Invalid, e),
        Failure::Infrastructure(e) => (CellVerdict::Infrastructure, e),
        // A run that did not start fails no expectation; kept for completeness.
        Failure::ExpectationFailed => {
            row.ran(CellVerdict::Failed, Vec::new(), None);
            return;
        }
    };
    row.ran(verdict, Vec::new(), Some(format!("{e:#}")));
}

fn comparison_row(c: &Comparison) -> ComparisonRow {
    let (verdict, exit, detail) = match c.verdict {
        CompareVerdict::Ok => ("ok", 0, None),
        CompareVerdict::Regression => ("regression", 1, Some(c.regressions.join("; "))),
        CompareVerdict::Incomparable => (
            "incomparable",
            2,
            Some(c.reason.clone().unwrap_or_else(|| "they differ".to_owned())),
        ),
    };
    ComparisonRow {
        verdict: verdict.to_owned(),
        exit,
        detail,
    }
}

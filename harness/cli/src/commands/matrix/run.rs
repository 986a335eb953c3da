//! `harness run --matrix`: one run per cell (checked before anything runs), each in its own
//! directory under the output directory (`<out>/<cell>/`), then each run after the first
//! compared against the first (`harness compare`'s files in that run's directory). Exit: the
//! worst of the runs' own verdicts and the comparisons (0, 1 a failed expectation or a
//! regression, 2 not comparable, 3 infrastructure).

use std::path::{Path, PathBuf};

use anyhow::anyhow;
use harness_kind::node_image::NodeImage;

use super::CellTarget;
use crate::commands::compare;
use crate::commands::run::{RunArgs, run_once};
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
    let mut outcome: Outcome = Ok(());
    let mut dirs: Vec<PathBuf> = Vec::new();
    for cell in &cells {
        let (dir, verdict) = run_once(
            args,
            &cell.overrides,
            &cell.kind,
            Some(root.join(&cell.name)),
        )?;
        outcome = worse(outcome, verdict);
        dirs.push(dir);
    }
    let Some((first, rest)) = dirs.split_first() else {
        return outcome;
    };
    for dir in rest {
        let comparison = compare::compare_dirs(first, dir, &args.max_regression, dir)?;
        outcome = worse(outcome, compare::outcome_of(&comparison));
    }
    outcome
}

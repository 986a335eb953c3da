//! `harness compare BASE_DIR CANDIDATE_DIR [--max-regression METRIC=VALUE]...`: two run
//! directories side by side (`harness_core::compare`), written as compare.json, compare.md and
//! compare.html (into the candidate's directory unless `--out`). Exit 0 when no bound is
//! exceeded, 1 when one is (a regression), 2 when the runs are not comparable (the reason is
//! printed) or the input is wrong, 3 when a file cannot be written. Also used by `harness run
//! --baseline` and `--matrix`.

use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};
use harness_core::compare::{
    Bound, CompareVerdict, Comparison, compare, render_compare_html, render_compare_markdown,
};
use harness_core::report::Summary;

use crate::exit::{Failure, Outcome};

#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// The base run's directory (what `harness run` wrote; its summary.json is read).
    pub base: PathBuf,
    /// The candidate run's directory.
    pub candidate: PathBuf,
    /// Exit 1 when the candidate is worse than the base by more than VALUE on METRIC
    /// (repeatable), e.g. `--max-regression errorRate=0.01 --max-regression
    /// firstPositionsShare=0.05`. METRIC is a row of the comparison: `errorRate`,
    /// `errors.<status or kind>`, `skewMaxMean`, `skewCv`, `starvedPods`, `latencyP50Ms`,
    /// `latencyP99Ms`, `ingressRestarts`, `firstPositionsShare`, or `expect.<metric>` for an
    /// expectation's observed value.
    #[arg(long = "max-regression", value_name = "METRIC=VALUE", value_parser = Bound::parse)]
    pub max_regression: Vec<Bound>,
    /// Where to write compare.json, compare.md and compare.html (default: CANDIDATE_DIR).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn run(args: CompareArgs) -> Outcome {
    let out = args.out.clone().unwrap_or_else(|| args.candidate.clone());
    let comparison = compare_dirs(&args.base, &args.candidate, &args.max_regression, &out)?;
    outcome_of(&comparison)
}

/// Reads a run directory's summary.json.
pub fn read_summary(dir: &Path) -> Result<Summary, Failure> {
    let path = dir.join("summary.json");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        Failure::InvalidInput(anyhow!(
            "{}: {e}; give a directory `harness run` wrote (it holds summary.json)",
            path.display()
        ))
    })?;
    serde_json::from_str(&text).map_err(|e| {
        Failure::InvalidInput(anyhow!(
            "{}: not a harness-summary/v1 summary: {e}",
            path.display()
        ))
    })
}

/// Compares two run directories and writes the three files into `out`; prints the verdict.
pub fn compare_dirs(
    base: &Path,
    candidate: &Path,
    bounds: &[Bound],
    out: &Path,
) -> Result<Comparison, Failure> {
    let (b, c) = (read_summary(base)?, read_summary(candidate)?);
    let comparison = compare(
        &b,
        &c,
        (
            &base.display().to_string(),
            &candidate.display().to_string(),
        ),
        bounds,
    )
    .map_err(|e| Failure::InvalidInput(anyhow!("{e}")))?;
    write_comparison(&comparison, out).map_err(Failure::Infrastructure)?;
    for r in &comparison.regressions {
        println!("  regression: {r}");
    }
    let word = match comparison.verdict {
        CompareVerdict::Ok => "OK",
        CompareVerdict::Regression => "REGRESSION",
        CompareVerdict::Incomparable => "INCOMPARABLE",
    };
    println!(
        "{word}: {} against {}{}. Comparison: {}",
        candidate.display(),
        base.display(),
        comparison
            .reason
            .as_deref()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default(),
        out.join("compare.html").display()
    );
    Ok(comparison)
}

fn write_comparison(c: &Comparison, out: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let json = serde_json::to_string_pretty(c)?;
    for (name, text) in [
        ("compare.json", json),
        ("compare.md", render_compare_markdown(c)),
        ("compare.html", render_compare_html(c)),
    ] {
        let path = out.join(name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// 0 ok, 1 regression, 2 incomparable.
pub fn outcome_of(c: &Comparison) -> Outcome {
    match c.verdict {
        CompareVerdict::Ok => Ok(()),
        CompareVerdict::Regression => Err(Failure::ExpectationFailed),
        CompareVerdict::Incomparable => Err(Failure::InvalidInput(anyhow!(
            "the runs are not comparable: {}",
            c.reason.as_deref().unwrap_or("they differ")
        ))),
    }
}

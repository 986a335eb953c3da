//! `harness run FILE --matrix PATH=V1,V2 [--matrix ...]`: one run per combination of the
//! values (several axes multiply; each value is a `--set` override, checked like the file
//! before anything runs), each in its own directory under the output directory
//! (`<out>/<path>=<value>,.../`), then each run after the first compared against the first
//! (`harness compare`'s files in that run's directory). Exit: the worst of the runs' own
//! verdicts and the comparisons (0, 1 a failed expectation or a regression, 2 not comparable,
//! 3 infrastructure).

use std::path::{Path, PathBuf};

use anyhow::anyhow;
use harness_core::scenario::{Override, load_scenario_with};

use super::run::{RunArgs, run_once, worse};
use crate::exit::{Failure, Outcome};

/// One `--matrix PATH=V1,V2,...` axis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Axis {
    pub path: String,
    pub values: Vec<String>,
}

impl Axis {
    pub fn parse(text: &str) -> Result<Axis, String> {
        let (path, values) = text
            .split_once('=')
            .filter(|(p, v)| !p.trim().is_empty() && !v.trim().is_empty())
            .ok_or_else(|| {
                format!("`{text}` is not PATH=V1,V2 (e.g. `ingress.version=v0.6,v0.16`)")
            })?;
        let values: Vec<String> = values.split(',').map(|v| v.trim().to_owned()).collect();
        if values.iter().any(String::is_empty) {
            return Err(format!("`{text}`: an empty value between commas"));
        }
        Ok(Axis {
            path: path.trim().to_owned(),
            values,
        })
    }
}

/// Every combination, first axis slowest: each a list of (path, value).
pub fn combinations(axes: &[Axis]) -> Vec<Vec<(String, String)>> {
    let mut out: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for axis in axes {
        out = out
            .into_iter()
            .flat_map(|combo| {
                axis.values.iter().map(move |v| {
                    let mut next = combo.clone();
                    next.push((axis.path.clone(), v.clone()));
                    next
                })
            })
            .collect();
    }
    out
}

/// `ingress.version=v0.6,service.replicas=4`, safe as a directory name.
fn label(combo: &[(String, String)]) -> String {
    combo
        .iter()
        .map(|(p, v)| format!("{p}={v}"))
        .collect::<Vec<_>>()
        .join(",")
        .replace(['/', ' '], "_")
}

pub fn run(args: &RunArgs) -> Outcome {
    if args.baseline.is_some() {
        return Err(Failure::InvalidInput(anyhow!(
            "--matrix compares its runs against the first combination; it does not take --baseline"
        )));
    }
    let combos = combinations(&args.matrix);
    // Every combination is checked before anything runs.
    let mut plans = Vec::new();
    let mut name = String::new();
    for combo in &combos {
        let mut overrides = args.set.clone();
        for (path, value) in combo {
            overrides.push(
                Override::new(path, value)
                    .map_err(|e| Failure::InvalidInput(anyhow!("--matrix {path}={value}: {e}")))?,
            );
        }
        let scenario = load_scenario_with(&args.file, args.variant.as_deref(), &overrides)
            .map_err(|e| Failure::InvalidInput(anyhow!("--matrix {}: {e}", label(combo))))?;
        name = scenario.name;
        plans.push((label(combo), overrides));
    }
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
        plans.len(),
        args.file.display(),
        root.display()
    );
    let mut outcome: Outcome = Ok(());
    let mut dirs: Vec<PathBuf> = Vec::new();
    for (label, overrides) in &plans {
        let (dir, verdict) = run_once(args, overrides, Some(root.join(label)))?;
        outcome = worse(outcome, verdict);
        dirs.push(dir);
    }
    let Some((first, rest)) = dirs.split_first() else {
        return outcome;
    };
    for dir in rest {
        let comparison = super::compare::compare_dirs(first, dir, &args.max_regression, dir)?;
        outcome = worse(outcome, super::compare::outcome_of(&comparison));
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_multiply_first_axis_slowest() {
        let axes = vec![
            Axis::parse("ingress.version=v0.6,v0.16").unwrap(),
            Axis::parse("service.replicas=4,8").unwrap(),
        ];
        let labels: Vec<String> = combinations(&axes).iter().map(|c| label(c)).collect();
        assert_eq!(
            labels,
            [
                "ingress.version=v0.6,service.replicas=4",
                "ingress.version=v0.6,service.replicas=8",
                "ingress.version=v0.16,service.replicas=4",
                "ingress.version=v0.16,service.replicas=8"
            ]
        );
        assert!(Axis::parse("ingress.version").is_err());
        assert!(Axis::parse("a=1,,2").is_err());
    }
}

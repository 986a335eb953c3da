//! The run facts a report shows besides the scenario: the harness and workload versions and a
//! command line that repeats the run.

use harness_core::text::shell_quote;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use harness_core::report::Invocation;
use harness_local::bins::WorkloadBins;

/// What to repeat.
pub struct RunSpec<'a> {
    pub file: &'a Path,
    pub variant: Option<&'a str>,
    /// `--set` overrides, repeated as given.
    pub overrides: &'a [harness_core::scenario::Override],
    pub target: &'a str,
    /// `--node-image`, when the run chose one (kind).
    pub node_image: Option<&'a str>,
    pub seed: u64,
    pub time_scale: f64,
}

/// Versions and the command that repeats `spec`.
pub fn invocation(spec: &RunSpec<'_>) -> Invocation {
    let mut words = vec![
        "harness".to_string(),
        "run".to_string(),
        spec.file.display().to_string(),
    ];
    if let Some(v) = spec.variant {
        words.extend(["--variant".to_string(), v.to_string()]);
    }
    for o in spec.overrides {
        words.extend([
            "--set".to_string(),
            format!("{}={}", o.path_text, o.value_text),
        ]);
    }
    words.extend(["--target".to_string(), spec.target.to_string()]);
    if let Some(image) = spec.node_image {
        words.extend(["--node-image".to_string(), image.to_string()]);
    }
    words.extend([
        "--seed".to_string(),
        spec.seed.to_string(),
        "--time-scale".to_string(),
        spec.time_scale.to_string(),
    ]);
    Invocation {
        harness_version: env!("CARGO_PKG_VERSION").to_string(),
        scenario_file: spec.file.display().to_string(),
        command: words
            .iter()
            .map(|w| shell_quote(w))
            .collect::<Vec<_>>()
            .join(" "),
        workloads: workload_versions(),
    }
}

/// Each workload binary's `--version` line (binaries that cannot be found or run are left out).
fn workload_versions() -> BTreeMap<String, String> {
    let Ok(bins) = WorkloadBins::locate() else {
        return BTreeMap::new();
    };
    [
        ("flagsvc", &bins.flagsvc),
        ("sidecar", &bins.sidecar),
        ("loadgen", &bins.loadgen),
    ]
    .into_iter()
    .filter_map(|(name, path)| {
        let out = Command::new(path).arg("--version").output().ok()?;
        let line = String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()?
            .trim()
            .to_string();
        (out.status.success() && !line.is_empty()).then(|| (name.to_string(), line))
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_the_run_with_quoted_words() {
        let inv = invocation(&RunSpec {
            file: Path::new("scenarios/my skew.yaml"),
            variant: Some("incident"),
            overrides: &[
                harness_core::scenario::Override::parse("load.generators[a b].rate=5").unwrap(),
            ],
            target: "local",
            node_image: None,
            seed: 7,
            time_scale: 0.1,
        });
        assert_eq!(
            inv.command,
            "harness run 'scenarios/my skew.yaml' --variant incident --set 'load.generators[a b].rate=5' --target local --seed 7 --time-scale 0.1"
        );
        assert_eq!(inv.harness_version, env!("CARGO_PKG_VERSION"));
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}

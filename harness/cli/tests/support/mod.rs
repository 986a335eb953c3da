//! Shared by the scenario end-to-end tests: run a shipped scenario's variant with the built
//! `harness` binary, and read its `summary.json` checked against the published schema.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

use serde_json::Value;

/// Scenario runs are timing-sensitive; tests that must not share the 2 cores take this lock.
pub static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

pub fn require_workload_bins() {
    let dir = Path::new(env!("CARGO_BIN_EXE_harness")).parent().unwrap();
    for bin in ["flagsvc", "sidecar", "loadgen"] {
        assert!(
            dir.join(bin).is_file(),
            "{bin} is not built in {}; run `cargo build --workspace --bins` first (make test does)",
            dir.display()
        );
    }
}

/// Runs `scenarios/<file>` with `variant` to completion; returns the exit code.
pub fn run_variant(file: &str, variant: &str, out: &Path) -> i32 {
    run_variant_with(file, variant, &[], out)
}

/// [`run_variant`] with `--set` overrides (`PATH=VALUE` each).
pub fn run_variant_with(file: &str, variant: &str, sets: &[&str], out: &Path) -> i32 {
    require_workload_bins();
    let status = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["run", &format!("scenarios/{file}"), "--variant", variant])
        .args(["--seed", "7"])
        .args(sets.iter().flat_map(|set| ["--set", set]))
        .arg("--out")
        .arg(out)
        .current_dir(workspace_root())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    status.code().unwrap_or(-1)
}

/// `summary.json` of a run, validated against `harness schema summary`.
pub fn summary(out: &Path) -> Value {
    let text = std::fs::read_to_string(out.join("summary.json")).unwrap();
    let value: Value = serde_json::from_str(&text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["schema", "summary"])
        .output()
        .unwrap();
    let schema: Value = serde_json::from_slice(&out.stdout).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "summary.json breaks its schema: {errors:?}"
    );
    value
}

/// The expectation on `metric`.
pub fn expectation<'a>(s: &'a Value, metric: &str) -> &'a Value {
    s["expectations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["metric"] == metric)
        .unwrap_or_else(|| panic!("no {metric} expectation"))
}

/// A count in a status/kind → count map (0 when absent).
pub fn count(map: &Value, key: &str) -> u64 {
    map.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// The run's timeline, one JSON object per line.
pub fn timeline(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out.join("timeline.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

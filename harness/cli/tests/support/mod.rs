//! Shared by the CLI tests: the built `harness` binary run from the workspace root, `harness
//! hints` on the hints fixtures, `harness plan --target kind` and a short `harness run --target
//! kind` with the kind tests' image list; for the scenario end-to-end tests, a shipped
//! scenario's variant run to completion and its `summary.json` checked against the published
//! schema, a run's child processes, and Ctrl-C in the middle of a run.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Lines};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

pub mod chromium;
pub mod import;

/// Scenario runs are timing-sensitive; tests that must not share the 2 cores take this lock.
pub static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The built `harness` binary with `args`, from the workspace root (as a user types it there).
pub fn harness_command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_harness"));
    command.args(args).current_dir(workspace_root());
    command
}

/// [`harness_command`] run to its end.
pub fn harness(args: &[&str]) -> Output {
    harness_command(args).output().unwrap()
}

/// A file of tests/fixtures/hints (the skew incident's objects), as an absolute path.
pub fn hints_fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hints")
        .join(name)
        .display()
        .to_string()
}

/// `harness hints --nodes NODES --endpointslices SLICES` (paths), `extra` flags after.
pub fn hints(nodes: &str, slices: &str, extra: &[&str]) -> Output {
    let mut args = vec!["hints", "--nodes", nodes, "--endpointslices", slices];
    args.extend_from_slice(extra);
    harness(&args)
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
    let status = harness_command(&["run", &format!("scenarios/{file}"), "--variant", variant])
        .args(["--seed", "7"])
        .args(sets.iter().flat_map(|set| ["--set", set]))
        .arg("--out")
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    status.code().unwrap_or(-1)
}

/// Runs `scenarios/testdata/<file>` with seed 7, one scenario run at a time: its exit code,
/// its `summary.json` (checked against the schema) and its timeline.
pub fn run_testdata(file: &str) -> (i32, Value, Vec<Value>) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    require_workload_bins();
    let dir = tempfile::tempdir().unwrap();
    let status = harness_command(&["run", &format!("scenarios/testdata/{file}"), "--seed", "7"])
        .args(["--progress", "none", "--out"])
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    (
        status.code().unwrap_or(-1),
        summary(dir.path()),
        timeline(dir.path()),
    )
}

/// The zone of `pod` in a summary's `pods`; panics naming the pod when it is not there.
pub fn pod_zone<'a>(summary: &'a Value, pod: &str) -> &'a str {
    summary["pods"]
        .as_array()
        .and_then(|pods| pods.iter().find(|p| p["name"] == pod))
        .and_then(|p| p["zone"].as_str())
        .unwrap_or_else(|| panic!("no pod {pod} with a zone in the summary"))
}

/// `summary.json` of a run, validated against `harness schema summary`.
pub fn summary(out: &Path) -> Value {
    let text = std::fs::read_to_string(out.join("summary.json")).unwrap();
    let value: Value = serde_json::from_str(&text).unwrap();
    let out = harness(&["schema", "summary"]);
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

/// The image list of the kind tests (fake content tags), from the workspace root.
pub const KIND_IMAGES: &str = "harness/kind/tests/fixtures/images.json";

/// The flags of the plans the golden files hold: 8 host CPUs, run id `golden`.
pub const GOLDEN_PLAN: &[&str] = &["--host-cpus", "8", "--run-id", "golden"];

/// `harness plan FILE --target kind --output-dir DIR --images IMAGES`, `extra` flags after.
pub fn plan_on_kind(file: &str, dir: &Path, images: &str, extra: &[&str]) -> Output {
    let dir = dir.to_str().unwrap();
    let mut args = vec!["plan", file, "--target", "kind", "--output-dir", dir];
    args.extend(["--images", images]);
    args.extend_from_slice(extra);
    harness(&args)
}

/// `harness run --target kind` of topology-skew shrunk to seconds (1 s of warm-up, 4 s of
/// load, its timeline at 1, 2 and 3 s) on 8 host CPUs, through `kubeconfig`, with the
/// recording fakes of `fakes` first on PATH, into `out`; `extra` flags besides. Its output is
/// piped.
pub fn short_kind_run(
    kubeconfig: &Path,
    fakes: &Path,
    extra: &[&str],
    out: &Path,
) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_harness"));
    cmd.args(["run", "scenarios/topology-skew.yaml", "--target", "kind"])
        .args([
            "--kubeconfig",
            kubeconfig.to_str().unwrap(),
            "--host-cpus",
            "8",
        ])
        .args(["--images", KIND_IMAGES])
        .args(extra)
        .args(["--set", "load.warmup=1s", "--set", "load.duration=4s"])
        .args(["--set", "timeline[node-added].at=1s"])
        .args(["--set", "timeline[node-removed].at=2s"])
        .args(["--set", "timeline[pod-churn].at=3s"])
        .args(["--progress", "none", "--out", out.to_str().unwrap()])
        .env("PATH", format!("{}:/usr/bin:/bin", fakes.display()))
        .current_dir(workspace_root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
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

/// The expectation called `name` in a summary; panics naming it when there is none.
pub fn expectation_named<'a>(s: &'a Value, name: &str) -> &'a Value {
    s["expectations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == name)
        .unwrap_or_else(|| panic!("no expectation `{name}`"))
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

/// Pids of `parent`'s direct children, from /proc.
pub fn children(parent: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the command name (which is in parentheses): state, ppid, ...
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        if after.split(' ').nth(1).and_then(|p| p.parse().ok()) == Some(parent) {
            out.push(pid);
        }
    }
    out
}

/// Reads a run's piped stderr (plain progress lines) until its ` phase load` line, which must
/// come within `within`; returns the rest of it.
pub fn wait_for_load(child: &mut Child, within: Duration) -> Lines<BufReader<ChildStderr>> {
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let started = Instant::now();
    for line in lines.by_ref() {
        if line.unwrap().contains(" phase load") {
            break;
        }
        assert!(started.elapsed() < within, "load never started");
    }
    lines
}

/// Ctrl-C: SIGINT to the run, the `rest` of its stderr drained (so it never blocks on a full
/// pipe), and at most 60 s for it to end, with exit code 3 (an interrupted run).
pub fn interrupt(child: &mut Child, rest: Lines<BufReader<ChildStderr>>) {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    std::thread::spawn(move || for _ in rest {});
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "harness did not stop within 60 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(status.code(), Some(3), "interrupted runs exit 3");
}

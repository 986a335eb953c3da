//! The pinned third-party releases from the command line: `harness run --target kind` of a
//! scenario with an autoscaler refuses (exit 2) while the shipped pins have no sha256, saying
//! how to record it, before it creates anything (no output directory, no kind/docker call);
//! `harness pins lock` refuses a missing pin file (exit 2).

#[path = "../../kind/tests/support/mod.rs"]
mod kind_support;
mod support;

use kind_support::fakes::FakeTools;
use support::{KIND_IMAGES, harness, harness_command};

#[test]
fn an_unlocked_pin_refuses_a_kind_run_with_exit_2() {
    let fakes = FakeTools::new(&["kind", "docker"]);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let path = format!("{}:/usr/bin:/bin", fakes.dir().display());
    let output = harness_command(&[
        "run",
        "scenarios/autoscaler-blind-spot.yaml",
        "--target",
        "kind",
    ])
    .args(["--time-scale", "1", "--images", KIND_IMAGES])
    .args(["--progress", "none", "--out", out.to_str().unwrap()])
    .env("PATH", path)
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("has no sha256 recorded in harness/kind/third-party.yaml"),
        "{stderr}"
    );
    assert!(stderr.contains("run `harness pins lock`"), "{stderr}");
    assert!(!out.exists(), "nothing was created");
    assert!(fakes.calls().is_empty(), "no kind/docker call");
}

#[test]
fn pins_lock_refuses_a_missing_file() {
    let output = harness(&["pins", "lock", "--file", "/nonexistent/third-party.yaml"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no such pin file"), "{stderr}");
}

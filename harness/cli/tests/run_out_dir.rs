//! `harness run --out DIR` with a directory that cannot take the results: under a regular
//! file, read-only, or full. Each is found before anything starts: exit 3, the path and the
//! reason on stderr, and nothing in the directory (a started run writes its workloads' logs
//! there first).
//!
//! The read-only and full cases mount a small tmpfs in a private mount namespace (`unshare
//! --user --map-root-user --mount`, no privilege needed where user namespaces are allowed).
//! Where they are not, those cases skip and say so, unless HARNESS_REQUIRE_USERNS is set.

mod support;

use std::path::Path;
use std::process::{Command, Output};

use support::{harness_command, workspace_root};

const SCENARIO: &str = "scenarios/testdata/valid-minimal.yaml";

fn harness_run(out: &Path) -> Output {
    harness_command(&["run", SCENARIO, "--progress", "none", "--out"])
        .arg(out)
        .output()
        .unwrap()
}

fn assert_refused(out: &Output, path: &Path, reason: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains(&format!("--out {}:", path.display())),
        "the path is named: {stderr}"
    );
    assert!(stderr.contains(reason), "the reason ({reason}): {stderr}");
    assert!(stderr.contains("nothing was started"), "{stderr}");
    assert!(!stderr.contains("deploy"), "no deployment began: {stderr}");
}

#[test]
fn an_out_under_a_regular_file_exits_3_with_path_and_reason() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("file"), "x").unwrap();
    let out = dir.path().join("file").join("run");
    assert_refused(&harness_run(&out), &out, "Not a directory");
}

/// Runs `script` (sh) in a private user and mount namespace, with `$DIR` a fresh directory
/// and `$HARNESS` the harness binary; `None` when namespaces are not available here.
fn in_namespace(script: &str) -> Option<(Output, std::path::PathBuf)> {
    let probe = Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "true"])
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        assert!(
            std::env::var_os("HARNESS_REQUIRE_USERNS").is_none(),
            "unshare --user --map-root-user --mount fails here, and HARNESS_REQUIRE_USERNS is set"
        );
        eprintln!("skipped: user namespaces are not available (unshare --user --mount fails)");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let mount_point = dir.path().join("mnt");
    std::fs::create_dir(&mount_point).unwrap();
    let out = Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "sh", "-ec", script])
        .env("DIR", &mount_point)
        .env("HARNESS", env!("CARGO_BIN_EXE_harness"))
        .env("SCENARIO", SCENARIO)
        .current_dir(workspace_root())
        .output()
        .unwrap();
    // The tmpfs went with the namespace; keep the tempdir alive until here.
    let run = mount_point.join("run");
    drop(dir);
    Some((out, run))
}

#[test]
fn a_read_only_out_exits_3_before_anything_starts() {
    let script = r#"
        mount -t tmpfs -o size=16m tmpfs "$DIR"
        mkdir "$DIR/run"
        mount -o remount,ro "$DIR"
        "$HARNESS" run "$SCENARIO" --progress none --out "$DIR/run" && exit 99 || code=$?
        ls -A "$DIR/run" >&2
        exit $code
    "#;
    let Some((out, run)) = in_namespace(script) else {
        return;
    };
    assert_refused(&out, &run, "not writable: Read-only file system");
}

#[test]
fn a_full_out_exits_3_before_anything_starts() {
    // 2 MiB of tmpfs, 1.5 MiB of it taken: less room than the probe needs.
    let script = r#"
        mount -t tmpfs -o size=2m tmpfs "$DIR"
        mkdir "$DIR/run"
        dd if=/dev/zero of="$DIR/filler" bs=64k count=24 2>/dev/null
        "$HARNESS" run "$SCENARIO" --progress none --out "$DIR/run" && exit 99 || code=$?
        echo "left in run: [$(ls -A "$DIR/run")]" >&2
        exit $code
    "#;
    let Some((out, run)) = in_namespace(script) else {
        return;
    };
    assert_refused(&out, &run, "not writable: No space left on device");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("left in run: []"),
        "the probe is removed: {stderr}"
    );
}

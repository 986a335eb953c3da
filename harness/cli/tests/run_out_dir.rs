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

/// A run the target refuses (here kind with haproxy-ingress v0.6, whose Ingress API Kubernetes
/// no longer serves) is refused before its output directory is claimed and before the
/// "running …" banner: exit 2, nothing left behind, given or fresh.
#[test]
fn a_refused_run_claims_no_directory_and_prints_no_banner() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("refused");
    let given = harness_command(&[
        "run",
        "scenarios/ingress-hot-podding.yaml",
        "--target",
        "kind",
    ])
    .arg("--out")
    .arg(&out)
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&given.stderr);
    assert_eq!(given.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot run this scenario"), "{stderr}");
    assert!(
        !stderr.contains("running ingress-hot-podding"),
        "no banner: {stderr}"
    );
    assert!(!out.exists(), "no directory claimed");

    // Without --out: no new run directory under results/<scenario>/.
    let results = workspace_root().join("results/ingress-hot-podding");
    let listing = || -> Vec<String> {
        std::fs::read_dir(&results)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let before = listing();
    let fresh = harness_command(&[
        "run",
        "scenarios/ingress-hot-podding.yaml",
        "--target",
        "kind",
    ])
    .output()
    .unwrap();
    assert_eq!(fresh.status.code(), Some(2));
    assert_eq!(listing(), before);
}

/// Ctrl-C while the pods are deploying: the run stops, tears down, and writes a partial
/// summary that says where it stopped (exit 3).
#[test]
fn an_interrupted_deploy_writes_a_partial_summary() {
    let _one = support::ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    support::require_workload_bins();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    // A start-up of 20 s keeps the deploy waiting long enough to be interrupted in it.
    let mut child = harness_command(&["run", SCENARIO, "--progress", "plain"])
        .args(["--set", "service.startup.latency=20s", "--out"])
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::BufRead;
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let started = std::time::Instant::now();
    for line in lines.by_ref() {
        if line.unwrap().contains("phase deploy") {
            break;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "deploy never began"
        );
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    support::interrupt(&mut child, lines);
    let summary = support::summary(&out);
    assert_eq!(summary["partial"], true);
    assert_eq!(
        summary["partialReason"],
        "interrupted during deploy: nothing was measured"
    );
    assert_eq!(summary["totals"]["attempted"], 0);
    assert!(out.join("report.html").is_file() && out.join("junit.xml").is_file());
}

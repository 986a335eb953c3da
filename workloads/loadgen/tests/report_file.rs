//! The `--output-file` report against a generator that is stopped or killed: SIGTERM mid-run
//! leaves a whole partial report; SIGKILL leaves none (the report is written once, at the
//! end); and a kill at any moment around the write leaves the previous state or the whole new
//! report, never half of one, and no temporary file under the report's name.

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{full, http_server};
use loadgen::{Report, ReportExt};

fn start(url: &str, report: &Path, duration: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_loadgen"))
        .args(["run", "--url", url, "--rate", "200", "--connections", "4"])
        .args(["--duration", duration, "--output", "json", "--output-file"])
        .arg(report)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -{name}");
}

/// Waits (at most 30 s) for the child to end.
fn wait(child: &mut Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "loadgen did not end within 30 s");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits (at most 30 s) until the server has had `n` connections: the generator is sending.
async fn until_sending(accepted: impl Fn() -> usize, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while accepted() < n {
        assert!(Instant::now() < deadline, "loadgen never connected");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The files in `dir` (names), sorted.
fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn read_report(path: &Path) -> Report {
    let text = std::fs::read_to_string(path).unwrap();
    let report = Report::from_json(&text).unwrap_or_else(|e| panic!("not a whole report: {e}"));
    report.check_invariants().unwrap();
    report
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_mid_run_leaves_a_whole_partial_report() {
    let server = http_server(|_, _| async { full(200, "pod-a", "ok") }).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.json");
    let mut child = start(&server.url("/").to_string(), &path, "60s");
    until_sending(|| server.accepted(), 4).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    signal(&child, "TERM");
    let status = wait(&mut child);
    assert!(status.success(), "{status}");
    let report = read_report(&path);
    assert!(report.partial, "stopped early: partial");
    assert!(report.attempted > 0);
    assert!(report.duration_s < 60.0, "{}", report.duration_s);
    assert_eq!(
        files(dir.path()),
        ["report.json"],
        "no temporary file is left"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_mid_run_leaves_no_report_rather_than_half_of_one() {
    let server = http_server(|_, _| async { full(200, "pod-a", "ok") }).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.json");
    let mut child = start(&server.url("/").to_string(), &path, "60s");
    until_sending(|| server.accepted(), 4).await;
    signal(&child, "KILL");
    wait(&mut child);
    assert_eq!(
        files(dir.path()),
        Vec::<String>::new(),
        "nothing was written"
    );
}

/// SIGTERM, then SIGKILL a little later each time (0–45 ms: while it drains, assembles or
/// writes the report, or after it is done). Each time the report's path holds the earlier
/// report, untouched, or a whole new one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_around_the_write_never_leaves_half_a_report() {
    let server = http_server(|_, _| async { full(200, "pod-a", "ok") }).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.json");
    let mut previous: Option<String> = None;
    for step in 0..10u64 {
        let before = server.accepted();
        let mut child = start(&server.url("/").to_string(), &path, "60s");
        until_sending(|| server.accepted(), before + 4).await;
        signal(&child, "TERM");
        tokio::time::sleep(Duration::from_millis(step * 5)).await;
        let _ = Command::new("kill")
            .args(["-KILL", &child.id().to_string()])
            .status();
        wait(&mut child);
        match std::fs::read_to_string(&path) {
            Err(e) => {
                assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
                assert!(previous.is_none(), "step {step}: a report vanished");
            }
            Ok(text) => {
                if previous.as_deref() != Some(text.as_str()) {
                    let report = read_report(&path);
                    assert!(report.partial, "step {step}");
                }
                previous = Some(text);
            }
        }
        let stray: Vec<String> = files(dir.path())
            .into_iter()
            .filter(|n| n != "report.json" && !n.ends_with(".tmp"))
            .collect();
        assert!(stray.is_empty(), "step {step}: {stray:?}");
    }
}

//! `harness run`'s live progress, seen in a real terminal: a short scenario
//! (tests/fixtures/progress/short-skew.yaml) runs inside tmux, and the pane is captured while
//! the load runs. On the terminal the view shows the phase, elapsed and remaining time, the
//! achieved rate, the error rate, pods ready, hints, and one bar per pod against its limit;
//! the bars are gone once the verdict prints. With NO_COLOR the same terminal gets plain
//! timestamped lines instead.
//!
//! Needs Debian's `tmux` (`.ci/run` installs it) and the workload binaries (`make test`
//! builds them). The tmux server runs on a socket of its own and is ended by the test.

mod support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use support::{require_workload_bins, workspace_root};

/// A tmux server of this test's own (`tmux -L NAME`), killed on drop.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(name: &str, command: &str, env: &[(&str, &str)]) -> Self {
        let socket = format!("harness-progress-{}-{name}", std::process::id());
        let mut cmd = Command::new("tmux");
        cmd.args(["-L", &socket, "-f", "/dev/null", "new-session", "-d"])
            .args(["-s", "run", "-x", "160", "-y", "48"]);
        for (k, v) in env {
            cmd.args(["-e", &format!("{k}={v}")]);
        }
        let status = cmd
            .arg(command)
            .current_dir(workspace_root())
            .status()
            .unwrap_or_else(|e| {
                panic!("tmux is needed for this test (`apt-get install tmux`; .ci/run does): {e}")
            });
        assert!(status.success(), "tmux new-session failed");
        Tmux { socket }
    }

    /// The visible pane, as text.
    fn capture(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p", "-t", "run"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Captures until `done` holds for a capture (every 250 ms, at most `limit`).
    fn wait_for(&self, limit: Duration, done: impl Fn(&str) -> bool) -> Option<String> {
        let start = Instant::now();
        while start.elapsed() < limit {
            let pane = self.capture();
            if done(&pane) {
                return Some(pane);
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        None
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

/// The shell command the pane runs: the scenario, then a marker with the exit code, then a
/// pause so the pane stays to be captured.
fn command(out: &Path, extra: &str) -> String {
    format!(
        "{} run harness/cli/tests/fixtures/progress/short-skew.yaml --seed 3 --out {} {extra}; echo EXIT=$?; sleep 30",
        env!("CARGO_BIN_EXE_harness"),
        out.display()
    )
}

fn pod_bar_lines(pane: &str) -> Vec<&str> {
    pane.lines()
        .filter(|l| l.trim_start().starts_with("pod-") && l.contains("in flight"))
        .collect()
}

#[test]
fn live_progress_on_a_terminal_and_plain_lines_without_color() {
    require_workload_bins();
    let _one = support::ONE_AT_A_TIME.lock();
    let dir = tempfile::tempdir().unwrap();

    // On a terminal: bars.
    let tmux = Tmux::start("bars", &command(&dir.path().join("bars"), ""), &[]);
    let live = tmux
        .wait_for(Duration::from_secs(90), |pane| {
            pane.contains("load ▕") && pod_bar_lines(pane).len() == 4 && pane.contains("rps ·")
        })
        .unwrap_or_else(|| panic!("no live load view; the pane:\n{}", tmux.capture()));
    let main = live
        .lines()
        .find(|l| l.starts_with("load ▕"))
        .expect("the phase bar");
    assert!(main.contains("s left"), "remaining time: {main}");
    assert!(main.contains("s/8s"), "elapsed of the 8 s: {main}");
    assert!(
        main.contains(" rps · errors "),
        "rate and error rate: {main}"
    );
    assert!(main.contains("pods ready 4/4"), "{main}");
    assert!(main.contains("hints on"), "{main}");
    let pods = pod_bar_lines(&live);
    assert!(
        pods.iter()
            .all(|l| l.contains("/10 in flight") && l.contains("▕")),
        "a bar per pod against the limit of 10: {pods:?}"
    );
    // The streams hold the slots of the two pods zone-a callers reach.
    let saturated = pods
        .iter()
        .filter(|l| l.contains("10/10 in flight"))
        .count();
    assert!(saturated >= 1, "{pods:?}");

    let end = tmux
        .wait_for(Duration::from_secs(90), |pane| pane.contains("EXIT="))
        .unwrap_or_else(|| panic!("the run did not end; the pane:\n{}", tmux.capture()));
    assert!(
        end.contains("EXIT=1"),
        "a failed expectation exits 1:\n{end}"
    );
    assert!(end.contains("FAIL: 0/1 expectations held"), "{end}");
    assert!(
        pod_bar_lines(&end).is_empty(),
        "bars cleared before the verdict:\n{end}"
    );
    drop(tmux);

    // NO_COLOR on the same kind of terminal: plain timestamped lines.
    let tmux = Tmux::start(
        "plain",
        &command(&dir.path().join("plain"), ""),
        &[("NO_COLOR", "1")],
    );
    let end = tmux
        .wait_for(Duration::from_secs(120), |pane| pane.contains("EXIT="))
        .unwrap_or_else(|| panic!("the run did not end; the pane:\n{}", tmux.capture()));
    let status: Vec<&str> = end
        .lines()
        .filter(|l| l.contains(" load ") && l.contains("s left"))
        .collect();
    assert!(!status.is_empty(), "status lines:\n{end}");
    for line in &status {
        let stamp = line.split(' ').next().unwrap();
        assert!(
            stamp.len() == 9 && stamp.ends_with('Z') && stamp.as_bytes()[2] == b':',
            "timestamped (HH:MM:SSZ): {line}"
        );
        assert!(
            line.contains("pods ready") && line.contains("in flight pod-0 "),
            "{line}"
        );
    }
    assert!(end.contains(" phase load"), "{end}");
    assert!(!end.contains('▕'), "no bars with NO_COLOR:\n{end}");
}

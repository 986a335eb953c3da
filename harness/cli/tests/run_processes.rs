//! The local target's processes against the machine: a harness killed with SIGKILL mid-run
//! leaves no flagsvc, sidecar, loadbalancer or loadgen behind (each child holds a parent-death
//! signal), and its generators still leave whole partial reports (theirs is SIGTERM); and two runs at once on one machine keep apart — their own run directory, their
//! own ports (each run's pods count exactly the requests its own generators sent).
//!
//! Both run `scenarios/testdata/valid-all-processes.yaml` (two pods with sidecars, the load
//! balancer, two generators).

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{ONE_AT_A_TIME, require_workload_bins, summary, workspace_root};

const SCENARIO: &str = "scenarios/testdata/valid-all-processes.yaml";
/// The workload binaries the scenario starts, and how many of each.
const EXPECTED: [(&str, usize); 4] = [
    ("flagsvc", 2),
    ("sidecar", 2),
    ("loadbalancer", 1),
    ("loadgen", 2),
];

/// One process as /proc shows it: its name, state letter, parent and start time (which tells
/// a process from a later one given the same pid).
#[derive(Debug, Clone, PartialEq)]
struct Proc {
    pid: i32,
    comm: String,
    state: char,
    ppid: i32,
    start: u64,
}

fn proc_stat(pid: i32) -> Option<Proc> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid ...`: comm may hold spaces and parentheses, so split at the last ')'.
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text[open + 1..close].to_owned();
    let rest: Vec<&str> = text[close + 1..].split_whitespace().collect();
    Some(Proc {
        pid,
        comm,
        state: rest.first()?.chars().next()?,
        ppid: rest.get(1)?.parse().ok()?,
        // Field 22 of stat; `rest` starts at field 3.
        start: rest.get(19)?.parse().ok()?,
    })
}

fn children_of(parent: i32) -> Vec<Proc> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(proc_stat)
        .filter(|p| p.ppid == parent)
        .collect()
}

fn count_by_name(procs: &[Proc]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for p in procs {
        *counts.entry(p.comm.clone()).or_insert(0) += 1;
    }
    counts
}

/// Still running: the same process (same start time) and not a zombie.
fn alive(p: &Proc) -> bool {
    proc_stat(p.pid).is_some_and(|now| now.start == p.start && now.state != 'Z')
}

fn start_run(out: &Path, cwd: &Path, extra: &[&str]) -> Child {
    let mut command = Command::new(env!("CARGO_BIN_EXE_harness"));
    command
        .arg("run")
        .arg(workspace_root().join(SCENARIO))
        .args(["--progress", "none", "--seed", "3"])
        .args(extra)
        .current_dir(cwd)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if !out.as_os_str().is_empty() {
        command.arg("--out").arg(out);
    }
    command.spawn().unwrap()
}

#[test]
fn sigkill_of_the_harness_leaves_no_workload_process() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    require_workload_bins();
    let dir = tempfile::tempdir().unwrap();
    let mut harness = start_run(
        &dir.path().join("run"),
        dir.path(),
        &["--set", "load.duration=2m"],
    );
    let pid = harness.id() as i32;

    // Wait (at most 60 s) until every process of the scenario runs.
    let deadline = Instant::now() + Duration::from_secs(60);
    let children = loop {
        let children = children_of(pid);
        let counts = count_by_name(&children);
        if EXPECTED
            .iter()
            .all(|(name, n)| counts.get(*name).copied().unwrap_or(0) >= *n)
        {
            break children;
        }
        if let Ok(Some(status)) = harness.try_wait() {
            panic!("the harness ended ({status}) before starting every process: {counts:?}");
        }
        assert!(
            Instant::now() < deadline,
            "not every process started within 60 s: {counts:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let workloads: Vec<Proc> = children
        .into_iter()
        .filter(|p| EXPECTED.iter().any(|(name, _)| *name == p.comm))
        .collect();
    assert_eq!(workloads.len(), 7, "{workloads:?}");

    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let status = harness.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9)
    );

    // The kernel signals each child as the harness goes; give them at most 10 s to be gone.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut survivors: Vec<&Proc> = workloads.iter().filter(|p| alive(p)).collect();
    while !survivors.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        survivors.retain(|p| alive(p));
    }
    // A failing run must not leave them behind either.
    for p in &survivors {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(p.pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    assert!(
        survivors.is_empty(),
        "processes outlived the killed harness: {survivors:?}"
    );
    // The generators got SIGTERM, not SIGKILL: each wrote its report, whole and partial.
    for generator in ["via-lb", "via-proxy"] {
        let path = dir
            .path()
            .join("run")
            .join(format!("loadgen-{generator}.json"));
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let report: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(report["partial"], true, "{generator}");
        assert!(report["attempted"].as_u64().unwrap() > 0, "{generator}");
    }
}

/// Requests each run's sidecars saw arrive, and what its generators say they sent.
fn sides(run_dir: &Path) -> (u64, u64) {
    let s = summary(run_dir);
    let arrived: u64 = s["pods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["destination"]["arrived"].as_u64().unwrap())
        .sum();
    let mut attempted = 0;
    for generator in ["via-lb", "via-proxy"] {
        let text = std::fs::read_to_string(run_dir.join(format!("loadgen-{generator}.json")))
            .unwrap_or_else(|e| panic!("{}: loadgen-{generator}.json: {e}", run_dir.display()));
        let report: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            report["attempted"], report["responses"]["200"],
            "{generator}: all 200"
        );
        attempted += report["attempted"].as_u64().unwrap();
    }
    (arrived, attempted)
}

#[test]
fn two_runs_at_once_keep_their_directories_ports_and_requests_apart() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    require_workload_bins();
    // Both use the default output directory (results/<scenario>/<run-id> under their working
    // directory), with the same seed: only the run id can keep them apart.
    let cwd = tempfile::tempdir().unwrap();
    let a = start_run(Path::new(""), cwd.path(), &[]);
    let b = start_run(
        Path::new(""),
        cwd.path(),
        &["--set", "load.generators[via-lb].rate=40"],
    );
    for (name, child) in [("a", a), ("b", b)] {
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "run {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let parent = cwd.path().join("results/all-processes");
    let mut runs: Vec<_> = std::fs::read_dir(&parent)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    runs.sort();
    assert_eq!(runs.len(), 2, "one directory per run: {runs:?}");
    let mut sent = Vec::new();
    for run in &runs {
        let (arrived, attempted) = sides(run);
        // Had the runs shared a port, one run's pods would count the other's requests.
        assert_eq!(arrived, attempted, "{}", run.display());
        let flagsvc_logs = std::fs::read_dir(run)
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                name.to_string_lossy().ends_with("-flagsvc.log")
            })
            .count();
        assert_eq!(
            flagsvc_logs,
            2,
            "each run logs its own pods: {}",
            run.display()
        );
        sent.push(attempted);
    }
    sent.sort();
    // 10 + 20 rps and 10 + 40 rps, each for the warm-up and the 4 s of load.
    assert!(sent[0] < sent[1], "{sent:?}");
}

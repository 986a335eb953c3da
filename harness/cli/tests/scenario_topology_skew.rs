//! The shipped topology-skew scenario end to end on the local target, as CI runs it: each
//! variant's exit code and the incident's signature in summary.json, the other output files,
//! and Ctrl-C in the middle of a run. These start real processes and take about a minute; the
//! workload binaries must be built first (`make test` does: `cargo build --workspace --bins`).

mod support;

use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use support::{
    children, count, expectation, harness_command, interrupt, require_workload_bins, summary,
    wait_for_load,
};

fn run_variant(variant: &str, out: &std::path::Path) -> i32 {
    support::run_variant("topology-skew.yaml", variant, out)
}

#[test]
fn incident_reproduces_the_signature_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let code = run_variant("incident", dir.path());
    assert_eq!(code, 1, "a failed expectation exits 1");
    let s = summary(dir.path());
    assert_eq!(s["verdict"], "fail");
    assert_eq!(s["partial"], false);
    assert_eq!(s["target"], "local");
    assert_eq!(s["variant"], "incident");

    // Hints on at load start: zone-2a clients reach 2 of the 4 pods; the other 2 starve while
    // the reachable ones sit at their concurrency limit.
    let starved = expectation(&s, "starvedPods");
    assert_eq!(starved["observed"], 2.0, "{starved}");
    assert_eq!(starved["passed"], false);
    let pods = s["pods"].as_array().unwrap();
    let saturated = pods
        .iter()
        .filter(|p| p["maxInFlight"] == p["maxConcurrency"])
        .count();
    assert!(saturated >= 2, "two pods at their limit: {pods:?}");

    // The node added in 2a removes the hints with the controller's exact message; pod churn
    // brings them back: the hints flap.
    let events = s["hints"]["events"].as_array().unwrap();
    let disabled = events.iter().find(|e| {
        e["tS"].as_f64().unwrap() > 0.0
            && e["message"]
                .as_str()
                .unwrap()
                .starts_with("Unable to allocate minimum required endpoints to each zone without exceeding overload threshold (4 endpoints, 2 zones)")
    });
    assert!(disabled.is_some(), "{events:?}");
    assert!(s["hints"]["flaps"].as_u64().unwrap() >= 2);

    // With an unbounded queue and no timeout, requests hang until the caller gives up: the
    // errors are client timeouts, not fast 503s.
    let totals = &s["totals"];
    assert!(
        count(&totals["transportErrors"], "timeout") > 100,
        "{totals}"
    );
    assert_eq!(count(&totals["responses"], "503"), 0, "{totals}");
    assert!(totals["errorRate"].as_f64().unwrap() > 0.05);

    // The other outputs.
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    // One testcase per expectation, and the self-audit, which held.
    assert_eq!(junit.matches("<testcase ").count(), 5);
    assert!(junit.contains("failures=\"4\" errors=\"0\""), "{junit}");
    assert!(junit.contains("name=\"the run's numbers reconcile (self-audit)\""));
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    for chart in [
        "answered-per-pod",
        "arrivals-per-pod",
        "error-rate",
        "in-flight-per-pod",
        "hints-per-endpoint",
    ] {
        assert!(html.contains(&format!("data-chart=\"{chart}\"")), "{chart}");
    }
    // Both sides of the pods: the two reachable pods' requests arrive, but callers give up on
    // most of them while they wait behind the streams' slots.
    let swallowing = pods
        .iter()
        .filter(|p| {
            let arrived = p["destination"]["arrived"].as_u64().unwrap();
            let answered: u64 = p["source"]["responses"]
                .as_object()
                .unwrap()
                .values()
                .map(|v| v.as_u64().unwrap())
                .sum();
            arrived > 500 && answered * 2 < arrived
        })
        .count();
    assert!(
        swallowing >= 1,
        "a pod answers under half of what reached it: {pods:?}"
    );
    assert!(html.contains("</svg> swallows requests"));
    let lines: Vec<Value> = support::timeline(dir.path());
    assert!(lines.iter().any(|l| l["event"] == "hints"));
    assert!(lines.iter().any(|l| l["event"] == "sample"));
}

#[test]
fn without_sse_the_skew_stays_but_errors_do_not_appear() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(run_variant("incident-no-sse", dir.path()), 1);
    let s = summary(dir.path());
    assert_eq!(expectation(&s, "starvedPods")["observed"], 2.0);
    assert_eq!(expectation(&s, "errorRate")["passed"], true);
    // At most a stray error around the pod kill (sidecar and app stop together), far from the
    // incident's tens of percent.
    assert!(
        s["totals"]["errorRate"].as_f64().unwrap() < 0.005,
        "{}",
        s["totals"]
    );
}

#[test]
fn fixed_passes() {
    let dir = tempfile::tempdir().unwrap();
    let code = run_variant("fixed", dir.path());
    let s = summary(dir.path());
    assert_eq!(code, 0, "explanation: {}", s["explanation"]);
    assert_eq!(s["verdict"], "pass");
    assert!(s["totals"]["errorRate"].as_f64().unwrap() < 0.01);
    assert!(s["hints"]["events"].as_array().unwrap().is_empty());
    assert!(s["skew"]["maxMean"].as_f64().unwrap() < 1.5);
    assert_eq!(
        s["pods"].as_array().unwrap().len(),
        5,
        "4 pods + the churn replacement"
    );
}

#[test]
fn ctrl_c_stops_every_process_and_writes_a_partial_summary() {
    require_workload_bins();
    let dir = tempfile::tempdir().unwrap();
    let mut child = harness_command(&["run", "scenarios/topology-skew.yaml", "--variant", "fixed"])
        .arg("--out")
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let rest = wait_for_load(&mut child, Duration::from_secs(60));
    std::thread::sleep(Duration::from_secs(3));
    let kids = children(child.id() as i32);
    // 4 pods × 2 processes + 1 load generator.
    assert_eq!(kids.len(), 9, "{kids:?}");
    interrupt(&mut child, rest);
    for pid in kids {
        let alive = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok();
        assert!(!alive, "child {pid} outlived the harness");
    }
    let s = summary(dir.path());
    assert_eq!(s["partial"], true);
    assert_eq!(s["partialReason"], "interrupted by the user");
    assert_eq!(s["verdict"], "fail", "a partial run never passes");
    let ran = s["durationS"].as_f64().unwrap();
    assert!(ran > 1.0 && ran < 30.0, "ran {ran}s of 40");
    assert!(
        s["totals"]["attempted"].as_u64().unwrap() > 100,
        "what ran is kept"
    );
}

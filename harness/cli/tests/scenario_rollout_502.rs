//! The shipped rollout-502 scenario end to end on the local target (incident 4): each
//! variant's exit code and signature in summary.json and timeline.jsonl (and the readiness gate
//! without its preStop sleep, through `--set`). The runs are serialized
//! (the fix's margin, preStop ≥ deregistration lag, is a second at the default time scale).

mod support;

use support::{
    ONE_AT_A_TIME, count, expectation, run_variant, run_variant_with, summary, timeline,
};

const FILE: &str = "rollout-502.yaml";

fn run(variant: &str) -> (i32, serde_json::Value, Vec<serde_json::Value>) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let code = run_variant(FILE, variant, dir.path());
    (code, summary(dir.path()), timeline(dir.path()))
}

/// (requests to terminating pods, of which failed) from the termination expectation's evidence.
fn terminating_requests(s: &serde_json::Value) -> (u64, u64) {
    let evidence = expectation(s, "terminationErrorRate")["evidence"]
        .as_str()
        .unwrap()
        .to_string();
    // "F of N requests to terminating pods failed: ..."
    let words: Vec<&str> = evidence.split_whitespace().collect();
    (words[2].parse().unwrap(), words[0].parse().unwrap())
}

#[test]
fn incident_gives_502s_only_on_terminating_pods() {
    let (code, s, _) = run("incident");
    assert_eq!(code, 1, "{}", s["explanation"]);
    let bad_gateway = count(&s["totals"]["responses"], "502");
    assert!(bad_gateway > 50, "{}", s["totals"]);
    let (to_terminating, failed) = terminating_requests(&s);
    // Every 502 hit a terminating pod. The load balancer counts in 100 ms buckets by send time,
    // the generator in 1 s rows by intended time: a few may fall either side of a window edge.
    assert!(
        failed.abs_diff(bad_gateway) <= bad_gateway / 50,
        "502s: {bad_gateway}, failures on terminating pods: {failed}"
    );
    assert!(failed * 2 > to_terminating, "most requests to them failed");
    assert_eq!(expectation(&s, "rolloutDuration")["passed"], true);
    // The LB-side failures are the only errors.
    let total_errors: u64 = s["totals"]["responses"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(code, _)| !code.starts_with('2'))
        .map(|(_, n)| n.as_u64().unwrap())
        .sum();
    assert_eq!(total_errors, bad_gateway);
}

#[test]
fn fixed_serves_terminating_pods_until_they_leave_the_load_balancer() {
    let (code, s, _) = run("fixed");
    assert_eq!(code, 0, "{}", s["explanation"]);
    assert_eq!(count(&s["totals"]["responses"], "502"), 0);
    let (to_terminating, failed) = terminating_requests(&s);
    assert_eq!(failed, 0);
    assert!(
        to_terminating > 50,
        "the LB still sent to them, and they answered"
    );
}

#[test]
fn distroless_exec_hook_fails_and_the_errors_come_back() {
    let (code, s, events) = run("distroless");
    assert_eq!(code, 1);
    let failed_hooks = events
        .iter()
        .filter(|e| e["reason"] == "FailedPreStopHook")
        .count();
    assert_eq!(failed_hooks, 12, "one per old pod");
    let explanation = s["explanation"].to_string();
    assert!(
        explanation.contains("12× FailedPreStopHook (Warning)"),
        "{explanation}"
    );
    assert!(
        explanation.contains("rollout of revision 1: "),
        "{explanation}"
    );
    assert!(count(&s["totals"]["responses"], "502") > 50);
}

#[test]
fn in_app_drain_fixes_it_too() {
    let (code, s, _) = run("app-drain");
    assert_eq!(code, 0, "{}", s["explanation"]);
    assert_eq!(count(&s["totals"]["responses"], "502"), 0);
}

/// (fewest, most) routable targets from the `minRoutableTargets` expectation's evidence.
fn routable_targets(s: &serde_json::Value) -> (u64, u64) {
    let evidence = expectation(s, "minRoutableTargets")["evidence"]
        .as_str()
        .unwrap()
        .to_string();
    // "N routable targets at the window's start, fewest F (at Ts), most M"
    let number_after = |word: &str| -> u64 {
        let rest = &evidence[evidence.find(word).unwrap() + word.len()..];
        rest.split(|c: char| !c.is_ascii_digit())
            .find(|w| !w.is_empty())
            .unwrap()
            .parse()
            .unwrap()
    };
    (number_after("fewest "), number_after("most "))
}

#[test]
fn slow_registration_lets_the_rollout_outrun_the_load_balancer() {
    let (code, s, _) = run("slow-registration");
    assert_eq!(code, 1, "{}", s["explanation"]);
    // The old targets are gone before a new one is registered: the balancer has none and
    // answers 503 itself; the terminating pods still answer (the preStop sleep works).
    let (fewest, most) = routable_targets(&s);
    assert_eq!((fewest, most), (0, 12));
    assert!(
        count(&s["totals"]["responses"], "503") > 50,
        "{}",
        s["totals"]
    );
    assert_eq!(count(&s["totals"]["responses"], "502"), 0);
    let (_, failed) = terminating_requests(&s);
    assert_eq!(failed, 0);
    assert_eq!(expectation(&s, "rolloutDuration")["passed"], true);
}

#[test]
fn readiness_gate_holds_the_rollout_until_new_targets_are_healthy() {
    let (code, s, events) = run("readiness-gate");
    assert_eq!(code, 0, "{}", s["explanation"]);
    // Never fewer than the 12 desired targets; the surge (3) shows as up to 15.
    let (fewest, most) = routable_targets(&s);
    assert_eq!(fewest, 12);
    assert!((13..=15).contains(&most), "{most}");
    assert_eq!(count(&s["totals"]["responses"], "503"), 0);
    assert_eq!(count(&s["totals"]["responses"], "502"), 0);
    // Every pod of the new revision turned Ready only once the balancer had its target: the
    // rollout's 4 waves each wait out the 60 s registration.
    assert_eq!(expectation(&s, "rolloutDuration")["passed"], true);
    let created: std::collections::BTreeMap<String, f64> = events
        .iter()
        .filter(|e| e["event"] == "pod" && e["created"] == true && e["tS"].as_f64() > Some(0.0))
        .map(|e| {
            (
                e["pod"].as_str().unwrap().to_owned(),
                e["tS"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(created.len(), 12, "12 new pods");
    for (pod, at) in &created {
        let ready = events
            .iter()
            .find(|e| e["event"] == "endpoint" && e["pod"] == pod.as_str() && e["ready"] == true)
            .and_then(|e| e["tS"].as_f64())
            .unwrap_or_else(|| panic!("{pod} never turned ready"));
        // Not before the balancer registered it: 60 s of Kubernetes time, 6 s at scale 0.1
        // (less a clock reading's worth).
        assert!(
            ready - at >= 5.95,
            "{pod} ready {:.2}s after creation",
            ready - at
        );
    }
}

#[test]
fn readiness_gate_alone_leaves_the_502s_on_terminating_pods() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    // The gate without the preStop sleep: registration is no longer outrun, but a deleted pod
    // still stops at SIGTERM while the balancer sends to it for the 20 s deregistration lag.
    let code = run_variant_with(
        FILE,
        "readiness-gate",
        &["service.termination.preStop=null"],
        dir.path(),
    );
    let s = summary(dir.path());
    assert_eq!(code, 1, "{}", s["explanation"]);
    let (fewest, _) = routable_targets(&s);
    assert_eq!(fewest, 12, "the gate still holds the targets up");
    let bad_gateway = count(&s["totals"]["responses"], "502");
    assert!(bad_gateway > 50, "{}", s["totals"]);
    let (_, failed) = terminating_requests(&s);
    assert!(
        failed.abs_diff(bad_gateway) <= bad_gateway / 50,
        "502s: {bad_gateway}, failures on terminating pods: {failed}"
    );
}

//! The shipped autoscaler-blind-spot scenario end to end on the local target (incident 3):
//! each variant's exit code and signature in summary.json. The runs are serialized: the
//! scenario is about saturation, which a neighbour's CPU load would distort.

mod support;

use support::{ONE_AT_A_TIME, expectation, run_variant, summary};

const FILE: &str = "autoscaler-blind-spot.yaml";

fn run(variant: &str) -> (i32, serde_json::Value) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let code = run_variant(FILE, variant, dir.path());
    (code, summary(dir.path()))
}

fn series(s: &serde_json::Value, name: &str) -> Vec<f64> {
    s["series"][name]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

#[test]
fn destination_metric_misses_the_surge() {
    let (code, s) = run("incident");
    assert_eq!(code, 1, "{}", s["explanation"]);
    let replicas = expectation(&s, "maxReplicas");
    assert_eq!(replicas["passed"], false);
    assert!(replicas["observed"].as_f64().unwrap() < 12.0);
    // After the surge (second 6 on the scaled clock) demand holds at ~200 rps while the
    // processed rate collapses.
    let attempted = series(&s, "attempted");
    let processed = series(&s, "destinationRps");
    let after: Vec<usize> = (8..attempted.len().min(processed.len())).collect();
    let demand = after.iter().map(|&i| attempted[i]).sum::<f64>() / after.len() as f64;
    let worst = after
        .iter()
        .map(|&i| processed[i])
        .fold(f64::INFINITY, f64::min);
    assert!(demand > 150.0, "demand stays high: {demand}");
    assert!(
        worst < demand / 2.0,
        "processed falls below half the demand: {worst}"
    );
    assert!(s["totals"]["errorRate"].as_f64().unwrap() > 0.1);
    let explanation = s["explanation"].to_string();
    assert!(explanation.contains("autoscaler: 4 → "), "{explanation}");
    assert!(
        !explanation.contains("hints"),
        "no topology story without hints: {explanation}"
    );
}

#[test]
fn source_metric_scales_and_errors_recover() {
    let (code, s) = run("fixed");
    assert_eq!(code, 0, "{}", s["explanation"]);
    assert!(expectation(&s, "maxReplicas")["observed"].as_f64().unwrap() >= 12.0);
    assert_eq!(expectation(&s, "errorRate")["passed"], true);
    assert_eq!(expectation(&s, "timeToScaleUp")["passed"], true);
}

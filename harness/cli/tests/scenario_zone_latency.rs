//! scenarios/zone-latency.yaml end to end on the local target: without topology routing two
//! thirds of the requests cross zones, so the slowed links raise us-east-1a's p99, the cut
//! times its callers out and the cross-zone bytes cost money; with Topology Aware Routing or
//! PreferSameZone every request stays in its zone and every expectation holds.

mod support;

use serde_json::Value;
use support::{expectation, run_variant, summary};

fn run(variant: &str) -> (i32, Value) {
    let _one = support::ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let code = run_variant("zone-latency.yaml", variant, dir.path());
    (code, summary(dir.path()))
}

#[test]
fn without_topology_routing_the_zone_faults_cost_latency_errors_and_bytes() {
    let (code, s) = run("no-routing");
    assert_eq!(code, 1, "{:#}", s["explanation"]);
    // Seconds in summary.json. A cross-zone request pays a set-up round trip and the delay
    // each way: 4 × 25 ms.
    let p99 = expectation(&s, "latencyP99")["observed"].as_f64().unwrap();
    assert!(p99 >= 0.1, "p99 {p99} s");
    let errors = expectation(&s, "errorRate")["observed"].as_f64().unwrap();
    assert!((0.4..0.9).contains(&errors), "error rate {errors}");
    let cross = &s["crossZone"];
    let share = cross["share"].as_f64().unwrap();
    assert!((0.5..0.8).contains(&share), "{cross}");
    // The estimate follows from the bytes: bytes/s × 30 days at $0.01 per GB.
    let bytes = cross["bytes"].as_f64().unwrap();
    let monthly = bytes / cross["seconds"].as_f64().unwrap() * 2_592_000.0 / 1e9 * 0.01;
    assert!(bytes > 0.0);
    assert!(
        (cross["estimatedMonthlyUsd"].as_f64().unwrap() - monthly).abs() < 1e-9,
        "{cross}"
    );
    // Nothing was refused during the cut: the failures are timeouts.
    assert_eq!(s["totals"]["transportErrors"]["connect_refused"], 0);
}

#[test]
fn topology_aware_routing_and_prefer_same_zone_keep_traffic_in_its_zone() {
    for variant in ["topology-auto", "prefer-same-zone"] {
        let (code, s) = run(variant);
        assert_eq!(code, 0, "{variant}: {:#}", s["explanation"]);
        assert_eq!(
            s["crossZone"]["requests"], 0,
            "{variant}: {}",
            s["crossZone"]
        );
        assert_eq!(s["crossZone"]["estimatedMonthlyUsd"], 0.0, "{variant}");
        assert_eq!(s["totals"]["errorRate"], 0.0, "{variant}");
    }
}

//! Traffic between zones end to end on the local target (scenarios/testdata/
//! valid-zone-metrics.yaml): callers in two zones, one pod in each and no topology routing, so
//! about half of the answers cross. summary.json carries the bytes of the traffic matrix and
//! `crossZone` — its split adds up, its share is its ratio, its cost is its rate at the
//! scenario's price — the expectations by zone are evaluated and named for their zones, and the
//! self-audit's byte and cross-zone checks held.

mod support;

use serde_json::Value;
use support::run_testdata as run;

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn cross_zone_bytes_share_and_cost_are_measured_and_audited() {
    let (code, s, _) = run("valid-zone-metrics.yaml");
    assert_eq!(code, 0, "{}", s["explanation"]);
    let audit = &s["audit"];
    assert_eq!(audit["held"], true, "{audit}");
    for invariant in [
        "bytesBySecondArePerPod",
        "matrixBytesAreZoneBytes",
        "crossZoneRecount",
        "crossZoneSplitIsAttributed",
        "crossZoneBytesSplit",
        "crossZoneShareIsRatio",
        "crossZoneCostIsRate",
    ] {
        let checks: Vec<&Value> = audit["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["invariant"] == invariant)
            .collect();
        assert!(!checks.is_empty(), "no {invariant} check");
        assert!(checks.iter().all(|c| c["status"] == "held"), "{checks:?}");
    }

    let c = &s["crossZone"];
    let (cross, same, attributed) = (
        u(&c["requests"]),
        u(&c["sameZoneRequests"]),
        u(&c["attributedRequests"]),
    );
    assert_eq!(cross + same, attributed);
    let matrix: u64 = s["trafficMatrix"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|row| row.as_object().unwrap().values().map(u))
        .sum();
    assert_eq!(attributed + u(&c["unzonedRequests"]), matrix);
    // 40 + 20 requests a second for 6 s, one pod per zone picked at random per connection.
    assert!(attributed >= 300, "{c}");
    let share = c["share"].as_f64().unwrap();
    assert!((0.2..=0.8).contains(&share), "{c}");
    assert!((share - cross as f64 / attributed as f64).abs() < 1e-12);
    // Every request is a GET head of some tens of bytes; every answer a head and a body.
    let (bytes, sent, received) = (u(&c["bytes"]), u(&c["bytesSent"]), u(&c["bytesReceived"]));
    assert_eq!(sent + received, bytes);
    assert!(sent >= 30 * cross && received >= 60 * cross, "{c}");
    let matrix_bytes: u64 = s["trafficBytes"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|row| {
            row.as_object()
                .unwrap()
                .values()
                .map(|b| u(&b["sent"]) + u(&b["received"]))
        })
        .sum();
    assert_eq!(
        bytes + u(&c["sameZoneBytes"]) + u(&c["unzonedBytes"]),
        matrix_bytes
    );
    // The scenario's price: $0.02 per GB; the estimate is the rate over 30 days.
    assert_eq!(c["pricePerGb"], 0.02);
    let seconds = c["seconds"].as_f64().unwrap();
    assert!((seconds - 6.0).abs() < 0.5, "{c}");
    let usd = c["estimatedMonthlyUsd"].as_f64().unwrap();
    let expected = bytes as f64 / seconds * 2_592_000.0 / 1e9 * 0.02;
    assert!(
        (usd - expected).abs() <= 1e-9 * expected,
        "{usd} vs {expected}"
    );

    // The expectations by zone, named for their zones and carrying them.
    let by_name = |name: &str| -> &Value {
        s["expectations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == name)
            .unwrap_or_else(|| panic!("no expectation {name}: {}", s["expectations"]))
    };
    let from_a = by_name("errorRate <= 0.01 from zone-a");
    assert_eq!(from_a["originZone"], "zone-a");
    assert!(
        from_a["evidence"]
            .as_str()
            .unwrap()
            .starts_with("callers in zone-a: ")
    );
    let to_a = by_name("latencyP99 <= 500ms to zone-a");
    assert_eq!(to_a["destinationZone"], "zone-a");
    assert!(
        to_a["evidence"]
            .as_str()
            .unwrap()
            .contains("from pods in zone-a"),
        "{to_a}"
    );
    let share_e = by_name("0.2 <= crossZoneShare <= 0.8");
    assert!((share_e["observed"].as_f64().unwrap() - share).abs() < 1e-12);
    let a_to_b = by_name("crossZoneShare <= 1 from zone-a to zone-b");
    assert_eq!(
        a_to_b["observed"], 1.0,
        "a's callers answered from b all cross"
    );
}

/// `--price-per-gb` is the scenario's `cost.pricePerGb` for one run: the estimate follows the
/// flag's price, and the generator through the load balancer is named as proxied.
#[test]
fn price_per_gb_flag_prices_the_run_and_proxied_callers_are_named() {
    let _one = support::ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    support::require_workload_bins();
    let dir = tempfile::tempdir().unwrap();
    let out = support::harness_command(&[
        "run",
        "scenarios/testdata/valid-all-processes.yaml",
        "--price-per-gb",
        "0.05",
        "--progress",
        "none",
        "--out",
    ])
    .arg(dir.path())
    .output()
    .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = support::summary(dir.path());
    let c = &s["crossZone"];
    assert_eq!(c["pricePerGb"], 0.05, "{c}");
    let (bytes, seconds) = (u(&c["bytes"]), c["seconds"].as_f64().unwrap());
    let expected = bytes as f64 / seconds * 2_592_000.0 / 1e9 * 0.05;
    let usd = c["estimatedMonthlyUsd"].as_f64().unwrap();
    assert!(
        (usd - expected).abs() <= 1e-9 * expected.max(1.0),
        "{usd} vs {expected}"
    );
    // via-lb goes through the balancer, via-proxy through kube-proxy.
    assert_eq!(c["proxied"]["generators"], serde_json::json!(["via-lb"]));
    let proxied = u(&c["proxied"]["requests"]);
    let matrix = u(&c["attributedRequests"]) + u(&c["unzonedRequests"]);
    assert!(proxied > 0 && proxied < matrix, "{c}");
    assert_eq!(s["audit"]["held"], true);

    // The flag and a --set of the same field are refused together.
    let both = support::harness(&[
        "run",
        "scenarios/testdata/valid-all-processes.yaml",
        "--price-per-gb",
        "0.05",
        "--set",
        "cost.pricePerGb=0.02",
    ]);
    assert_eq!(both.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&both.stderr).contains("give one"),
        "{}",
        String::from_utf8_lossy(&both.stderr)
    );
}

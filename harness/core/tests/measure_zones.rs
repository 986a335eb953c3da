//! Traffic between zones with worked numbers: the traffic matrix's bytes, the cross-zone split
//! and its estimated monthly cost, `crossZoneShare`, and `errorRate` and `latencyP99` by origin
//! and by destination zone; then properties of the split (same-zone + cross-zone + unzoned =
//! the matrix, for any matrix) and of the cost (doubling every byte doubles it).

use std::collections::BTreeMap;

use harness_core::measure::*;
use harness_core::scenario::{Metric, ZoneSlice};
use harness_core::verdict::evaluate::measure_sliced;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use proptest::prelude::*;
use workload_contract::loadgen::Report;
use workload_contract::loadgen::report::{BackendReport, ByteCounts, TimelineRow};

fn map(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

fn b(sent: u64, received: u64) -> ByteCounts {
    ByteCounts { sent, received }
}

/// A second of one generator: responses per pod (all 200 but `failed`, which are 503), bytes
/// of 100 B sent and 1,000 B received per response, and its p99.
fn second(t: u64, pods: &[(&str, u64)], failed: &[(&str, u64)], p99: f64) -> TimelineRow {
    let ok: u64 =
        pods.iter().map(|(_, n)| n).sum::<u64>() - failed.iter().map(|(_, n)| n).sum::<u64>();
    let bad: u64 = failed.iter().map(|(_, n)| n).sum();
    let mut responses = map(&[("200", ok)]);
    if bad > 0 {
        responses.insert("503".into(), bad);
    }
    TimelineRow {
        t,
        attempted: ok + bad,
        responses,
        by_backend: map(pods),
        non_2xx_by_backend: map(failed),
        bytes_by_backend: pods
            .iter()
            .map(|(p, n)| (p.to_string(), b(100 * n, 1_000 * n)))
            .collect(),
        latency_ms_p99: Some(p99),
        ..TimelineRow::default()
    }
}

/// Latencies (ms, count) encoded as loadgen encodes a pod's histogram.
fn histogram(samples: &[(u64, u64)]) -> String {
    use base64::Engine as _;
    let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
    for (ms, n) in samples {
        h.record_n(ms * 1000, *n).unwrap();
    }
    let mut out = Vec::new();
    V2DeflateSerializer::new().serialize(&h, &mut out).unwrap();
    base64::engine::general_purpose::STANDARD.encode(out)
}

fn backend(requests: u64, samples: &[(u64, u64)]) -> BackendReport {
    BackendReport {
        requests,
        responses: map(&[("200", requests)]),
        histogram: histogram(samples),
        ..BackendReport::default()
    }
}

fn pod(name: &str, zone: &str) -> PodRun {
    PodRun {
        name: name.into(),
        node: format!("n-{zone}"),
        zone: zone.into(),
        max_concurrency: 0,
        samples: Vec::new(),
    }
}

/// Three seconds, zones a and b, pods a-1 (a) and b-1 (b), a caller in each zone.
///
/// | second | ga → a-1 | ga → b-1 | gb → b-1 | gb → a-1 | gb → unknown |
/// |---|---|---|---|---|---|
/// | 0 | 80 | 20 (2 × 503) | 50 | 0 | 0 |
/// | 1 | 60 | 40 (8 × 503) | 40 | 10 | 0 |
/// | 2 | 100 | 0 | 30 | 20 (5 × 503) | 5 |
///
/// Whole run: ga got 240 from a-1 (same) and 60 from b-1 (cross); gb got 120 from b-1 (same),
/// 30 from a-1 (cross) and 5 from no pod. Cross-zone: 90 of 450 attributed = 0.2.
fn run() -> RunData {
    let ga = Report {
        timeline: vec![
            second(0, &[("a-1", 80), ("b-1", 20)], &[("b-1", 2)], 12.0),
            second(1, &[("a-1", 60), ("b-1", 40)], &[("b-1", 8)], 30.0),
            second(2, &[("a-1", 100)], &[], 8.0),
        ],
        // a-1: 98 × 10 ms and 2 × 200 ms; b-1: 60 × 25 ms (whole run, as loadgen keeps them).
        by_backend: BTreeMap::from([
            ("a-1".to_string(), backend(240, &[(10, 98), (200, 2)])),
            ("b-1".to_string(), backend(60, &[(25, 60)])),
        ]),
        ..Report::default()
    };
    let gb = Report {
        timeline: vec![
            second(0, &[("b-1", 50)], &[], 5.0),
            second(1, &[("b-1", 40), ("a-1", 10)], &[], 6.0),
            second(
                2,
                &[("b-1", 30), ("a-1", 20), ("unknown", 5)],
                &[("a-1", 5)],
                90.0,
            ),
        ],
        // a-1 from b's callers: 100 × 10 ms.
        by_backend: BTreeMap::from([
            ("a-1".to_string(), backend(30, &[(10, 100)])),
            ("b-1".to_string(), backend(120, &[(5, 120)])),
            ("unknown".to_string(), backend(5, &[(900, 5)])),
        ]),
        ..Report::default()
    };
    let gen_run = |name: &str, zone: &str, report| GeneratorRun {
        name: name.into(),
        zone: zone.into(),
        report,
    };
    RunData {
        duration_s: 3.0,
        generators: vec![gen_run("ga", "a", ga), gen_run("gb", "b", gb)],
        pods: vec![pod("a-1", "a"), pod("b-1", "b")],
        ..RunData::default()
    }
}

fn whole() -> Window {
    Window {
        from_s: 0.0,
        to_s: 3.0,
    }
}

fn slice(origin: Option<&str>, destination: Option<&str>) -> ZoneSlice {
    ZoneSlice {
        origin: origin.map(str::to_owned),
        destination: destination.map(str::to_owned),
    }
}

fn value(metric: Metric, window: Window, zones: ZoneSlice) -> Option<f64> {
    measure_sliced(metric, &run(), window, &zones).value
}

#[test]
fn the_matrix_splits_by_the_answering_pods_zone_with_bytes() {
    let r = run();
    let m = traffic_matrix(&r, whole());
    assert_eq!(m["a"]["b-1"].requests, 60);
    assert_eq!(m["a"]["b-1"].bytes, b(6_000, 60_000));
    assert_eq!(m["b"]["unknown"].requests, 5);
    let s = split(&m, &pod_zones(&r));
    // Same: 240 + 120 = 360 responses; cross: 60 + 30 = 90; unzoned: 5. 1,100 B each.
    assert_eq!(s.same.requests, 360);
    assert_eq!(s.cross.requests, 90);
    assert_eq!(s.unzoned.requests, 5);
    assert_eq!(s.cross.bytes, b(9_000, 90_000));
    assert_eq!(s.share(), Some(0.2));
    // 99,000 B in 3 s is 33,000 B/s: 85.536 GB in 30 days, $0.85536 at $0.01/GB.
    let usd = monthly_cost_usd(s.cross.bytes.total(), 3.0, 0.01).unwrap();
    assert!((usd - 0.855_36).abs() < 1e-12, "{usd}");
}

#[test]
fn cross_zone_share_whole_by_origin_by_destination_and_in_a_window() {
    assert_eq!(
        value(Metric::CrossZoneShare, whole(), slice(None, None)),
        Some(0.2)
    );
    // a's callers: 60 of 300.
    assert_eq!(
        value(Metric::CrossZoneShare, whole(), slice(Some("a"), None)),
        Some(0.2)
    );
    // b's callers: 30 of 150.
    assert_eq!(
        value(Metric::CrossZoneShare, whole(), slice(Some("b"), None)),
        Some(0.2)
    );
    // Answers from b-1: 60 from a's callers of 180.
    let to_b = value(Metric::CrossZoneShare, whole(), slice(None, Some("b"))).unwrap();
    assert!((to_b - 60.0 / 180.0).abs() < 1e-12, "{to_b}");
    // Second 2 alone: 20 (gb → a-1) of 150.
    let late = Window {
        from_s: 2.0,
        to_s: 3.0,
    };
    let share = value(Metric::CrossZoneShare, late, slice(None, None)).unwrap();
    assert!((share - 20.0 / 150.0).abs() < 1e-12, "{share}");
    // a's callers answered from a: none crossed.
    assert_eq!(
        value(Metric::CrossZoneShare, whole(), slice(Some("a"), Some("a"))),
        Some(0.0)
    );
    let evidence = measure_sliced(Metric::CrossZoneShare, &run(), whole(), &slice(None, None));
    assert_eq!(
        evidence.evidence,
        "90 of 450 attributed responses answered by a pod in another zone than the caller's \
         (360 same-zone; 5 named no pod of the run)"
    );
}

#[test]
fn error_rate_by_destination_counts_the_zones_pods_answers() {
    // Pods in b (b-1): 2 + 8 non-2xx of 20 + 40 + 50 + 40 + 30 = 180 answers.
    let to_b = value(Metric::ErrorRate, whole(), slice(None, Some("b"))).unwrap();
    assert!((to_b - 10.0 / 180.0).abs() < 1e-12, "{to_b}");
    // Pods in a: 5 of 270.
    let to_a = value(Metric::ErrorRate, whole(), slice(None, Some("a"))).unwrap();
    assert!((to_a - 5.0 / 270.0).abs() < 1e-12, "{to_a}");
    // a's callers answered by b: 10 of 60.
    let a_to_b = value(Metric::ErrorRate, whole(), slice(Some("a"), Some("b"))).unwrap();
    assert!((a_to_b - 10.0 / 60.0).abs() < 1e-12, "{a_to_b}");
    // In second 0 only: b-1 answered 70, 2 of them 503.
    let first = Window {
        from_s: 0.0,
        to_s: 1.0,
    };
    let r = value(Metric::ErrorRate, first, slice(None, Some("b"))).unwrap();
    assert!((r - 2.0 / 70.0).abs() < 1e-12, "{r}");
}

#[test]
fn error_rate_and_latency_by_origin_are_that_zones_callers() {
    // a's callers: 10 of 300 attempts failed.
    let from_a = value(Metric::ErrorRate, whole(), slice(Some("a"), None)).unwrap();
    assert!((from_a - 10.0 / 300.0).abs() < 1e-12, "{from_a}");
    // b's callers: 5 of 155.
    let from_b = value(Metric::ErrorRate, whole(), slice(Some("b"), None)).unwrap();
    assert!((from_b - 5.0 / 155.0).abs() < 1e-12, "{from_b}");
    // Worst per-second p99: a's 30 ms, b's 90 ms.
    assert_eq!(
        value(Metric::LatencyP99, whole(), slice(Some("a"), None)),
        Some(0.030)
    );
    assert_eq!(
        value(Metric::LatencyP99, whole(), slice(Some("b"), None)),
        Some(0.090)
    );
    let m = measure_sliced(Metric::LatencyP99, &run(), whole(), &slice(Some("a"), None));
    assert!(
        m.evidence.starts_with("callers in a: worst p99 30.0 ms"),
        "{}",
        m.evidence
    );
}

#[test]
fn latency_by_destination_merges_the_pods_histograms() {
    // Pods in a: a-1 from ga (98 × 10 ms, 2 × 200 ms) and from gb (100 × 10 ms): merged, 198 of
    // 200 samples are 10 ms, so the p99 (the 198th) is 10 ms — although ga's own p99 is 200 ms.
    let p99 = value(Metric::LatencyP99, whole(), slice(None, Some("a"))).unwrap();
    assert!((p99 - 0.010).abs() < 1e-5, "{p99}");
    // From a's callers only: 98 × 10 ms and 2 × 200 ms: the 99th percentile is 200 ms.
    let p99 = value(Metric::LatencyP99, whole(), slice(Some("a"), Some("a"))).unwrap();
    assert!((p99 - 0.200).abs() < 2e-4, "{p99}");
    // Pods in b: 60 × 25 ms and 120 × 5 ms: the 99th percentile is 25 ms. `unknown` (900 ms)
    // is no pod of the run.
    let p99 = value(Metric::LatencyP99, whole(), slice(None, Some("b"))).unwrap();
    assert!((p99 - 0.025).abs() < 2e-5, "{p99}");
    let m = measure_sliced(Metric::LatencyP99, &run(), whole(), &slice(None, Some("a")));
    assert!(
        m.evidence
            .starts_with("p99 10.0 ms over 200 responses from pods in a (a-1)"),
        "{}",
        m.evidence
    );
}

/// Any matrix: origins from 3 zones, pods from 5 (two of them without a zone), any counts.
fn matrices() -> impl Strategy<Value = TrafficMatrix> {
    let cell = (0u64..10_000, 0u64..1_000_000, 0u64..1_000_000).prop_map(|(n, s, r)| Traffic {
        requests: n,
        bytes: ByteCounts {
            sent: s,
            received: r,
        },
    });
    let pods = prop::collection::btree_map(
        prop::sample::select(vec!["p-a", "p-b", "p-c", "unknown", "(other)"])
            .prop_map(str::to_owned),
        cell,
        0..5,
    );
    prop::collection::btree_map(
        prop::sample::select(vec!["a", "b", "c"]).prop_map(str::to_owned),
        pods,
        0..3,
    )
}

fn zones() -> BTreeMap<String, String> {
    [("p-a", "a"), ("p-b", "b"), ("p-c", "c")]
        .map(|(p, z)| (p.to_owned(), z.to_owned()))
        .into()
}

proptest! {
    /// Same-zone + cross-zone + unzoned = every cell of the matrix, in responses and in bytes
    /// of each direction; the share is a fraction.
    #[test]
    fn the_split_adds_up_to_the_matrix(m in matrices()) {
        let s = split(&m, &zones());
        let mut total = Traffic::default();
        for pods in m.values() {
            for t in pods.values() {
                total += *t;
            }
        }
        prop_assert_eq!(s.total(), total);
        prop_assert_eq!(s.attributed(), s.same.requests + s.cross.requests);
        if let Some(share) = s.share() {
            prop_assert!((0.0..=1.0).contains(&share));
        } else {
            prop_assert_eq!(s.attributed(), 0);
        }
    }

    /// Doubling every byte count of the matrix doubles the cross-zone bytes and the cost; the
    /// responses and the share stay as they were.
    #[test]
    fn doubling_every_byte_doubles_the_cost(m in matrices(), seconds in 0.5f64..3_600.0, price in 0.0f64..0.1) {
        let doubled: TrafficMatrix = m
            .iter()
            .map(|(zone, pods)| {
                let pods = pods
                    .iter()
                    .map(|(pod, t)| {
                        let bytes = ByteCounts { sent: 2 * t.bytes.sent, received: 2 * t.bytes.received };
                        (pod.clone(), Traffic { requests: t.requests, bytes })
                    })
                    .collect();
                (zone.clone(), pods)
            })
            .collect();
        let (s, d) = (split(&m, &zones()), split(&doubled, &zones()));
        prop_assert_eq!(d.cross.bytes.total(), 2 * s.cross.bytes.total());
        prop_assert_eq!(d.share(), s.share());
        let cost = monthly_cost_usd(s.cross.bytes.total(), seconds, price).unwrap();
        let twice = monthly_cost_usd(d.cross.bytes.total(), seconds, price).unwrap();
        prop_assert!((twice - 2.0 * cost).abs() <= 1e-9 * cost.max(1e-9), "{} vs {}", twice, cost);
    }
}

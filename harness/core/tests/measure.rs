//! Measurements over windows on a hand-built run whose numbers are worked out in comments.

use std::collections::BTreeMap;

use harness_core::measure::*;
use workload_contract::loadgen::Report;
use workload_contract::loadgen::report::TimelineRow;

fn second(
    t: u64,
    ok: u64,
    e503: u64,
    timeouts: u64,
    pods: &[(&str, u64)],
    p99: f64,
) -> TimelineRow {
    let mut responses = BTreeMap::new();
    responses.insert("200".to_string(), ok);
    if e503 > 0 {
        responses.insert("503".to_string(), e503);
    }
    let mut transport_errors = BTreeMap::new();
    if timeouts > 0 {
        transport_errors.insert("timeout".to_string(), timeouts);
    }
    TimelineRow {
        t,
        attempted: ok + e503 + timeouts,
        responses,
        transport_errors,
        dropped: 0,
        by_backend: pods.iter().map(|(p, n)| (p.to_string(), *n)).collect(),
        latency_ms_p99: Some(p99),
        histogram: None,
        ..TimelineRow::default()
    }
}

fn sample(t_s: f64, ready: bool, in_flight: u64, admitted: u64, full: u64) -> PodSample {
    PodSample {
        t_s,
        ready,
        in_flight,
        queue_depth: 0,
        received: 0,
        admitted,
        rejected_queue_full: full,
        rejected_queue_timeout: 0,
    }
}

/// Four seconds, two generators-worth of data in one generator that started 1 s after the
/// load start. Pods: a (busy), b (busy), c (idle), d (unready the whole time: not eligible).
fn run() -> RunData {
    let timeline = vec![
        // run second 1: 100 ok split a/b
        second(0, 100, 0, 0, &[("a", 50), ("b", 50)], 20.0),
        // run second 2: 90 ok + 10 503 (a 50, b 49, c 1)
        second(1, 90, 10, 0, &[("a", 50), ("b", 49), ("c", 1)], 40.0),
        // run second 3: 80 ok + 20 timeouts
        second(2, 80, 0, 20, &[("a", 40), ("b", 40)], 900.0),
    ];
    // Sidecar arrivals (cumulative at t = 0, 1, 2, 3) match the responses above.
    let arrivals = |name: &str| -> [u64; 4] {
        match name {
            "a" => [0, 50, 100, 140],
            "b" => [0, 50, 99, 139],
            "c" => [0, 0, 1, 1],
            _ => [0; 4],
        }
    };
    let pod = |name: &str, ready: bool, in_flight: u64| PodRun {
        name: name.into(),
        node: "n".into(),
        zone: "z".into(),
        max_concurrency: 8,
        samples: (0..4)
            .map(|i| PodSample {
                received: arrivals(name)[i],
                ..sample(i as f64, ready, in_flight, 10 * i as u64, i as u64)
            })
            .collect(),
    };
    RunData {
        load_started_unix_ms: 1_000_000,
        duration_s: 4.0,
        generators: vec![GeneratorRun {
            name: "g".into(),
            zone: "z".into(),
            report: Report {
                started_at_unix_ms: 1_001_000,
                timeline,
                ..Report::default()
            },
        }],
        pods: vec![
            pod("a", true, 8),
            pod("b", true, 6),
            pod("c", true, 0),
            pod("d", false, 0),
        ],
        events: vec![
            hints(0.5, true),
            hints(1.5, false),
            hints(2.5, true),
            hints(2.6, true),
        ],
        lb: Vec::new(),
        lb_routable: Vec::new(),
        lb_accounts: Default::default(),
        counters_cut: Default::default(),
    }
}

fn hints(t_s: f64, enabled: bool) -> RecordedEvent {
    RecordedEvent {
        t_s,
        kind: EventKind::Hints {
            enabled,
            for_zones: BTreeMap::new(),
        },
    }
}

#[test]
fn error_rates_count_each_kind_in_the_window() {
    let run = run();
    let whole = Window::whole(&run);
    // 300 attempts: 10 × 503 + 20 timeouts = 30 errors.
    assert_eq!(error_rate(&run, whole).value, Some(0.1));
    assert_eq!(http_5xx_rate(&run, whole).value, Some(10.0 / 300.0));
    assert_eq!(timeout_rate(&run, whole).value, Some(20.0 / 300.0));
    assert_eq!(transport_error_rate(&run, whole).value, Some(20.0 / 300.0));
    let evidence = error_rate(&run, whole).evidence;
    assert_eq!(evidence, "30 of 300 attempts failed: 10× 503, 20× timeout");
    // Generator started 1 s late: its first row is run second 1, so [0, 2) holds one row.
    let early = Window {
        from_s: 0.0,
        to_s: 2.0,
    };
    assert_eq!(error_rate(&run, early).value, Some(0.0));
    assert_eq!(outcomes(&run, early).attempted, 100);
    // A window with no rows has no value (not zero).
    assert_eq!(
        error_rate(
            &run,
            Window {
                from_s: 10.0,
                to_s: 12.0
            }
        )
        .value,
        None
    );
}

#[test]
fn warmup_rows_before_the_load_start_are_not_counted() {
    let mut run = run();
    // The generator started 2 s before the measured load: its rows 0 and 1 were warm-up.
    run.generators[0].report.started_at_unix_ms = 998_000;
    let o = outcomes(&run, Window::whole(&run));
    assert_eq!(o.attempted, 100, "only row 2 (run second 0) counts");
    assert_eq!(o.transport_errors["timeout"], 20);
}

#[test]
fn skew_uses_ready_pods_and_flags_starved_ones() {
    let run = run();
    let s = skew(&run, Window::whole(&run));
    // Eligible: a, b, c (d was never ready). a=140 b=139 c=1; mean = 280/3.
    assert_eq!(s.requests.len(), 3);
    assert_eq!(s.requests["c"], 1);
    assert_eq!(s.starved, vec!["c".to_string()]);
    let mean = 280.0 / 3.0;
    assert!((s.max_mean.unwrap() - 140.0 / mean).abs() < 1e-9);
    let var = ((140.0 - mean).powi(2) + (139.0 - mean).powi(2) + (1.0 - mean).powi(2)) / 3.0;
    assert!((s.cv.unwrap() - var.sqrt() / mean).abs() < 1e-9);
    assert_eq!(starved_pods(&run, Window::whole(&run)).value, Some(1.0));
}

#[test]
fn a_pod_whose_requests_all_hang_is_saturated_not_starved() {
    let mut run = run();
    // Pod b answered nothing (every request timed out in its queue), but 139 reached it.
    for row in &mut run.generators[0].report.timeline {
        row.by_backend.remove("b");
    }
    assert_eq!(responses_per_pod(&run, Window::whole(&run)).get("b"), None);
    let s = skew(&run, Window::whole(&run));
    assert_eq!(s.requests["b"], 139);
    assert_eq!(s.starved, vec!["c".to_string()]);
}

#[test]
fn pods_ready_for_less_than_half_the_window_are_not_eligible() {
    let mut run = run();
    // c was ready only at t=3: 1 of 4 seconds.
    for (i, s) in run.pods[2].samples.iter_mut().enumerate() {
        s.ready = i == 3;
    }
    assert_eq!(eligible_pods(&run, Window::whole(&run)), vec!["a", "b"]);
    assert_eq!(
        skew(&run, Window::whole(&run)).starved,
        Vec::<String>::new()
    );
}

#[test]
fn latency_is_the_worst_second_p99_in_seconds() {
    let run = run();
    let m = latency_p99(&run, Window::whole(&run));
    assert_eq!(m.value, Some(0.9));
    assert!(m.evidence.contains("second 3"), "{}", m.evidence);
    assert_eq!(
        latency_p99(
            &run,
            Window {
                from_s: 0.0,
                to_s: 3.0
            }
        )
        .value,
        Some(0.04)
    );
}

#[test]
fn flaps_count_transitions_only() {
    let run = run();
    // on(0.5) → off(1.5) → on(2.5) → on(2.6): two transitions.
    assert_eq!(hint_flaps(&run, Window::whole(&run)).value, Some(2.0));
    assert_eq!(
        hint_flaps(
            &run,
            Window {
                from_s: 2.0,
                to_s: 4.0
            }
        )
        .value,
        Some(1.0)
    );
    assert_eq!(
        hint_flaps(&run, Window::whole(&run)).evidence,
        "hints switched off at 1.5s (for 1.0s), on at 2.5s (for 1.5s, to the end)"
    );
}

#[test]
fn an_off_and_on_at_the_same_instant_is_no_flap() {
    let mut run = run();
    // One action removes the hints and a later step of it brings them back, both recorded
    // at 1.5 s: one sync of the controller would have seen only the net state.
    let at = run.events.iter().position(|e| e.t_s == 1.5).unwrap();
    run.events.insert(at + 1, hints(1.5, true));
    let m = hint_flaps(&run, Window::whole(&run));
    assert_eq!(m.value, Some(0.0), "{}", m.evidence);
}

#[test]
fn saturation_and_rejections_come_from_sidecar_samples() {
    let run = run();
    let whole = Window::whole(&run);
    let sat = max_saturation(&run, whole);
    assert_eq!(sat.value, Some(1.0));
    assert!(sat.evidence.starts_with("a at 100%"));
    // Per pod over [0, 4]: admitted 0→30, queue-full 0→3; 4 pods → 120 admitted, 12 rejected.
    let rej = rejected_rate(&run, whole);
    assert_eq!(rej.value, Some(12.0 / 132.0));
}

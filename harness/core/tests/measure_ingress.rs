//! The ingress measurements on a hand-built run: two replicas with four pods, a reload that
//! changes one replica's order at 2 s, a restart, a readiness failure and a deletion, and the
//! sidecars' arrival counters — requests by list position, Spearman's ρ, the first positions'
//! share, readiness flips and restarts, worked by hand.

use harness_core::measure::*;

fn ev(t_s: f64, kind: EventKind) -> RecordedEvent {
    RecordedEvent { t_s, kind }
}

fn listed(replica: u32, change: IngressChange, servers: &[&str]) -> EventKind {
    EventKind::Ingress {
        replica,
        change,
        cause: IngressCause::Rewrite,
        servers: servers.iter().map(|s| (*s).to_owned()).collect(),
    }
}

/// A pod whose sidecar counted `per_second[i]` arrivals in second i (samples at whole seconds).
fn pod(name: &str, per_second: &[u64]) -> PodRun {
    let mut received = 0;
    let mut samples = vec![PodSample {
        t_s: 0.0,
        ready: true,
        ..PodSample::default()
    }];
    for (i, n) in per_second.iter().enumerate() {
        received += n;
        samples.push(PodSample {
            t_s: (i + 1) as f64,
            ready: true,
            received,
            ..PodSample::default()
        });
    }
    PodRun {
        name: name.into(),
        node: "n".into(),
        zone: "z".into(),
        max_concurrency: 1,
        samples,
    }
}

fn run() -> RunData {
    RunData {
        duration_s: 4.0,
        pods: vec![
            pod("pod-a", &[10, 10, 4, 4]),
            pod("pod-b", &[6, 6, 10, 10]),
            pod("pod-c", &[3, 3, 3, 3]),
            pod("pod-d", &[1, 1, 1, 1]),
        ],
        events: vec![
            ev(
                -3.0,
                listed(
                    0,
                    IngressChange::Start,
                    &["pod-a", "pod-b", "pod-c", "pod-d"],
                ),
            ),
            ev(
                -3.0,
                listed(
                    1,
                    IngressChange::Start,
                    &["pod-a", "pod-b", "pod-c", "pod-d"],
                ),
            ),
            // From 2 s both replicas put pod-b first (replica 0 by a reload, 1 by a restart).
            ev(
                1.5,
                listed(
                    0,
                    IngressChange::Reload,
                    &["pod-b", "pod-a", "pod-c", "pod-d"],
                ),
            ),
            ev(
                1.5,
                listed(
                    1,
                    IngressChange::Restart,
                    &["pod-b", "pod-a", "pod-c", "pod-d"],
                ),
            ),
            ev(
                2.5,
                EventKind::Endpoint {
                    pod: "pod-a".into(),
                    ready: false,
                },
            ),
            // A deletion leaves the endpoints too, but is no readiness failure.
            ev(
                3.5,
                EventKind::Termination {
                    pod: "pod-d".into(),
                    stage: TerminationStage::Deleted,
                },
            ),
            ev(
                3.5,
                EventKind::Endpoint {
                    pod: "pod-d".into(),
                    ready: false,
                },
            ),
        ],
        ..RunData::default()
    }
}

#[test]
fn requests_count_for_the_position_their_pod_had_that_second() {
    let shares = position_shares(&run(), Window::whole(&run()));
    // Seconds 0-1: a b c d at positions 1-4 → 10 6 3 1 (twice). Seconds 2-3: b a c d →
    // b's 10, a's 4, c's 3, d's 1 (twice). Position 1: 10+10+10+10 = 40; 2: 6+6+4+4 = 20;
    // 3: 12; 4: 4.
    assert_eq!(shares.by_rank, vec![40, 20, 12, 4]);
    assert_eq!(shares.total(), 76);
    // Four positions: the first quarter is one position: 40 / 76.
    assert_eq!(shares.k(), 1);
    assert!((shares.first_k_share().unwrap() - 40.0 / 76.0).abs() < 1e-12);
    // Strictly falling with position: ρ = -1.
    assert_eq!(shares.rank_correlation(), Some(-1.0));
    let (a_requests, a_rank) = shares.by_pod["pod-a"];
    assert_eq!(a_requests, 28);
    assert_eq!(a_rank, 1.5, "first for two seconds, second for two");
    let m = first_positions_share(&run(), Window::whole(&run()));
    assert!(m.evidence.contains("#1 53%"), "{}", m.evidence);
}

#[test]
fn readiness_flips_leave_deletions_out_and_restarts_are_counted() {
    let whole = Window::whole(&run());
    let flips = readiness_flips(&run(), whole);
    assert_eq!(flips.value, Some(1.0), "{}", flips.evidence);
    assert!(flips.evidence.contains("pod-a 1"), "{}", flips.evidence);
    assert_eq!(readiness_flip_times(&run(), whole)["pod-a"], vec![2.5]);
    let restarts = ingress_restarts(&run(), whole);
    assert_eq!(restarts.value, Some(1.0));
    assert!(
        restarts
            .evidence
            .starts_with("1 restarts, 1 reloads and 0 runtime-API updates over 2 replicas"),
        "{}",
        restarts.evidence
    );
    // Before the reloads, nothing restarted.
    let early = Window {
        from_s: 0.0,
        to_s: 1.0,
    };
    assert_eq!(ingress_restarts(&run(), early).value, Some(0.0));
    // A run without ingress replicas measures nothing.
    let none = RunData {
        duration_s: 4.0,
        ..RunData::default()
    };
    assert_eq!(ingress_restarts(&none, whole).value, None);
}

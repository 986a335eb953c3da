//! Lifecycle measurements on a hand-built run: a pod deleted at 10 s that the load balancer
//! kept sending to, a rollout, and an autoscaler that scales up once.

use harness_core::measure::*;

fn ev(t_s: f64, kind: EventKind) -> RecordedEvent {
    RecordedEvent { t_s, kind }
}

fn bucket(pod: &str, t_s: f64, requests: u64, failed: u64) -> LbBucket {
    LbBucket {
        pod: pod.into(),
        t_s,
        width_s: 0.5,
        requests,
        failed,
    }
}

fn pod(name: &str, created: bool) -> EventKind {
    EventKind::Pod {
        pod: name.into(),
        node: "n".into(),
        zone: "z".into(),
        created,
    }
}

fn run() -> RunData {
    RunData {
        duration_s: 30.0,
        events: vec![
            ev(-1.0, pod("pod-0", true)),
            ev(-1.0, pod("pod-1", true)),
            ev(
                5.0,
                EventKind::Rollout {
                    revision: 1,
                    stage: RolloutStage::Started,
                },
            ),
            ev(6.0, pod("pod-2", true)),
            ev(10.0, pod("pod-0", false)),
            ev(
                10.0,
                EventKind::Termination {
                    pod: "pod-0".into(),
                    stage: TerminationStage::Deleted,
                },
            ),
            ev(
                12.0,
                EventKind::Autoscaler {
                    current: 2,
                    desired: 2,
                    source_rps: 50.0,
                    destination_rps: 20.0,
                    destination_by_pod: Default::default(),
                },
            ),
            ev(
                14.0,
                EventKind::Autoscaler {
                    current: 2,
                    desired: 5,
                    source_rps: 90.0,
                    destination_rps: 20.0,
                    destination_by_pod: Default::default(),
                },
            ),
            ev(
                20.0,
                EventKind::Rollout {
                    revision: 1,
                    stage: RolloutStage::Complete,
                },
            ),
        ],
        lb: vec![
            bucket("pod-0", 9.5, 50, 0),   // before the deletion: not counted
            bucket("pod-0", 10.0, 40, 0),  // served during the preStop sleep
            bucket("pod-0", 12.0, 30, 30), // the process is gone: all 502
            bucket("pod-1", 12.0, 70, 1),  // not terminating: not counted
        ],
        ..RunData::default()
    }
}

fn whole() -> Window {
    Window {
        from_s: 0.0,
        to_s: 30.0,
    }
}

#[test]
fn requests_and_errors_after_removal_come_from_terminating_pods_only() {
    let run = run();
    let m = requests_after_removal(&run, whole());
    assert_eq!(m.value, Some(70.0));
    assert_eq!(m.evidence, "pod-0 70 (30 failed)");
    assert_eq!(
        termination_error_rate(&run, whole()).value,
        Some(30.0 / 70.0)
    );
    // Without load balancer data nothing can be attributed: no value, so an expectation fails.
    let mut no_lb = run.clone();
    no_lb.lb.clear();
    assert_eq!(termination_error_rate(&no_lb, whole()).value, None);
}

#[test]
fn rollout_duration_runs_from_start_to_completion() {
    let run = run();
    assert_eq!(rollout_duration(&run, whole()).value, Some(15.0));
    let late = Window {
        from_s: 6.0,
        to_s: 30.0,
    };
    assert_eq!(
        rollout_duration(&run, late).value,
        None,
        "started before the window"
    );
}

#[test]
fn time_to_scale_up_and_replica_bounds() {
    let run = run();
    let m = time_to_scale_up(
        &run,
        Window {
            from_s: 4.0,
            to_s: 30.0,
        },
    );
    assert_eq!(m.value, Some(10.0));
    assert_eq!(m.evidence, "first scale-up 2 → 5 at 14.0s");
    let none = time_to_scale_up(
        &run,
        Window {
            from_s: 0.0,
            to_s: 13.0,
        },
    );
    assert_eq!(none.value, None);
    assert!(
        none.evidence
            .contains("demand 50 rps at the source, 20 rps processed"),
        "{}",
        none.evidence
    );
    // Replicas: 2 at the start, 3 at 6 s, 2 at 10 s.
    assert_eq!(max_replicas(&run, whole()).value, Some(3.0));
    assert_eq!(
        min_replicas(
            &run,
            Window {
                from_s: 0.0,
                to_s: 8.0
            }
        )
        .value,
        Some(2.0)
    );
}

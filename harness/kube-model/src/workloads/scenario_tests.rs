//! The incident's numbers through the rollout and termination models: a 12-replica rollout with
//! maxSurge 25% and maxUnavailable 0, and pod termination with and without a preStop sleep
//! (the load balancer side is in `lb_scenario_tests`).

use std::collections::BTreeMap;
use std::time::Duration;

use super::*;

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

fn incident_spec(min_ready: u64) -> RolloutSpec {
    RolloutSpec {
        replicas: 12,
        max_surge: IntOrPercent::percent(25),
        max_unavailable: IntOrPercent::Int(0),
        min_ready_seconds: secs(min_ready),
    }
}

fn old_pods(n: usize) -> Vec<PodView> {
    (0..n)
        .map(|i| PodView {
            name: format!("old-{i:02}"),
            revision: Revision::Old,
            created_at: Duration::ZERO,
            ready_since: Some(secs(i as u64)),
            terminating: false,
        })
        .collect()
}

/// Drives the rollout second by second: new pods turn ready `startup` after creation, deleted
/// pods linger `linger` (terminating) before they disappear. Checks the invariants each step and
/// returns (completion time, actions, most pods alive at once including terminating ones).
fn drive(spec: &RolloutSpec, startup: u64, linger: u64) -> (Duration, Vec<RolloutAction>, usize) {
    let mut pods = old_pods(12);
    let mut deleted_at: BTreeMap<String, Duration> = BTreeMap::new();
    let mut actions = Vec::new();
    let mut created = 0;
    let mut max_alive = 0;
    for t in 100..2_000u64 {
        let now = secs(t);
        for p in pods.iter_mut() {
            if p.revision == Revision::New && p.ready_since.is_none() {
                let ready_at = p.created_at + secs(startup);
                if now >= ready_at {
                    p.ready_since = Some(ready_at);
                }
            }
        }
        pods.retain(|p| {
            deleted_at
                .get(&p.name)
                .is_none_or(|d| now < *d + secs(linger))
        });
        for action in reconcile(spec, &pods, now) {
            match &action {
                RolloutAction::CreateNew(n) => {
                    for _ in 0..*n {
                        pods.push(PodView {
                            name: format!("new-{created:02}"),
                            revision: Revision::New,
                            created_at: now,
                            ready_since: None,
                            terminating: false,
                        });
                        created += 1;
                    }
                }
                RolloutAction::DeleteOld(names) | RolloutAction::DeleteNew(names) => {
                    for p in pods.iter_mut().filter(|p| names.contains(&p.name)) {
                        p.terminating = true;
                        deleted_at.insert(p.name.clone(), now);
                    }
                }
            }
            actions.push(action);
        }
        let s = status(spec, &pods, now);
        assert!(s.replicas <= 15, "t={t}: {} active pods", s.replicas);
        assert!(
            s.available_replicas >= 12,
            "t={t}: {} available",
            s.available_replicas
        );
        max_alive = max_alive.max(pods.len());
        if is_complete(spec, &pods, now) {
            return (now, actions, max_alive);
        }
    }
    panic!("rollout did not complete: {actions:?}");
}

#[test]
fn incident_rollout_surges_three_and_never_drops_below_twelve() {
    let spec = incident_spec(0);
    assert_eq!(spec.resolved_max_surge(), 3);
    assert_eq!(spec.resolved_max_unavailable(), 0);
    let (done_at, actions, max_alive) = drive(&spec, 5, 30);
    // Four waves: +3 new, wait until available, -3 old, +3 new, ...
    assert_eq!(actions.first(), Some(&RolloutAction::CreateNew(3)));
    let created: u32 = actions
        .iter()
        .map(|a| match a {
            RolloutAction::CreateNew(n) => *n,
            _ => 0,
        })
        .sum();
    let deleted: usize = actions
        .iter()
        .map(|a| match a {
            RolloutAction::DeleteOld(v) => v.len(),
            _ => 0,
        })
        .sum();
    assert_eq!((created, deleted), (12, 12));
    assert!(actions.iter().all(|a| match a {
        RolloutAction::CreateNew(n) => *n == 3,
        RolloutAction::DeleteOld(v) => v.len() == 3,
        RolloutAction::DeleteNew(_) => false,
    }));
    // Each wave: created at w, ready at w+5, old deleted at w+5, next wave at w+6.
    assert_eq!(done_at, secs(100 + 4 * 6 - 1));
    // Terminating pods are not counted by the controller: with 30 s of termination the node
    // runs more than replicas + maxSurge pods at once.
    assert_eq!(max_alive, 24);
}

#[test]
fn min_ready_seconds_delays_old_pod_deletion() {
    let spec = incident_spec(10);
    let (done_at, actions, _) = drive(&spec, 5, 30);
    assert_eq!(actions.len(), 8);
    // Ready at w+5, available once ready for more than 10 s: at w+16 on a 1 s step.
    assert_eq!(done_at, secs(100 + 4 * 17 - 1));
}

#[test]
fn unready_old_pods_are_deleted_first() {
    let spec = incident_spec(0);
    let mut pods = old_pods(12);
    pods[3].ready_since = None;
    pods[7].ready_since = None;
    pods[11].ready_since = Some(secs(99));
    let now = secs(100);
    assert_eq!(reconcile(&spec, &pods, now), [RolloutAction::CreateNew(3)]);
    pods.extend((0..3).map(|i| PodView {
        name: format!("new-{i}"),
        revision: Revision::New,
        created_at: now,
        ready_since: None,
        terminating: false,
    }));
    // Not yet available: nothing may go, not even the unready old pods (the budget
    // 15 - 12 - 3 unavailable new pods is 0).
    assert!(reconcile(&spec, &pods, now + secs(4)).is_empty());
    for p in pods.iter_mut().filter(|p| p.revision == Revision::New) {
        p.ready_since = Some(now + secs(5));
    }
    // Available: budget 3; the 2 unavailable old replicas are cleaned up and 1 more goes
    // within maxUnavailable. The ReplicaSet deletes the unready pods, then the most recently
    // ready one: old-11 (ready 6 s, log2 bucket 32) before the others (94-105 s, bucket 36,
    // ordered among themselves by UID).
    let actions = reconcile(&spec, &pods, now + secs(5));
    assert_eq!(
        actions,
        [RolloutAction::DeleteOld(vec![
            "old-03".into(),
            "old-07".into(),
            "old-11".into()
        ])]
    );
    pods[11].ready_since = Some(secs(11));
    let actions = reconcile(&spec, &pods, now + secs(5));
    assert_eq!(
        actions,
        [RolloutAction::DeleteOld(vec![
            "old-03".into(),
            "old-07".into(),
            "old-00".into()
        ])]
    );
}

#[test]
fn incident_termination_without_prestop() {
    let t = secs(1000);
    let plan = termination_plan(&TerminationSpec::new(secs(30), PreStop::None), t);
    assert_eq!(plan.endpoint_removed_at, t);
    assert_eq!(plan.sigterm_at, t);
    assert_eq!(plan.sigkill_at, t + secs(30));
    assert_eq!(plan.events.len(), 1);
    assert_eq!(plan.events[0].reason, termination::REASON_KILLING);
    assert_eq!(plan.events[0].message, "Stopping container app");
}

#[test]
fn fix_prestop_sleep_30_with_grace_60() {
    let t = secs(1000);
    let plan = termination_plan(
        &TerminationSpec::new(secs(60), PreStop::Sleep { seconds: 30 }),
        t,
    );
    assert_eq!(plan.pre_stop, PreStopOutcome::Completed);
    assert_eq!(plan.endpoint_removed_at, t);
    assert_eq!(plan.prestop_end_at, t + secs(30));
    assert_eq!(plan.sigterm_at, t + secs(30));
    assert_eq!(plan.sigkill_at, t + secs(60));
    assert!(plan.accepts_requests(t + secs(29)));
    assert!(!plan.accepts_requests(t + secs(30)));
}

#[test]
fn distroless_exec_sleep_fails_at_once() {
    let t = secs(1000);
    let mut spec = TerminationSpec::new(
        secs(60),
        PreStop::Exec {
            command: vec!["sleep".into(), "30".into()],
            runs_for: secs(30),
        },
    );
    spec.image_has_shell = false;
    let plan = termination_plan(&spec, t);
    assert_eq!(plan.pre_stop, PreStopOutcome::Failed);
    let warning = &plan.events[1];
    assert_eq!(warning.at, t);
    assert_eq!(warning.event_type, crate::EventType::Warning);
    assert_eq!(warning.reason, "FailedPreStopHook");
    assert_eq!(warning.message, "PreStopHook failed");
    assert_eq!((plan.sigterm_at, plan.sigkill_at), (t, t + secs(60)));
}

#[test]
fn prestop_longer_than_grace_gets_the_two_second_floor() {
    let t = secs(1000);
    let plan = termination_plan(
        &TerminationSpec::new(secs(60), PreStop::Sleep { seconds: 90 }),
        t,
    );
    assert_eq!(plan.pre_stop, PreStopOutcome::TimedOut);
    assert_eq!(plan.sigterm_at, t + secs(60));
    assert_eq!(plan.stop_grace, secs(2));
    assert_eq!(plan.sigkill_at, t + secs(62));
}

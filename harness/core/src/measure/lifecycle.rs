//! Measurements of pod lifecycles: requests that reached pods after their endpoint was
//! removed and the errors among them (from the load balancer's per-pod accounting and the
//! termination events), rollout duration, and the autoscaler's reaction (time to the first
//! scale-up, replicas over a window).

use std::collections::BTreeMap;

use super::{EventKind, Measured, RolloutStage, RunData, TerminationStage, Window};

/// When each pod left the ready endpoints because it was deleted.
pub fn deletion_times(run: &RunData) -> BTreeMap<String, f64> {
    run.events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Termination {
                pod,
                stage: TerminationStage::Deleted,
            } => Some((pod.clone(), e.t_s)),
            _ => None,
        })
        .collect()
}

/// (requests, failed) the load balancer sent to pods after their deletion, inside the window.
fn after_removal(run: &RunData, window: Window) -> (u64, u64, BTreeMap<String, (u64, u64)>) {
    let deleted = deletion_times(run);
    let mut per_pod: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for b in &run.lb {
        let Some(t_del) = deleted.get(&b.pod) else {
            continue;
        };
        // A bucket counts when it overlaps the termination (ends after the deletion): with
        // buckets of 100 ms, a failure just after the deletion is never missed.
        if b.t_s + b.width_s > *t_del && window.has_instant(b.t_s) {
            let entry = per_pod.entry(b.pod.clone()).or_default();
            entry.0 += b.requests;
            entry.1 += b.failed;
        }
    }
    let requests = per_pod.values().map(|v| v.0).sum();
    let failed = per_pod.values().map(|v| v.1).sum();
    (requests, failed, per_pod)
}

fn describe_pods(per_pod: &BTreeMap<String, (u64, u64)>) -> String {
    let parts: Vec<String> = per_pod
        .iter()
        .filter(|(_, (r, _))| *r > 0)
        .map(|(pod, (r, f))| format!("{pod} {r} ({f} failed)"))
        .collect();
    if parts.is_empty() {
        "no request reached a terminating pod".into()
    } else {
        parts.join(", ")
    }
}

/// Requests the load balancer sent to a pod after its endpoint was removed.
pub fn requests_after_removal(run: &RunData, window: Window) -> Measured {
    if run.lb.is_empty() {
        return needs_lb();
    }
    let (requests, _, per_pod) = after_removal(run, window);
    Measured {
        value: Some(requests as f64),
        evidence: describe_pods(&per_pod),
    }
}

/// Failed ÷ all requests sent to pods inside their termination (after deletion).
pub fn termination_error_rate(run: &RunData, window: Window) -> Measured {
    if run.lb.is_empty() {
        return needs_lb();
    }
    let (requests, failed, per_pod) = after_removal(run, window);
    let value = if requests > 0 {
        Some(failed as f64 / requests as f64)
    } else if deletion_times(run).is_empty() {
        None
    } else {
        Some(0.0)
    };
    Measured {
        value,
        evidence: format!(
            "{failed} of {requests} requests to terminating pods failed: {}",
            describe_pods(&per_pod)
        ),
    }
}

fn needs_lb() -> Measured {
    Measured {
        value: None,
        evidence: "needs a load balancer (loadBalancer + via: loadBalancer): only it knows \
                   which pod every request went to"
            .into(),
    }
}

/// Seconds from the first rollout that starts in the window to its completion.
pub fn rollout_duration(run: &RunData, window: Window) -> Measured {
    let mut started: Option<(u32, f64)> = None;
    for e in &run.events {
        if let EventKind::Rollout { revision, stage } = &e.kind {
            match (stage, started) {
                (RolloutStage::Started, None) if window.has_instant(e.t_s) => {
                    started = Some((*revision, e.t_s))
                }
                (RolloutStage::Complete, Some((rev, t0))) if *revision == rev => {
                    return Measured {
                        value: Some(e.t_s - t0),
                        evidence: format!(
                            "revision {rev} rolled out from {t0:.1}s to {:.1}s",
                            e.t_s
                        ),
                    };
                }
                _ => {}
            }
        }
    }
    Measured {
        value: None,
        evidence: match started {
            Some((rev, t0)) => format!("revision {rev} started at {t0:.1}s and did not complete"),
            None => "no rollout started in the window".into(),
        },
    }
}

/// Seconds from the window start to the first HPA sync that raised the replica count.
pub fn time_to_scale_up(run: &RunData, window: Window) -> Measured {
    let first = run.events.iter().find_map(|e| match e.kind {
        EventKind::Autoscaler {
            current, desired, ..
        } if desired > current && window.has_instant(e.t_s) => Some((e.t_s, current, desired)),
        _ => None,
    });
    match first {
        Some((t, from, to)) => Measured {
            value: Some(t - window.from_s),
            evidence: format!("first scale-up {from} → {to} at {t:.1}s"),
        },
        None => Measured {
            value: None,
            evidence: format!(
                "the autoscaler never scaled up in the window{}",
                last_autoscaler_view(run, window)
            ),
        },
    }
}

fn last_autoscaler_view(run: &RunData, window: Window) -> String {
    run.events
        .iter()
        .rev()
        .find_map(|e| match e.kind {
            EventKind::Autoscaler {
                current,
                source_rps,
                destination_rps,
                ..
            } if window.has_instant(e.t_s) => Some(format!(
                " (last sync at {:.1}s: {current} replicas, demand {source_rps:.0} rps at the \
                 source, {destination_rps:.0} rps processed at the destination)",
                e.t_s
            )),
            _ => None,
        })
        .unwrap_or_default()
}

/// Pods not terminating, per instant: (time, count) after every pod creation or deletion.
pub fn replica_steps(run: &RunData) -> Vec<(f64, u32)> {
    let mut count: i64 = 0;
    let mut steps = Vec::new();
    for e in &run.events {
        if let EventKind::Pod { created, .. } = e.kind {
            count += if created { 1 } else { -1 };
            steps.push((e.t_s, count.max(0) as u32));
        }
    }
    steps
}

fn replicas_in(run: &RunData, window: Window) -> Vec<u32> {
    let steps = replica_steps(run);
    let at_start = steps
        .iter()
        .take_while(|(t, _)| *t <= window.from_s)
        .last()
        .map(|(_, c)| *c);
    at_start
        .into_iter()
        .chain(
            steps
                .iter()
                .filter(|(t, _)| window.has_instant(*t))
                .map(|(_, c)| *c),
        )
        .collect()
}

/// The most replicas in the window.
pub fn max_replicas(run: &RunData, window: Window) -> Measured {
    let counts = replicas_in(run, window);
    Measured {
        value: counts.iter().max().map(|v| f64::from(*v)),
        evidence: format!("replicas in the window: {counts:?}"),
    }
}

/// The fewest replicas in the window.
pub fn min_replicas(run: &RunData, window: Window) -> Measured {
    let counts = replicas_in(run, window);
    Measured {
        value: counts.iter().min().map(|v| f64::from(*v)),
        evidence: format!("replicas in the window: {counts:?}"),
    }
}

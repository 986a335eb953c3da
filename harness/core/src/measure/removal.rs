//! Requests that still reach a pod after it left the Service's endpoints. kube-proxy steers
//! only *new* connections: a connection keeps its backend for as long as both ends live, so a
//! pod that turns NotReady (its node, its probe) or is deleted keeps answering on the
//! connections it already had, and a load balancer keeps sending until it deregisters the
//! target. For every removal — from the moment the pod leaves the ready endpoints until it
//! rejoins them or is gone — this counts what reached it: its sidecar's arrivals where it has
//! one (the once-a-second counters, interpolated at the interval's ends), else the responses
//! the generators attributed to it (`x-pod`, per second, pro rata for a partial second).

use std::collections::BTreeMap;

use super::{EventKind, PodRun, RunData, TerminationStage};

/// Why a pod left the ready endpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemovalCause {
    /// It turned not ready (its readiness probe, or its node's Ready condition).
    NotReady,
    /// It was deleted (it terminates).
    Deleted,
}

/// Where the count of a removal comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CountedAt {
    /// The pod's sidecar: requests that arrived.
    Sidecar,
    /// The generators: responses attributed to the pod.
    Responses,
}

/// One stay of a pod outside the ready endpoints, and what reached it meanwhile.
#[derive(Debug, Clone, PartialEq)]
pub struct Removal {
    pub pod: String,
    pub cause: RemovalCause,
    /// When it left the endpoints (seconds from load start).
    pub from_s: f64,
    /// When it rejoined them or was gone; `None`: still out at the end of the run.
    pub to_s: Option<f64>,
    /// Requests that reached it in between.
    pub reached: u64,
    pub counted_at: CountedAt,
    /// Connections kube-proxy's forwarders held open to it when it left (where the target
    /// records them).
    pub open_connections: Option<u64>,
    /// What a load balancer sent it meanwhile, and how many of those failed (where there is
    /// one). Requests it sent to a pod that no longer accepted them fail without reaching it.
    pub load_balancer: Option<LbSent>,
}

/// Requests a load balancer sent to a pod, and the failed ones among them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LbSent {
    pub sent: u64,
    pub failed: u64,
}

/// Every removal of the run, in time order.
pub fn removals(run: &RunData) -> Vec<Removal> {
    let mut open: BTreeMap<String, Removal> = BTreeMap::new();
    let mut in_endpoints: BTreeMap<String, bool> = BTreeMap::new();
    let mut done = Vec::new();
    for e in &run.events {
        let t = e.t_s;
        match &e.kind {
            EventKind::Endpoint { pod, ready } => {
                let was_in = in_endpoints.insert(pod.clone(), *ready).unwrap_or(false);
                if *ready {
                    if let Some(mut r) = open.remove(pod) {
                        r.to_s = Some(t);
                        done.push(r);
                    }
                } else if was_in {
                    open.insert(pod.clone(), start(pod, RemovalCause::NotReady, t));
                }
            }
            EventKind::Termination { pod, stage } => match stage {
                TerminationStage::Deleted => {
                    if in_endpoints.insert(pod.clone(), false).unwrap_or(false) {
                        open.insert(pod.clone(), start(pod, RemovalCause::Deleted, t));
                    }
                }
                TerminationStage::Exited => {
                    in_endpoints.remove(pod);
                    if let Some(mut r) = open.remove(pod) {
                        r.to_s = Some(t);
                        done.push(r);
                    }
                }
                TerminationStage::Sigterm | TerminationStage::Sigkill => {}
            },
            EventKind::Connections { pod, open: n } => {
                if let Some(r) = open.get_mut(pod)
                    && r.open_connections.is_none()
                {
                    r.open_connections = Some(*n);
                }
            }
            _ => {}
        }
    }
    done.extend(open.into_values());
    for r in &mut done {
        count(run, r);
    }
    done.sort_by(|a, b| a.from_s.total_cmp(&b.from_s).then(a.pod.cmp(&b.pod)));
    done
}

fn start(pod: &str, cause: RemovalCause, t: f64) -> Removal {
    Removal {
        pod: pod.to_owned(),
        cause,
        from_s: t,
        to_s: None,
        reached: 0,
        counted_at: CountedAt::Responses,
        open_connections: None,
        load_balancer: None,
    }
}

fn count(run: &RunData, r: &mut Removal) {
    let to_s = r.to_s.unwrap_or(f64::INFINITY);
    match run
        .pods
        .iter()
        .find(|p| p.name == r.pod && p.max_concurrency > 0)
    {
        Some(pod) => {
            r.counted_at = CountedAt::Sidecar;
            let received = |t: f64| received_at(pod, t);
            r.reached = (received(to_s) - received(r.from_s)).max(0.0).round() as u64;
        }
        None => {
            r.counted_at = CountedAt::Responses;
            let mut total = 0.0;
            for (_, second, row) in run.load_seconds() {
                let n = row.by_backend.get(&r.pod).copied().unwrap_or(0) as f64;
                let (s0, s1) = (second as f64, second as f64 + 1.0);
                let overlap = (s1.min(to_s) - s0.max(r.from_s)).clamp(0.0, 1.0);
                total += n * overlap;
            }
            r.reached = total.round() as u64;
        }
    }
    if !run.lb.is_empty() {
        let mut lb = LbSent { sent: 0, failed: 0 };
        for b in run
            .lb
            .iter()
            .filter(|b| b.pod == r.pod && b.t_s + b.width_s > r.from_s && b.t_s < to_s)
        {
            lb.sent += b.requests;
            lb.failed += b.failed;
        }
        r.load_balancer = Some(lb);
    }
}

/// The sidecar's arrivals counter at `t`, interpolated between the samples around it (the
/// counter is cumulative; the largest value up to a sample stands, so a failed scrape's zeros
/// do not count).
fn received_at(pod: &PodRun, t: f64) -> f64 {
    let mut before: Option<(f64, f64)> = None;
    let mut peak = 0u64;
    for s in &pod.samples {
        peak = peak.max(s.received);
        let point = (s.t_s, peak as f64);
        if s.t_s <= t {
            before = Some(point);
        } else {
            return match before {
                Some((t0, v0)) if point.0 > t0 => v0 + (point.1 - v0) * (t - t0) / (point.0 - t0),
                Some((_, v0)) => v0,
                None => 0.0,
            };
        }
    }
    before.map_or(0.0, |(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{LbBucket, PodSample, RecordedEvent};

    fn event(t_s: f64, kind: EventKind) -> RecordedEvent {
        RecordedEvent { t_s, kind }
    }

    fn sample(t_s: f64, received: u64) -> PodSample {
        PodSample {
            t_s,
            received,
            ..PodSample::default()
        }
    }

    #[test]
    fn a_not_ready_pod_is_counted_until_it_rejoins_and_a_deleted_one_until_it_is_gone() {
        let run = RunData {
            duration_s: 30.0,
            pods: vec![PodRun {
                name: "pod-2".into(),
                node: "n".into(),
                zone: "z".into(),
                max_concurrency: 8,
                // 50 requests a second throughout.
                samples: (0..=30).map(|s| sample(s as f64, 50 * s)).collect(),
            }],
            events: vec![
                event(
                    -1.0,
                    EventKind::Endpoint {
                        pod: "pod-2".into(),
                        ready: true,
                    },
                ),
                event(
                    10.0,
                    EventKind::Endpoint {
                        pod: "pod-2".into(),
                        ready: false,
                    },
                ),
                event(
                    10.0,
                    EventKind::Connections {
                        pod: "pod-2".into(),
                        open: 32,
                    },
                ),
                event(
                    14.5,
                    EventKind::Endpoint {
                        pod: "pod-2".into(),
                        ready: true,
                    },
                ),
                event(
                    20.0,
                    EventKind::Termination {
                        pod: "pod-2".into(),
                        stage: TerminationStage::Deleted,
                    },
                ),
                event(
                    26.0,
                    EventKind::Termination {
                        pod: "pod-2".into(),
                        stage: TerminationStage::Exited,
                    },
                ),
            ],
            ..RunData::default()
        };
        let r = removals(&run);
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(
            (r[0].cause, r[0].from_s, r[0].to_s),
            (RemovalCause::NotReady, 10.0, Some(14.5))
        );
        // 4.5 s at 50 a second, the end interpolated between the samples at 14 and 15 s.
        assert_eq!(r[0].reached, 225);
        assert_eq!(r[0].open_connections, Some(32));
        assert_eq!(r[0].counted_at, CountedAt::Sidecar);
        assert_eq!((r[1].cause, r[1].reached), (RemovalCause::Deleted, 300));
        assert_eq!(r[1].open_connections, None);
        assert_eq!(r[1].load_balancer, None);
    }

    #[test]
    fn without_a_sidecar_the_attributed_responses_count_pro_rata_and_the_lb_share_is_split_out() {
        use workload_contract::loadgen::Report;
        use workload_contract::loadgen::report::TimelineRow;
        let rows = (0..10)
            .map(|t| TimelineRow {
                t,
                by_backend: [("pod-1".to_string(), 10)].into_iter().collect(),
                ..TimelineRow::default()
            })
            .collect();
        let run = RunData {
            duration_s: 10.0,
            generators: vec![crate::measure::GeneratorRun {
                name: "g".into(),
                zone: "z".into(),
                report: Report {
                    timeline: rows,
                    ..Report::default()
                },
            }],
            events: vec![
                event(
                    0.0,
                    EventKind::Endpoint {
                        pod: "pod-1".into(),
                        ready: true,
                    },
                ),
                event(
                    6.5,
                    EventKind::Termination {
                        pod: "pod-1".into(),
                        stage: TerminationStage::Deleted,
                    },
                ),
            ],
            lb: vec![
                LbBucket {
                    pod: "pod-1".into(),
                    t_s: 6.45,
                    width_s: 0.1,
                    requests: 3,
                    failed: 0,
                },
                LbBucket {
                    pod: "pod-1".into(),
                    t_s: 8.0,
                    width_s: 0.1,
                    requests: 4,
                    failed: 4,
                },
                LbBucket {
                    pod: "pod-1".into(),
                    t_s: 2.0,
                    width_s: 0.1,
                    requests: 9,
                    failed: 0,
                },
            ],
            ..RunData::default()
        };
        let r = removals(&run);
        assert_eq!(r.len(), 1);
        // Half of second 6, then seconds 7, 8, 9: 35 responses; still out at the end.
        assert_eq!((r[0].reached, r[0].to_s), (35, None));
        assert_eq!(r[0].counted_at, CountedAt::Responses);
        assert_eq!(
            r[0].load_balancer,
            Some(LbSent { sent: 7, failed: 4 }),
            "buckets overlapping the removal"
        );
    }
}

//! The per-second series behind the report's charts that `summarize`'s first series do not
//! cover: per-pod arrivals, in-flight and queue (from the sidecar samples), hints per endpoint
//! (from the hints events), termination windows, errors by kind and the load balancer's
//! failures per pod. [`timeline_series`] needs only the timeline (events and samples), so a
//! report can be rebuilt from `timeline.jsonl`; [`load_series`] needs the generators' and the
//! load balancer's data.

use std::collections::BTreeMap;

use crate::measure::{EventKind, LbBucket, RunData, TerminationStage, deletion_times};
use crate::report::{Series, TerminationWindow};

/// The series derivable from the timeline alone, `n` seconds long.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TimelineSeries {
    pub arrivals_per_pod: BTreeMap<String, Vec<u64>>,
    pub in_flight_per_pod: BTreeMap<String, Vec<Option<u64>>>,
    pub queue_per_pod: BTreeMap<String, Vec<Option<u64>>>,
    pub hints_per_pod: BTreeMap<String, Vec<Option<String>>>,
    /// Windows without the load balancer's counts (see [`load_series`]).
    pub terminations: Vec<TerminationWindow>,
}

impl TimelineSeries {
    /// Writes these series into `series`, keeping the load balancer's counts of termination
    /// windows already there (matched by pod and start).
    pub fn apply(self, series: &mut Series) {
        type LbCounts = (Option<u64>, Option<u64>, Option<f64>);
        let counts: BTreeMap<(String, u64), LbCounts> = series
            .terminations
            .iter()
            .map(|w| {
                let key = (w.pod.clone(), w.from_s.to_bits());
                (key, (w.requests, w.failed, w.lb_last_sent_s))
            })
            .collect();
        series.arrivals_per_pod = self.arrivals_per_pod;
        series.in_flight_per_pod = self.in_flight_per_pod;
        series.queue_per_pod = self.queue_per_pod;
        series.hints_per_pod = self.hints_per_pod;
        series.terminations = self
            .terminations
            .into_iter()
            .map(|mut w| {
                if let Some((requests, failed, last)) =
                    counts.get(&(w.pod.clone(), w.from_s.to_bits()))
                {
                    w.requests = *requests;
                    w.failed = *failed;
                    w.lb_last_sent_s = *last;
                }
                w
            })
            .collect();
    }
}

/// Per-pod arrivals, in-flight and queue from the samples; hints per endpoint and termination
/// windows from the events.
pub fn timeline_series(run: &RunData, n: usize) -> TimelineSeries {
    let mut out = TimelineSeries::default();
    for pod in run.pods.iter().filter(|p| !p.samples.is_empty()) {
        if pod.max_concurrency > 0 {
            let received_at = |t: f64| {
                pod.samples
                    .iter()
                    .take_while(|s| s.t_s <= t)
                    .map(|s| s.received)
                    .max()
                    .unwrap_or(0)
            };
            let arrivals = (0..n)
                .map(|i| received_at((i + 1) as f64).saturating_sub(received_at(i as f64)))
                .collect();
            out.arrivals_per_pod.insert(pod.name.clone(), arrivals);
        }
        if pod.max_concurrency == 0 {
            // Without a sidecar there is nothing in flight to sample.
            continue;
        }
        let mut in_flight = vec![None; n];
        let mut queue = vec![None; n];
        for s in &pod.samples {
            if s.t_s < 0.0 {
                continue;
            }
            let i = s.t_s.floor() as usize;
            if i < n {
                in_flight[i] = Some(in_flight[i].unwrap_or(0).max(s.in_flight));
                queue[i] = Some(queue[i].unwrap_or(0).max(s.queue_depth));
            }
        }
        out.in_flight_per_pod.insert(pod.name.clone(), in_flight);
        out.queue_per_pod.insert(pod.name.clone(), queue);
    }
    out.hints_per_pod = hints_per_pod(run, n);
    out.terminations = termination_windows(run);
    out
}

/// Pod → zones hinted at the end of each second. Only pods that ever had a hint appear.
fn hints_per_pod(run: &RunData, n: usize) -> BTreeMap<String, Vec<Option<String>>> {
    let mut out: BTreeMap<String, Vec<Option<String>>> = BTreeMap::new();
    let mut current: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut events = run.events.iter().peekable();
    for i in 0..n {
        while let Some(e) = events.next_if(|e| e.t_s < (i + 1) as f64) {
            if let EventKind::Hints { for_zones, .. } = &e.kind {
                current = for_zones.clone();
                for pod in current.keys() {
                    out.entry(pod.clone()).or_insert_with(|| vec![None; n]);
                }
            }
        }
        for (pod, slots) in out.iter_mut() {
            slots[i] = current
                .get(pod)
                .filter(|zones| !zones.is_empty())
                .map(|zones| zones.join(","));
        }
    }
    out
}

/// One window per deleted pod, from the `deleted` stage to `exited`.
fn termination_windows(run: &RunData) -> Vec<TerminationWindow> {
    let mut windows: Vec<TerminationWindow> = Vec::new();
    for e in &run.events {
        let EventKind::Termination { pod, stage } = &e.kind else {
            continue;
        };
        let open = windows
            .iter_mut()
            .rev()
            .find(|w| &w.pod == pod && w.to_s.is_none());
        match (stage, open) {
            (TerminationStage::Deleted, _) => windows.push(TerminationWindow {
                pod: pod.clone(),
                from_s: e.t_s,
                sigterm_s: None,
                to_s: None,
                requests: None,
                failed: None,
                lb_last_sent_s: None,
            }),
            (TerminationStage::Sigterm, Some(w)) => w.sigterm_s = Some(e.t_s),
            (TerminationStage::Exited, Some(w)) => w.to_s = Some(e.t_s),
            _ => {}
        }
    }
    windows
}

/// Series from the generators and the load balancer: errors by kind per second, the load
/// balancer's failures per pod per second, and its counts inside each termination window
/// (requests it sent the pod after the deletion, as `requestsAfterRemoval` counts them).
pub fn load_series(run: &RunData, n: usize, series: &mut Series) {
    for (_, second, row) in run.load_seconds() {
        if second >= n {
            continue;
        }
        let kinds = row
            .responses
            .iter()
            .filter(|(code, _)| !code.starts_with('2'))
            .chain(row.transport_errors.iter());
        for (kind, count) in kinds.filter(|(_, c)| **c > 0) {
            series
                .errors_by_kind
                .entry(kind.clone())
                .or_insert_with(|| vec![0; n])[second] += count;
        }
    }
    if run.lb.is_empty() {
        return;
    }
    for b in &run.lb {
        // A bucket belongs to the second its middle falls in.
        let middle = b.t_s + b.width_s / 2.0;
        if b.failed == 0 || middle < 0.0 {
            continue;
        }
        let i = middle.floor() as usize;
        if i < n {
            series
                .lb_failed_per_pod
                .entry(b.pod.clone())
                .or_insert_with(|| vec![0; n])[i] += b.failed;
        }
    }
    let deleted = deletion_times(run);
    for w in &mut series.terminations {
        // The same rule as the lifecycle measurements: a bucket counts when it ends after the
        // deletion (the last deletion of the pod: pods are never deleted twice).
        let t_del = deleted.get(&w.pod).copied().unwrap_or(w.from_s);
        let after: Vec<&LbBucket> = run
            .lb
            .iter()
            .filter(|b| b.pod == w.pod && b.t_s + b.width_s > t_del)
            .collect();
        w.requests = Some(after.iter().map(|b| b.requests).sum());
        w.failed = Some(after.iter().map(|b| b.failed).sum());
        w.lb_last_sent_s = after
            .iter()
            .filter(|b| b.requests > 0)
            .map(|b| b.t_s + b.width_s)
            .reduce(f64::max);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{PodRun, PodSample, RecordedEvent};

    fn event(t_s: f64, kind: EventKind) -> RecordedEvent {
        RecordedEvent { t_s, kind }
    }

    fn sample(t_s: f64, received: u64, in_flight: u64) -> PodSample {
        PodSample {
            t_s,
            received,
            in_flight,
            ..PodSample::default()
        }
    }

    #[test]
    fn arrivals_in_flight_and_hints_per_second() {
        let mut zones = BTreeMap::new();
        zones.insert("pod-0".to_string(), vec!["a".to_string()]);
        let run = RunData {
            duration_s: 3.0,
            pods: vec![PodRun {
                name: "pod-0".into(),
                node: "n".into(),
                zone: "z".into(),
                max_concurrency: 4,
                samples: vec![
                    sample(-0.5, 5, 0),
                    sample(0.0, 5, 1),
                    sample(1.0, 15, 4),
                    sample(2.0, 40, 2),
                    sample(2.5, 41, 3),
                ],
            }],
            events: vec![
                event(
                    0.5,
                    EventKind::Hints {
                        enabled: true,
                        for_zones: zones,
                    },
                ),
                event(
                    2.2,
                    EventKind::Hints {
                        enabled: false,
                        for_zones: BTreeMap::new(),
                    },
                ),
            ],
            ..RunData::default()
        };
        let s = timeline_series(&run, 3);
        assert_eq!(s.arrivals_per_pod["pod-0"], vec![10, 25, 1]);
        assert_eq!(
            s.in_flight_per_pod["pod-0"],
            vec![Some(1), Some(4), Some(3)]
        );
        assert_eq!(
            s.hints_per_pod["pod-0"],
            vec![Some("a".to_string()), Some("a".to_string()), None]
        );
    }

    #[test]
    fn termination_windows_carry_the_load_balancers_counts() {
        let term = |t, stage: TerminationStage| {
            event(
                t,
                EventKind::Termination {
                    pod: "pod-1".into(),
                    stage,
                },
            )
        };
        let bucket = |t_s, requests, failed| LbBucket {
            pod: "pod-1".into(),
            t_s,
            width_s: 0.1,
            requests,
            failed,
        };
        let run = RunData {
            duration_s: 4.0,
            events: vec![
                term(1.0, TerminationStage::Deleted),
                term(1.0, TerminationStage::Sigterm),
                term(3.5, TerminationStage::Exited),
            ],
            lb: vec![bucket(0.5, 10, 0), bucket(0.95, 4, 1), bucket(1.5, 6, 6)],
            ..RunData::default()
        };
        let mut series = Series::default();
        timeline_series(&run, 4).apply(&mut series);
        let w = &series.terminations[0];
        assert_eq!((w.from_s, w.sigterm_s, w.to_s), (1.0, Some(1.0), Some(3.5)));
        assert_eq!(
            w.requests, None,
            "the timeline alone has no load-balancer counts"
        );
        load_series(&run, 4, &mut series);
        let w = &series.terminations[0];
        assert_eq!((w.requests, w.failed), (Some(10), Some(7)));
        assert_eq!(w.lb_last_sent_s, Some(1.6));
        // The bucket at 0.95–1.05 s belongs to second 1 (its middle).
        assert_eq!(series.lb_failed_per_pod["pod-1"], vec![0, 7, 0, 0]);
        // Rebuilding from the timeline keeps the counts.
        timeline_series(&run, 4).apply(&mut series);
        assert_eq!(series.terminations[0].failed, Some(7));
    }
}

//! Both sides of every pod, for the reports' reconciled per-pod table: the destination side
//! (the pod's sidecar: arrivals, admissions, rejections, requests its callers abandoned in the
//! queue) and the source side (what the load generators got back from it). Both count each
//! pod's whole life, warm-up and drain included, so they can be set against each other: a pod
//! whose requests arrive but are never answered stands out.

use std::collections::BTreeMap;

use crate::measure::{PodRun, RunData};
use crate::report::{PodDestination, PodLoadBalancer, PodSource};

/// The sidecar's counters at the end of the pod's life; `None` without a sidecar.
///
/// Counters are cumulative, so the largest value seen is the final one even when a late
/// scrape failed (a failed scrape records zeros). The queue at the end is the last sample's.
pub fn pod_destination(pod: &PodRun) -> Option<PodDestination> {
    if pod.max_concurrency == 0 {
        return None;
    }
    let max_of =
        |f: fn(&crate::measure::PodSample) -> u64| pod.samples.iter().map(f).max().unwrap_or(0);
    let arrived = max_of(|s| s.received);
    let admitted = max_of(|s| s.admitted);
    let queue_full = max_of(|s| s.rejected_queue_full);
    let queue_timeout = max_of(|s| s.rejected_queue_timeout);
    let queued_at_end = pod.samples.last().map_or(0, |s| s.queue_depth);
    let abandoned = arrived
        .saturating_sub(admitted)
        .saturating_sub(queue_full)
        .saturating_sub(queue_timeout)
        .saturating_sub(queued_at_end);
    let mut rejected = BTreeMap::new();
    rejected.insert("queue_full".to_string(), queue_full);
    rejected.insert("queue_timeout".to_string(), queue_timeout);
    Some(PodDestination {
        arrived,
        admitted,
        rejected,
        queued_at_end,
        abandoned,
    })
}

/// Source-side outcomes per pod of the run, and what no pod of the run could be named for
/// (responses without `x-pod`, transport errors on connections no pod had answered on). The
/// pods' outcomes plus the unattributed ones add up to the generators' totals.
pub fn pod_sources(run: &RunData) -> (BTreeMap<String, PodSource>, PodSource) {
    let mut per_pod: BTreeMap<String, PodSource> = run
        .pods
        .iter()
        .map(|p| (p.name.clone(), PodSource::default()))
        .collect();
    let mut unattributed = PodSource::default();
    for g in &run.generators {
        let r = &g.report;
        for (backend, b) in &r.by_backend {
            let side = per_pod.get_mut(backend).unwrap_or(&mut unattributed);
            add(&mut side.responses, &b.responses);
            add(&mut side.transport_errors, &b.transport_errors);
        }
        // Transport errors no backend was named for: the generator's total minus the named.
        for (kind, n) in &r.transport_errors {
            let named: u64 = r
                .by_backend
                .values()
                .filter_map(|b| b.transport_errors.get(kind))
                .sum();
            let rest = n.saturating_sub(named);
            if rest > 0 {
                *unattributed
                    .transport_errors
                    .entry(kind.clone())
                    .or_default() += rest;
            }
        }
        for (backend, s) in &r.sse.by_backend {
            let side = per_pod.get_mut(backend).unwrap_or(&mut unattributed);
            side.streams_opened += s.opened;
            side.streams_failed += s.failed;
        }
        let named_failed: u64 = r.sse.by_backend.values().map(|s| s.failed).sum();
        unattributed.streams_failed += r.sse.streams_failed.saturating_sub(named_failed);
    }
    (per_pod, unattributed)
}

/// What the load balancer sent each pod over the whole run; empty without one.
pub fn pod_load_balancer(run: &RunData) -> BTreeMap<String, PodLoadBalancer> {
    let mut out: BTreeMap<String, PodLoadBalancer> = BTreeMap::new();
    for b in &run.lb {
        let side = out.entry(b.pod.clone()).or_default();
        side.sent += b.requests;
        side.failed += b.failed;
    }
    out
}

fn add(into: &mut BTreeMap<String, u64>, from: &BTreeMap<String, u64>) {
    for (k, n) in from {
        *into.entry(k.clone()).or_default() += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{GeneratorRun, PodSample};
    use workload_contract::loadgen::Report as LoadReport;
    use workload_contract::loadgen::report::{BackendReport, SseBackend, SseReport as SseSummary};

    fn map(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    fn sample(received: u64, admitted: u64, full: u64, queue: u64) -> PodSample {
        PodSample {
            received,
            admitted,
            rejected_queue_full: full,
            queue_depth: queue,
            ..PodSample::default()
        }
    }

    #[test]
    fn destination_counts_add_up_and_ignore_a_failed_last_scrape() {
        let pod = PodRun {
            name: "pod-1".into(),
            node: "n".into(),
            zone: "z".into(),
            max_concurrency: 20,
            samples: vec![
                sample(100, 20, 0, 70),
                sample(180, 20, 5, 90),
                sample(0, 0, 0, 0),
            ],
        };
        let d = pod_destination(&pod).unwrap();
        assert_eq!((d.arrived, d.admitted), (180, 20));
        assert_eq!(d.rejected["queue_full"], 5);
        // The failed scrape left a zero queue: 180 − 20 − 5 − 0 callers gave up.
        assert_eq!(d.queued_at_end, 0);
        assert_eq!(d.abandoned, 155);
        let no_sidecar = PodRun {
            max_concurrency: 0,
            ..pod
        };
        assert_eq!(pod_destination(&no_sidecar), None);
    }

    #[test]
    fn source_outcomes_per_pod_plus_unattributed_equal_the_totals() {
        let mut by_backend = BTreeMap::new();
        by_backend.insert(
            "pod-0".to_string(),
            BackendReport {
                responses: map(&[("200", 90), ("503", 4)]),
                transport_errors: map(&[("reset", 2)]),
                ..BackendReport::default()
            },
        );
        by_backend.insert(
            "unknown".to_string(),
            BackendReport {
                responses: map(&[("200", 1)]),
                transport_errors: BTreeMap::new(),
                ..BackendReport::default()
            },
        );
        let mut sse_by_backend = BTreeMap::new();
        sse_by_backend.insert(
            "pod-0".to_string(),
            SseBackend {
                opened: 3,
                failed: 1,
                events: 9,
                ..SseBackend::default()
            },
        );
        let run = RunData {
            pods: vec![PodRun {
                name: "pod-0".into(),
                node: "n".into(),
                zone: "z".into(),
                max_concurrency: 0,
                samples: vec![],
            }],
            generators: vec![GeneratorRun {
                name: "g".into(),
                zone: "a".into(),
                report: LoadReport {
                    responses: map(&[("200", 91), ("503", 4)]),
                    transport_errors: map(&[("reset", 2), ("timeout", 30)]),
                    by_backend,
                    sse: SseSummary {
                        streams_failed: 2,
                        by_backend: sse_by_backend,
                        ..SseSummary::default()
                    },
                    ..LoadReport::default()
                },
            }],
            ..RunData::default()
        };
        let (pods, rest) = pod_sources(&run);
        let p = &pods["pod-0"];
        assert_eq!(p.answered(), 94);
        assert_eq!(p.non_2xx(), 4);
        assert_eq!(p.transport_errors, map(&[("reset", 2)]));
        assert_eq!((p.streams_opened, p.streams_failed), (3, 1));
        assert_eq!(rest.responses, map(&[("200", 1)]));
        assert_eq!(rest.transport_errors, map(&[("timeout", 30)]));
        assert_eq!(rest.streams_failed, 1);
    }
}

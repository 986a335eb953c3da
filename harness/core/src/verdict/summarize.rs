//! Turns a run's data and expectation results into the [`Summary`]: the verdict, totals,
//! per-pod numbers, skew, traffic matrix, hint events and per-second series. The sentences
//! that explain the verdict are [`super::explain`]'s.

use std::collections::BTreeMap;

use kube_model::events::is_topology_hints_reason;

use super::explain::explain;
use super::pod_views::{pod_destination, pod_load_balancer, pod_sources};
use super::removals::removal_summaries;
use super::series_views::{load_series, timeline_series};
use crate::measure::{self, EventKind, RunData, Window};
use crate::report::*;
use crate::text::natural_key;

/// Facts about the run the summary needs besides its data.
#[derive(Debug, Clone)]
pub struct RunFacts {
    pub scenario: String,
    pub variant: Option<String>,
    pub target: String,
    pub run_id: String,
    pub seed: u64,
    pub started_at: String,
    pub time_scale: f64,
    pub partial_reason: Option<String>,
    /// The ingress controller's settings (scenarios with `ingress`).
    pub ingress_controller: Option<crate::ingress::ControllerSettings>,
    /// US dollars per GB of cross-zone bytes (the scenario's `cost.pricePerGb`).
    pub price_per_gb: f64,
    /// The generators through the load balancer or the ingress, by name.
    pub proxied_generators: Vec<String>,
}

/// Builds the summary.
pub fn summarize(facts: RunFacts, run: &RunData, expectations: Vec<ExpectationResult>) -> Summary {
    let whole = Window::whole(run);
    let verdict = if expectations.iter().all(|e| e.passed) && facts.partial_reason.is_none() {
        Verdict::Pass
    } else {
        Verdict::Fail
    };
    let skew = measure::skew(run, whole);
    let removals = measure::removals(run);
    let explanation = explain(
        facts.partial_reason.as_deref(),
        crate::clock::TimeScale::new(facts.time_scale).unwrap_or_default(),
        run,
        &expectations,
        &skew,
        &removals,
    );
    let (mut sources, unattributed) = pod_sources(run);
    let traffic = measure::traffic_matrix(run, whole);
    let cross_zone = (!run.generators.is_empty()).then(|| {
        let mut c = cross_zone(run, &traffic, whole, facts.price_per_gb);
        c.proxied = proxied_traffic(run, whole, &facts.proxied_generators);
        c
    });
    let (traffic_matrix, traffic_bytes) = matrix_cells(&traffic);
    let mut pods = pods(run, &skew);
    pods.sort_by(|a, b| natural_key(&a.name).cmp(&natural_key(&b.name)));
    let mut balanced = pod_load_balancer(run);
    for pod in &mut pods {
        pod.source = sources.remove(&pod.name);
        pod.load_balancer = balanced.remove(&pod.name);
    }
    let mut summary = Summary {
        schema: SUMMARY_SCHEMA.to_string(),
        scenario: facts.scenario,
        variant: facts.variant,
        target: facts.target,
        run_id: facts.run_id,
        seed: facts.seed,
        started_at: facts.started_at,
        duration_s: run.duration_s,
        time_scale: facts.time_scale,
        verdict,
        partial: facts.partial_reason.is_some(),
        partial_reason: facts.partial_reason,
        explanation,
        expectations,
        totals: totals(run),
        pods,
        skew: SkewSummary {
            max_mean: skew.max_mean,
            cv: skew.cv,
            starved: skew.starved.clone(),
        },
        traffic_matrix,
        traffic_bytes,
        cross_zone,
        hints: hints(run),
        series: series(run),
        unattributed: (!run.generators.is_empty()).then_some(unattributed),
        invocation: None,
        removals: removal_summaries(&removals),
        model_agreement: None,
        kubernetes: None,
        ingress: super::ingress_view::ingress_summary(run, facts.ingress_controller.as_ref()),
        audit: None,
    };
    let audit = crate::audit::audit(run, &summary);
    if !audit.held {
        summary.explanation.insert(0, audit.headline());
    }
    summary.audit = Some(audit);
    summary
}

/// Outcomes of the measured load (warm-up excluded, like every expectation); latency and SSE
/// figures come from the generators' own totals.
fn totals(run: &RunData) -> Totals {
    let measured = measure::outcomes(run, Window::whole(run));
    let mut t = Totals {
        attempted: measured.attempted,
        dropped: measured.dropped,
        error_rate: if measured.attempted > 0 {
            measured.errors() as f64 / measured.attempted as f64
        } else {
            0.0
        },
        responses: measured.responses.clone(),
        transport_errors: measured.transport_errors.clone(),
        ..Totals::default()
    };
    for g in &run.generators {
        let r = &g.report;
        t.sse_events += r.sse.events;
        t.sse_streams_failed += r.sse.streams_failed;
        if r.attempted > 0 {
            t.latency_p99_ms = Some(t.latency_p99_ms.unwrap_or(0.0).max(r.latency_ms.p99));
            t.latency_p50_ms = Some(t.latency_p50_ms.unwrap_or(0.0).max(r.latency_ms.p50));
        }
    }
    t
}

fn pods(run: &RunData, skew: &measure::SkewStats) -> Vec<PodSummary> {
    let counts = measure::requests_per_pod(run, Window::whole(run));
    // Shares of the pods' requests: responses no pod was named for (a load balancer's own
    // 502/503, `unknown`) are no pod's share.
    let total: u64 = run.pods.iter().filter_map(|p| counts.get(&p.name)).sum();
    run.pods
        .iter()
        .map(|p| {
            let requests = counts.get(&p.name).copied().unwrap_or(0);
            let last = p.samples.last().cloned().unwrap_or_default();
            let mut rejected = BTreeMap::new();
            rejected.insert("queue_full".to_string(), last.rejected_queue_full);
            rejected.insert("queue_timeout".to_string(), last.rejected_queue_timeout);
            PodSummary {
                name: p.name.clone(),
                node: p.node.clone(),
                zone: p.zone.clone(),
                requests,
                share: if total > 0 {
                    requests as f64 / total as f64
                } else {
                    0.0
                },
                starved: skew.starved.contains(&p.name),
                admitted: last.admitted,
                rejected,
                max_in_flight: p.samples.iter().map(|s| s.in_flight).max().unwrap_or(0),
                max_queue_depth: p.samples.iter().map(|s| s.queue_depth).max().unwrap_or(0),
                max_concurrency: p.max_concurrency,
                destination: pod_destination(p),
                source: None,
                load_balancer: None,
            }
        })
        .collect()
}

/// Origin zone → pod → responses, and → bytes, of the load phase (the window of the totals
/// and series): each origin zone with rows in the window, the pods it got answers from (or,
/// for bytes, exchanged any byte with).
#[allow(clippy::type_complexity)]
fn matrix_cells(
    traffic: &measure::TrafficMatrix,
) -> (
    BTreeMap<String, BTreeMap<String, u64>>,
    BTreeMap<String, BTreeMap<String, TrafficBytes>>,
) {
    let mut requests: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    let mut bytes: BTreeMap<String, BTreeMap<String, TrafficBytes>> = BTreeMap::new();
    for (zone, pods) in traffic {
        let row = requests.entry(zone.clone()).or_default();
        for (pod, t) in pods {
            if t.requests > 0 {
                row.insert(pod.clone(), t.requests);
            }
            if !t.bytes.is_zero() {
                bytes.entry(zone.clone()).or_default().insert(
                    pod.clone(),
                    TrafficBytes {
                        sent: t.bytes.sent,
                        received: t.bytes.received,
                    },
                );
            }
        }
    }
    (requests, bytes)
}

/// The matrix split by the answering pod's zone, with the cost of the cross-zone bytes at the
/// rate measured over `window`.
fn cross_zone(
    run: &RunData,
    traffic: &measure::TrafficMatrix,
    window: Window,
    price_per_gb: f64,
) -> CrossZoneSummary {
    let split = measure::split(traffic, &measure::pod_zones(run));
    let seconds = (window.to_s - window.from_s).max(0.0);
    let bytes = split.cross.bytes.total();
    CrossZoneSummary {
        requests: split.cross.requests,
        bytes,
        bytes_sent: split.cross.bytes.sent,
        bytes_received: split.cross.bytes.received,
        share: split.share(),
        attributed_requests: split.attributed(),
        same_zone_requests: split.same.requests,
        same_zone_bytes: split.same.bytes.total(),
        unzoned_requests: split.unzoned.requests,
        unzoned_bytes: split.unzoned.bytes.total(),
        seconds,
        price_per_gb,
        estimated_monthly_usd: measure::monthly_cost_usd(bytes, seconds, price_per_gb),
        proxied: None,
    }
}

/// The traffic of `generators` (those through the load balancer or the ingress) over
/// `window`, as the traffic matrix counts it; `None` without any such generator.
pub(crate) fn proxied_traffic(
    run: &RunData,
    window: Window,
    generators: &[String],
) -> Option<ProxiedTraffic> {
    if generators.is_empty() {
        return None;
    }
    let (mut requests, mut bytes) = (0, 0);
    for (g, second, row) in run.load_seconds() {
        if window.has_second(second) && generators.contains(&g.name) {
            requests += row.by_backend.values().sum::<u64>();
            bytes += row
                .bytes_by_backend
                .values()
                .map(|b| b.total())
                .sum::<u64>();
        }
    }
    Some(ProxiedTraffic {
        generators: generators.to_vec(),
        requests,
        bytes,
    })
}

fn hints(run: &RunData) -> HintsSummary {
    let events = run
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::KubeEvent {
                kind,
                reason,
                message,
                ..
            } if is_topology_hints_reason(reason) => Some(HintEventSummary {
                t_s: e.t_s,
                kind: kind.to_string(),
                reason: reason.clone(),
                message: message.clone(),
            }),
            _ => None,
        })
        .collect();
    let flaps = measure::hint_flaps(run, Window::whole(run))
        .value
        .unwrap_or(0.0) as u64;
    HintsSummary { events, flaps }
}

fn series(run: &RunData) -> Series {
    let n = run.seconds();
    let mut s = Series {
        error_rate: vec![0.0; n],
        attempted: vec![0; n],
        hints_enabled: vec![false; n],
        ..Series::default()
    };
    let mut errors = vec![0u64; n];
    for pod in &run.pods {
        s.requests_per_pod.insert(pod.name.clone(), vec![0; n]);
    }
    for (_, second, row) in run.load_seconds() {
        if second >= n {
            continue;
        }
        s.attempted[second] += row.attempted;
        errors[second] += row
            .responses
            .iter()
            .filter(|(c, _)| !measure::is_success_key(c))
            .map(|(_, v)| v)
            .sum::<u64>()
            + row.transport_errors.values().sum::<u64>();
        for (pod, v) in &row.by_backend {
            s.requests_per_pod
                .entry(pod.clone())
                .or_insert_with(|| vec![0; n])[second] += v;
        }
    }
    for ((rate, attempted), failed) in s.error_rate.iter_mut().zip(&s.attempted).zip(&errors) {
        if *attempted > 0 {
            *rate = *failed as f64 / *attempted as f64;
        }
    }
    let mut enabled = false;
    let mut events = run.events.iter().peekable();
    for (i, slot) in s.hints_enabled.iter_mut().enumerate() {
        while let Some(e) = events.next_if(|e| e.t_s < (i + 1) as f64) {
            if let EventKind::Hints { enabled: on, .. } = e.kind {
                enabled = on;
            }
        }
        *slot = enabled;
    }
    s.destination_rps = destination_per_second(run, n);
    let steps = measure::replica_steps(run);
    s.replicas = (0..n)
        .map(|i| {
            steps
                .iter()
                .take_while(|(t, _)| *t < (i + 1) as f64)
                .last()
                .map_or(0, |(_, c)| *c)
        })
        .collect();
    for e in &run.events {
        if let EventKind::Action { name, description } = &e.kind {
            s.markers.push(Marker {
                t_s: e.t_s,
                label: name.clone().unwrap_or_else(|| description.clone()),
            });
        }
    }
    timeline_series(run, n).apply(&mut s);
    load_series(run, n, &mut s);
    s
}

/// Admitted requests per second over all sidecars, from their cumulative counters.
fn destination_per_second(run: &RunData, n: usize) -> Vec<f64> {
    let mut out = vec![0.0; n];
    for pod in &run.pods {
        let admitted_at = |t: f64| {
            pod.samples
                .iter()
                .take_while(|s| s.t_s <= t)
                .last()
                .map_or(0, |s| s.admitted)
        };
        for (i, slot) in out.iter_mut().enumerate() {
            let (a, b) = (admitted_at(i as f64), admitted_at((i + 1) as f64));
            *slot += b.saturating_sub(a) as f64;
        }
    }
    out
}

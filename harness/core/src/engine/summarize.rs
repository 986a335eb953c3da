//! Turns a run's data and expectation results into the [`Summary`]: totals, per-pod numbers,
//! skew, traffic matrix, hint events, per-second series and the sentences that explain the
//! verdict (failed expectations first, then what the control plane did).

use std::collections::BTreeMap;

use super::pod_views::{pod_destination, pod_load_balancer, pod_sources};
use super::series_views::{load_series, timeline_series};
use crate::measure::{self, EventKind, RunData, Window};
use crate::report::*;

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
}

/// Builds the summary.
pub fn summarize(facts: RunFacts, run: &RunData, expectations: Vec<ExpectationResult>) -> Summary {
    let whole = Window::whole(run);
    let failed: Vec<String> = expectations
        .iter()
        .filter(|e| !e.passed)
        .map(super::evaluate::explain_failure)
        .collect();
    let verdict = if failed.is_empty() && facts.partial_reason.is_none() {
        Verdict::Pass
    } else {
        Verdict::Fail
    };
    let mut explanation = failed;
    if let Some(reason) = &facts.partial_reason {
        explanation.insert(
            0,
            format!("the run was cut short ({reason}); numbers cover what ran"),
        );
    }
    if run
        .events
        .iter()
        .any(|e| matches!(e.kind, EventKind::Hints { .. }))
    {
        explanation.extend(control_plane_story(run));
    }
    explanation.extend(lifecycle_story(run));
    let skew = measure::skew(run, whole);
    if !skew.starved.is_empty() {
        explanation.push(format!(
            "starved over the whole run (< 10% of a fair share): {}",
            skew.starved.join(", ")
        ));
    }
    let (mut sources, unattributed) = pod_sources(run);
    let mut pods = pods(run, &skew);
    let mut balanced = pod_load_balancer(run);
    for pod in &mut pods {
        pod.source = sources.remove(&pod.name);
        pod.load_balancer = balanced.remove(&pod.name);
    }
    Summary {
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
        traffic_matrix: traffic_matrix(run),
        hints: hints(run),
        series: series(run),
        unattributed: (!run.generators.is_empty()).then_some(unattributed),
        invocation: None,
    }
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
        }
    }
    t
}

fn pods(run: &RunData, skew: &measure::SkewStats) -> Vec<PodSummary> {
    let counts = measure::requests_per_pod(run, Window::whole(run));
    let total: u64 = counts.values().sum();
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

fn traffic_matrix(run: &RunData) -> BTreeMap<String, BTreeMap<String, u64>> {
    let mut m: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    for (g, _, row) in run.load_seconds() {
        let zone = m.entry(g.zone.clone()).or_default();
        for (pod, n) in &row.by_backend {
            *zone.entry(pod.clone()).or_default() += n;
        }
    }
    m
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
            } if reason.starts_with("TopologyAwareHints") => Some(HintEventSummary {
                t_s: e.t_s,
                kind: kind.clone(),
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
            .filter(|(c, _)| !c.starts_with('2'))
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

/// Sentences about rollouts, kubelet warnings and autoscaling, e.g. "rollout of revision 1:
/// 3.0s to 3.4s" or "autoscaler: 4 → 8 replicas at 7.7s (demand 200 rps at the source, 79
/// processed at the destination)".
fn lifecycle_story(run: &RunData) -> Vec<String> {
    let mut story = Vec::new();
    let mut started: BTreeMap<u32, f64> = BTreeMap::new();
    let mut warnings: BTreeMap<String, usize> = BTreeMap::new();
    let mut scalings = Vec::new();
    for e in run.events.iter().filter(|e| e.t_s >= 0.0) {
        match &e.kind {
            EventKind::Rollout { revision, stage } if stage == "started" => {
                started.insert(*revision, e.t_s);
            }
            EventKind::Rollout { revision, stage } if stage == "complete" => {
                let from = started.remove(revision).unwrap_or(e.t_s);
                story.push(format!(
                    "rollout of revision {revision}: {from:.1}s to {:.1}s",
                    e.t_s
                ));
            }
            EventKind::KubeEvent { kind, reason, .. }
                if kind == "Warning" && !reason.starts_with("TopologyAwareHints") =>
            {
                *warnings.entry(reason.clone()).or_default() += 1;
            }
            EventKind::Autoscaler {
                current,
                desired,
                source_rps,
                destination_rps,
            } if current != desired => scalings.push(format!(
                "autoscaler: {current} → {desired} replicas at {:.1}s (demand {source_rps:.0} \
                 rps at the source, {destination_rps:.0} processed at the destination)",
                e.t_s
            )),
            _ => {}
        }
    }
    for (revision, from) in started {
        story.push(format!(
            "rollout of revision {revision} started at {from:.1}s and did not complete"
        ));
    }
    for (reason, n) in warnings {
        story.push(format!("{n}× {reason} (Warning)"));
    }
    if scalings.is_empty()
        && run
            .events
            .iter()
            .any(|e| matches!(e.kind, EventKind::Autoscaler { .. }))
    {
        story.push("autoscaler: never changed the replica count".into());
    }
    story.extend(scalings);
    story
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

/// Sentences about hints and reachability: the state at load start, then every change of the
/// hints with the event that explains it and who each zone's clients reach afterwards, e.g.
/// "12.0s: hints removed (TopologyAwareHintsDisabled: ...); clients in zone a reach 4 of 4".
fn control_plane_story(run: &RunData) -> Vec<String> {
    let mut story = Vec::new();
    let mut reach: BTreeMap<String, (Vec<String>, usize)> = BTreeMap::new();
    let mut hints_on = false;
    let mut told_start = false;
    let mut i = 0;
    while i < run.events.len() {
        let t = run.events[i].t_s;
        let group: Vec<&EventKind> = run.events[i..]
            .iter()
            .take_while(|e| e.t_s == t)
            .map(|e| &e.kind)
            .collect();
        i += group.len();
        if t >= 0.0 && !told_start {
            story.push(describe_state("at load start", hints_on, None, &reach));
            told_start = true;
        }
        let mut changed = None;
        let mut reason = None;
        for kind in &group {
            match kind {
                EventKind::Hints { enabled, .. } => {
                    if *enabled != hints_on {
                        changed = Some(*enabled);
                    }
                    hints_on = *enabled;
                }
                EventKind::Reachability {
                    zone,
                    pods,
                    ready_pods,
                } => {
                    reach.insert(zone.clone(), (pods.clone(), *ready_pods));
                }
                EventKind::KubeEvent {
                    reason: r, message, ..
                } => reason = Some(format!("{r}: {message}")),
                _ => {}
            }
        }
        if t >= 0.0
            && let Some(on) = changed
        {
            story.push(describe_state(&format!("{t:.1}s"), on, reason, &reach));
        }
    }
    if !told_start && !run.events.is_empty() {
        story.push(describe_state("at load start", hints_on, None, &reach));
    }
    story
}

fn describe_state(
    when: &str,
    hints_on: bool,
    reason: Option<String>,
    reach: &BTreeMap<String, (Vec<String>, usize)>,
) -> String {
    let mut line = format!("{when}: hints {}", if hints_on { "on" } else { "off" });
    if let Some(r) = reason {
        line.push_str(&format!(" ({r})"));
    }
    for (zone, (pods, ready)) in reach {
        line.push_str(&format!(
            "; clients in zone {zone} reach {} of {ready} ready pods",
            pods.len()
        ));
        if pods.len() < *ready {
            line.push_str(&format!(" ({})", pods.join(", ")));
        }
    }
    line
}

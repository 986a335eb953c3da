//! The sentences that explain a run's verdict, in the order a reader needs them: whether the
//! run was cut short, each failed expectation with its evidence, then what the control plane
//! did — hints and who each zone's clients reached, rollouts, kubelet warnings, the
//! autoscaler's decisions, the ingress replicas' list positions, reloads and readiness
//! failures — what still reached pods after they left the endpoints, which pods
//! starved, and the harness's own notes (a pod that did not start, a generator that did not).

use std::collections::BTreeMap;

use kube_model::EventType;
use kube_model::events::is_topology_hints_reason;

use super::evaluate::explain_failure;
use super::removals::removal_story;
use crate::clock::TimeScale;
use crate::measure::{EventKind, Removal, RolloutStage, RunData, SkewStats};
use crate::report::ExpectationResult;

/// Pod names a sentence shows before counting the rest (summary.json has every one).
const NAMES_SHOWN: usize = 8;

/// The explanation of a run: `partial_reason` when it was cut short. The control plane's
/// instants (hint changes, rollouts, the autoscaler's decisions) are told in Kubernetes time at
/// `scale`, the wall clock alongside.
pub fn explain(
    partial_reason: Option<&str>,
    scale: TimeScale,
    run: &RunData,
    expectations: &[ExpectationResult],
    skew: &SkewStats,
    removals: &[Removal],
) -> Vec<String> {
    let mut explanation = Vec::new();
    if let Some(reason) = partial_reason {
        explanation.push(format!(
            "the run was cut short ({reason}); numbers cover what ran"
        ));
    }
    explanation.extend(
        expectations
            .iter()
            .filter(|e| !e.passed)
            .map(explain_failure),
    );
    if run
        .events
        .iter()
        .any(|e| matches!(e.kind, EventKind::Hints { .. }))
    {
        explanation.extend(control_plane_story(run, scale));
    }
    explanation.extend(lifecycle_story(run, scale));
    explanation.extend(ingress_story(run));
    explanation.extend(super::failover::failover_story(run, scale));
    explanation.extend(removal_story(removals));
    explanation.extend(super::failover::streams_on_removed_pods(run, removals));
    if !skew.starved.is_empty() {
        explanation.push(format!(
            "starved over the whole run (< 10% of a fair share): {}{}",
            if skew.starved.len() > NAMES_SHOWN + 1 {
                format!("{} pods: ", skew.starved.len())
            } else {
                String::new()
            },
            crate::text::first_few(&skew.starved, NAMES_SHOWN)
        ));
    }
    explanation.extend(notes(run));
    explanation
}

/// The ingress replicas: requests by list position, how often HAProxy was reloaded and
/// restarted, and the readiness failures in time order (does unreadiness move from pod to pod).
fn ingress_story(run: &RunData) -> Vec<String> {
    let whole = crate::measure::Window::whole(run);
    if crate::measure::ingress_lists(run).is_empty() {
        return Vec::new();
    }
    let shares = crate::measure::position_shares(run, whole);
    let total = shares.total().max(1) as f64;
    let positions: Vec<String> = shares
        .by_rank
        .iter()
        .enumerate()
        .map(|(i, n)| format!("#{} {:.0}%", i + 1, *n as f64 * 100.0 / total))
        .collect();
    let (reloads, restarts, runtime) = crate::measure::ingress_changes(run, whole)
        .values()
        .fold((0, 0, 0), |a, c| (a.0 + c.0, a.1 + c.1, a.2 + c.2));
    let mut story = vec![format!(
        "ingress: requests by list position {}{}; {reloads} reloads, {restarts} restarts and {runtime} runtime-API updates during the load",
        positions.join(", "),
        shares
            .rank_correlation()
            .map(|r| format!(" (rank correlation {r:.2})"))
            .unwrap_or_default()
    )];
    let mut flips: Vec<(f64, String)> = crate::measure::readiness_flip_times(run, whole)
        .into_iter()
        .flat_map(|(pod, times)| times.into_iter().map(move |t| (t, pod.clone())))
        .collect();
    flips.sort_by(|a, b| a.0.total_cmp(&b.0));
    if !flips.is_empty() {
        let told: Vec<String> = flips
            .iter()
            .map(|(t, pod)| format!("{pod} {t:.1}s"))
            .collect();
        story.push(format!(
            "readiness failures in order: {}",
            crate::text::first_few(&told, 12)
        ));
    }
    story
}

/// The harness's notes, each once with how often and when it first happened.
fn notes(run: &RunData) -> Vec<String> {
    let mut seen: Vec<(&str, f64, usize)> = Vec::new();
    for e in &run.events {
        if let EventKind::Note { message } = &e.kind {
            match seen.iter_mut().find(|(m, _, _)| m == message) {
                Some(entry) => entry.2 += 1,
                None => seen.push((message, e.t_s, 1)),
            }
        }
    }
    seen.into_iter()
        .map(|(message, t, n)| match n {
            1 => format!("note at {t:.1}s: {message}"),
            n => format!("note ({n}×, first at {t:.1}s): {message}"),
        })
        .collect()
}

/// Sentences about rollouts, kubelet warnings and autoscaling, e.g. "rollout of revision 1:
/// 3.0s to 3.4s" or "autoscaler: 4 → 8 replicas at 7.7s (demand 200 rps at the source, 79
/// processed at the destination)".
fn lifecycle_story(run: &RunData, scale: TimeScale) -> Vec<String> {
    let at = |t: f64| scale.instant_text(t);
    let mut story = Vec::new();
    let mut started: BTreeMap<u32, f64> = BTreeMap::new();
    let mut warnings: BTreeMap<String, usize> = BTreeMap::new();
    let mut scalings = Vec::new();
    for e in run.events.iter().filter(|e| e.t_s >= 0.0) {
        match &e.kind {
            EventKind::Rollout {
                revision,
                stage: RolloutStage::Started,
            } => {
                started.insert(*revision, e.t_s);
            }
            EventKind::Rollout {
                revision,
                stage: RolloutStage::Complete,
            } => {
                let from = started.remove(revision).unwrap_or(e.t_s);
                story.push(format!(
                    "rollout of revision {revision}: {} to {}",
                    at(from),
                    at(e.t_s)
                ));
            }
            EventKind::KubeEvent { kind, reason, .. }
                if *kind == EventType::Warning && !is_topology_hints_reason(reason) =>
            {
                *warnings.entry(reason.clone()).or_default() += 1;
            }
            EventKind::Autoscaler {
                current,
                desired,
                source_rps,
                destination_rps,
                ..
            } if current != desired => scalings.push(format!(
                "autoscaler: {current} → {desired} replicas at {} (demand {source_rps:.0} \
                 rps at the source, {destination_rps:.0} processed at the destination)",
                at(e.t_s)
            )),
            _ => {}
        }
    }
    for (revision, from) in started {
        story.push(format!(
            "rollout of revision {revision} started at {} and did not complete",
            at(from)
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

/// Sentences about hints and reachability: the state at load start, then every change of the
/// hints with the event that explains it and who each zone's clients reach afterwards, e.g.
/// "12.0s: hints removed (TopologyAwareHintsDisabled: ...); clients in zone a reach 4 of 4".
fn control_plane_story(run: &RunData, scale: TimeScale) -> Vec<String> {
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
        // Changes at one instant count by their net effect (as `measure::hint_switches`).
        let before = hints_on;
        let mut reason = None;
        for kind in &group {
            match kind {
                EventKind::Hints { enabled, .. } => {
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
        if t >= 0.0 && hints_on != before {
            story.push(describe_state(
                &scale.instant_text(t),
                hints_on,
                reason,
                &reach,
            ));
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
            line.push_str(&format!(" ({})", crate::text::first_few(pods, NAMES_SHOWN)));
        }
    }
    line
}

//! `harness plan`: what a run would do, predicted on the control-plane models alone (no process
//! is started): where each pod lands, the zone CPU ratios, the hints and the pods each zone's
//! clients reach at load start and after every timeline action. New pods are assumed ready at
//! once, so the prediction shows the steady state each action leads to.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;

use std::time::Duration;

use crate::control_plane::cluster::{Applied, ClusterModel, PodOp};
use crate::control_plane::placement::Unschedulable;
use crate::measure::EventKind;
use crate::scenario::model::Scenario;

/// The control plane at one point of the plan.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanStep {
    /// Seconds from load start; `None` for the initial deployment.
    pub at_s: Option<f64>,
    pub label: String,
    /// Pod → node (zone).
    pub pods: BTreeMap<String, String>,
    pub zone_cpu_ratios: Option<BTreeMap<String, f64>>,
    pub hints_enabled: bool,
    /// Pod → forZones.
    pub hints: BTreeMap<String, Vec<String>>,
    /// Zone → pods its clients reach.
    pub reachable_from: BTreeMap<String, Vec<String>>,
    /// Kubernetes events this step would record (reason: message).
    pub events: Vec<String>,
}

/// The whole prediction.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub scenario: String,
    pub variant: Option<String>,
    pub generators: Vec<String>,
    pub steps: Vec<PlanStep>,
}

/// Predicts the run of `scenario`.
pub fn plan(scenario: &Scenario, seed: u64) -> Result<Plan, Unschedulable> {
    let mut model = ClusterModel::new(scenario, seed);
    let mut steps = Vec::new();
    let created = model.create_pods(scenario.service.replicas)?;
    let events = settle(&mut model, created, Duration::ZERO)?;
    steps.push(step(&model, scenario, None, "deploy".into(), &events));
    for event in &scenario.timeline {
        model.set_time(event.at);
        let applied = model.apply(&event.action)?;
        let events = settle(&mut model, applied, event.at)?;
        steps.push(step(
            &model,
            scenario,
            Some(event.at.as_secs_f64()),
            event.to_string(),
            &events,
        ));
    }
    Ok(Plan {
        scenario: scenario.name.clone(),
        variant: scenario.selected_variant.clone(),
        generators: scenario
            .load
            .generators
            .iter()
            .map(|g| {
                format!(
                    "{} in {}: {:?}, {} connections ({:?}), {} SSE streams",
                    g.name, g.zone, g.rate, g.connections, g.connection_model, g.sse_streams
                )
            })
            .collect(),
        steps,
    })
}

/// Plays the applied operations to a steady state: new pods become ready, deleted ones go,
/// and a rollout runs to completion (time advancing past minReadySeconds each pass).
fn settle(
    model: &mut ClusterModel,
    first: Applied,
    start: Duration,
) -> Result<Vec<EventKind>, Unschedulable> {
    let mut events = first.events;
    let mut ops = first.pod_ops;
    let mut now = start;
    // Each pass makes progress; a rollout of n pods needs at most about 2n passes.
    for _ in 0..10_000 {
        if ops.is_empty() && !model.rollout_in_progress() {
            break;
        }
        for op in std::mem::take(&mut ops) {
            match op {
                PodOp::Start { pod, .. } => events.extend(model.set_pod_ready(&pod, true)),
                PodOp::Stop { pod, .. } => events.extend(model.pod_gone(&pod)),
            }
        }
        now += Duration::from_secs(1) + model.min_ready();
        model.set_time(now);
        let step = model.rollout_step()?;
        events.extend(step.events);
        ops = step.pod_ops;
    }
    Ok(events)
}

fn step(
    model: &ClusterModel,
    scenario: &Scenario,
    at_s: Option<f64>,
    label: String,
    events: &[EventKind],
) -> PlanStep {
    let ep = model.endpoints();
    PlanStep {
        at_s,
        label,
        pods: ep
            .pods()
            .map(|p| (p.name.clone(), format!("{} ({})", p.node, p.zone)))
            .collect(),
        zone_cpu_ratios: ep.zone_cpu_ratios().cloned(),
        hints_enabled: ep.hints_enabled(),
        hints: ep.hints().clone(),
        reachable_from: scenario
            .cluster
            .zones
            .iter()
            .map(|z| (z.clone(), ep.reachable_from(z).to_vec()))
            .collect(),
        events: events
            .iter()
            .filter_map(|e| match e {
                EventKind::KubeEvent {
                    reason, message, ..
                } => Some(format!("{reason}: {message}")),
                _ => None,
            })
            .collect(),
    }
}

impl Plan {
    /// Readable text.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let variant = self
            .variant
            .as_deref()
            .map(|v| format!(" (variant {v})"))
            .unwrap_or_default();
        let _ = writeln!(out, "plan for {}{variant}", self.scenario);
        for g in &self.generators {
            let _ = writeln!(out, "  load: {g}");
        }
        for s in &self.steps {
            let when = s
                .at_s
                .map(|t| format!("at {t:.1}s"))
                .unwrap_or_else(|| "before load".into());
            let _ = writeln!(out, "\n{when}: {}", s.label);
            let ratios = match &s.zone_cpu_ratios {
                Some(r) => r
                    .iter()
                    .map(|(z, v)| format!("{z}={v:.3}"))
                    .collect::<Vec<_>>()
                    .join(" "),
                None => "none (insufficient node information)".into(),
            };
            let _ = writeln!(out, "  zone CPU ratios: {ratios}");
            let _ = writeln!(
                out,
                "  hints: {}",
                if s.hints_enabled { "enabled" } else { "none" }
            );
            for (pod, place) in &s.pods {
                let zones = s
                    .hints
                    .get(pod)
                    .map(|z| format!(" forZones={}", z.join(",")))
                    .unwrap_or_default();
                let _ = writeln!(out, "    {pod} on {place}{zones}");
            }
            for (zone, pods) in &s.reachable_from {
                let _ = writeln!(
                    out,
                    "  clients in {zone} reach {} pod(s): {}",
                    pods.len(),
                    pods.join(", ")
                );
            }
            for e in &s.events {
                let _ = writeln!(out, "  event {e}");
            }
        }
        out
    }
}

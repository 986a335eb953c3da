//! `harness plan`: what a run would do, predicted on the control-plane models alone (no process
//! is started): where each pod lands, the zone CPU ratios, the hints and the pods each zone's
//! clients reach at load start and after every timeline action, how long each rollout takes
//! (its waves, each a pod start-up and its probes: `service.startup`, `readinessProbe`), and
//! warnings about what a reader would want to know before running (`warnings`). Between
//! actions the plan shows the steady state each action leads to. Text is rendered by
//! `text`; the JSON is these types.

mod network;
mod text;
mod warnings;

use std::collections::BTreeMap;

use serde::Serialize;

use std::time::Duration;

use crate::control_plane::cluster::{Applied, ClusterModel, PodOp};
use crate::control_plane::placement::Unschedulable;
use crate::measure::{EventKind, RolloutStage};
use crate::scenario::model::{ConnectionModel, Rate, Scenario, Via};
use crate::text::natural_key;
use warnings::warnings;

/// Where a pod runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanPod {
    pub node: String,
    pub zone: String,
}

/// A rollout as the plan plays it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanRollout {
    /// Rounds of new pods, each waiting for the previous round to be ready.
    pub waves: u32,
    /// From the action to the rollout's completion (Kubernetes time).
    pub duration_s: f64,
}

/// The control plane at one point of the plan.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanStep {
    /// Seconds from load start; `None` for the initial deployment.
    pub at_s: Option<f64>,
    pub label: String,
    pub pods: BTreeMap<String, PlanPod>,
    /// Pods this step deleted and created, in order.
    pub deleted: Vec<String>,
    pub created: Vec<String>,
    pub zone_cpu_ratios: Option<BTreeMap<String, f64>>,
    pub hints_enabled: bool,
    /// Pod → forZones.
    pub hints: BTreeMap<String, Vec<String>>,
    /// Zone → pods kube-proxy there sends new connections to.
    pub reachable_from: BTreeMap<String, Vec<String>>,
    /// Set when this step rolls out a new revision.
    pub rollout: Option<PlanRollout>,
    /// Kubernetes events this step would record (reason: message), and the harness's notes.
    pub events: Vec<String>,
}

/// A generator as the plan shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanGenerator {
    pub name: String,
    pub zone: String,
    pub rate: PlanRate,
    pub connections: u32,
    pub connection_model: ConnectionModel,
    pub sse_streams: u32,
    pub via: Via,
    pub start_at_s: f64,
}

/// A generator's request rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum PlanRate {
    /// Requests per second, open loop.
    PerSecond(f64),
    /// Closed loop: as fast as the connections allow.
    Max,
    /// Open loop, from `from` to `to` requests per second over the load.
    Ramp { from: f64, to: f64 },
}

impl From<Rate> for PlanRate {
    fn from(rate: Rate) -> Self {
        match rate {
            Rate::PerSecond(r) => PlanRate::PerSecond(r),
            Rate::Max => PlanRate::Max,
            Rate::Ramp { from, to } => PlanRate::Ramp { from, to },
        }
    }
}

/// The whole prediction.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub scenario: String,
    pub variant: Option<String>,
    pub generators: Vec<PlanGenerator>,
    /// From a pod's creation to its readiness: the start-up latency, then the probes.
    pub pod_ready_after_s: f64,
    pub steps: Vec<PlanStep>,
    /// What a reader would want to know before running.
    pub warnings: Vec<String>,
}

/// Predicts the run of `scenario`.
pub fn plan(scenario: &Scenario, seed: u64) -> Result<Plan, Unschedulable> {
    let mut model = ClusterModel::new(scenario, seed);
    let ready_after = pod_ready_after(scenario);
    let mut steps = Vec::new();
    let created = model.create_pods(scenario.service.replicas)?;
    let settled = settle(
        &mut model,
        created,
        Duration::ZERO,
        Timing {
            ready_after,
            reprobe_after: reprobe_after(scenario),
        },
    )?;
    steps.push(step(&model, scenario, None, "deploy".into(), settled));
    let timing = Timing {
        ready_after,
        reprobe_after: reprobe_after(scenario),
    };
    for event in &scenario.timeline {
        steps.extend(timers_before(&mut model, scenario, event.at, timing)?);
        model.set_time(event.at);
        let applied = model.apply(&event.action)?;
        let settled = settle(&mut model, applied, event.at, timing)?;
        steps.push(step(
            &model,
            scenario,
            Some(event.at.as_secs_f64()),
            event.to_string(),
            settled,
        ));
    }
    steps.extend(timers_before(
        &mut model,
        scenario,
        scenario.load.duration,
        timing,
    )?);
    let mut plan = Plan {
        scenario: scenario.name.clone(),
        variant: scenario.selected_variant.clone(),
        generators: scenario
            .load
            .generators
            .iter()
            .map(|g| PlanGenerator {
                name: g.name.clone(),
                zone: g.zone.clone(),
                rate: g.rate.into(),
                connections: g.connections,
                connection_model: g.connection_model,
                sse_streams: g.sse_streams,
                via: g.via,
                start_at_s: g.start_at.as_secs_f64(),
            })
            .collect(),
        pod_ready_after_s: ready_after.as_secs_f64(),
        steps,
        warnings: Vec::new(),
    };
    plan.warnings = warnings(scenario, &plan);
    Ok(plan)
}

/// From a pod's creation to its readiness when its probes pass: the start-up latency, then
/// the probe runs up to `successThreshold` passes; with the load balancer's readiness gate
/// also its registration ([`gate_after`]).
pub fn pod_ready_after(scenario: &Scenario) -> Duration {
    let probe = scenario.service.readiness_probe;
    scenario.service.startup.latency
        + probe.timing().ready_after(probe.success_threshold)
        + gate_after(scenario)
}

/// With `loadBalancer.readinessGate`: from the containers' readiness to the target's health,
/// the registration lag plus, with health checks, up to one interval until the first check
/// passes (the load balancer's target group takes one passed check for a new target).
/// Zero without the gate.
pub fn gate_after(scenario: &Scenario) -> Duration {
    match &scenario.load_balancer {
        Some(lb) if lb.readiness_gate => {
            lb.registration_lag
                + lb.health_check
                    .as_ref()
                    .map(|h| h.interval)
                    .unwrap_or_default()
        }
        _ => Duration::ZERO,
    }
}

/// How long pods take to turn ready in the plan.
#[derive(Debug, Clone, Copy)]
struct Timing {
    /// A new pod, from its creation ([`pod_ready_after`]).
    ready_after: Duration,
    /// A pod whose kubelet came back ([`reprobe_after`]).
    reprobe_after: Duration,
}

/// From a kubelet's return to its pods' readiness, at the latest: the restarted probe worker's
/// first run comes within one period, then `successThreshold − 1` more periods
/// (`kube_model::node_lifecycle::ready_after_restart` with the longest jitter); with the load
/// balancer's readiness gate also its registration.
pub fn reprobe_after(scenario: &Scenario) -> Duration {
    let probe = scenario.service.readiness_probe;
    kube_model::node_lifecycle::ready_after_restart(probe.period, probe.success_threshold, 1.0)
        + gate_after(scenario)
}

/// What happens between actions, before `until`: each taint-based eviction as a step of its
/// own.
fn timers_before(
    model: &mut ClusterModel,
    scenario: &Scenario,
    until: Duration,
    timing: Timing,
) -> Result<Vec<PlanStep>, Unschedulable> {
    let mut steps = Vec::new();
    // Each eviction ends its node's timer; a run has a bounded number of nodes.
    for _ in 0..scenario.cluster.nodes.len() + 1 {
        let Some(at) = model.next_timer().filter(|at| *at < until) else {
            break;
        };
        model.set_time(at);
        let nodes = model.evictions_due().join(", ");
        let applied = model.advance()?;
        let settled = settle(model, applied, at, timing)?;
        steps.push(step(
            model,
            scenario,
            Some(at.as_secs_f64()),
            format!(
                "taint-based eviction: the pods on {nodes} outlast their {} toleration of the NotReady node",
                crate::scenario::units::format_duration(scenario.service.not_ready_toleration)
            ),
            settled,
        ));
    }
    Ok(steps)
}

/// What settling one step produced.
struct Settled {
    events: Vec<EventKind>,
    rollout: Option<PlanRollout>,
}

/// Plays the applied operations to a steady state: deleted pods go (as far as the rollout
/// counts them: at once) and the Deployment controller reacts at the same instant; new pods
/// become ready `ready_after` later, a wave at a time; a rollout runs to completion.
fn settle(
    model: &mut ClusterModel,
    first: Applied,
    start: Duration,
    timing: Timing,
) -> Result<Settled, Unschedulable> {
    let Timing {
        ready_after,
        reprobe_after,
    } = timing;
    let mut events = first.events;
    let mut ops = first.pod_ops;
    let mut now = start;
    let mut waves = 0;
    let mut completed = None;
    let mut pending: Vec<String> = Vec::new();
    let mut reprobed: Vec<String> = Vec::new();
    let rollout_started = events.iter().any(|e| is_rollout(e, RolloutStage::Started));
    // Each pass makes progress; a rollout of n pods needs at most about 4n passes.
    for _ in 0..10_000 {
        let acted = !ops.is_empty();
        for op in std::mem::take(&mut ops) {
            match op {
                PodOp::Start { pod, .. } => pending.push(pod),
                PodOp::Stop { pod, .. } => events.extend(model.pod_gone(&pod)),
                PodOp::Kubelet {
                    running: true,
                    pods,
                    ..
                } => reprobed.extend(pods),
                PodOp::Kubelet { running: false, .. } => {}
            }
        }
        if !acted && !reprobed.is_empty() {
            // The returned kubelet's probes pass: its pods are ready again.
            let back = now + reprobe_after;
            model.set_time(back);
            for pod in reprobed.drain(..) {
                events.extend(model.set_pod_ready(&pod, true));
                events.extend(model.set_target_healthy(&pod, true));
            }
            model.set_time(now);
            continue;
        }
        if !acted {
            // Nothing more happens at this instant.
            if pending.is_empty() {
                if !model.rollout_in_progress() {
                    break;
                }
                // Waiting for minReadySeconds (or a pod that cannot be scheduled yet).
                now += model.min_ready().max(Duration::from_secs(1));
            } else {
                // The new pods start and turn ready: one wave.
                waves += 1;
                now += ready_after;
                model.set_time(now);
                for pod in pending.drain(..) {
                    events.extend(model.set_pod_ready(&pod, true));
                    // With the gate, `ready_after` includes the registration.
                    events.extend(model.set_target_healthy(&pod, true));
                }
                now += model.min_ready();
            }
            model.set_time(now);
        }
        // The Deployment controller reacts (again, at the same instant, until it has nothing
        // more to do then).
        let step = model.rollout_step()?;
        if step
            .events
            .iter()
            .any(|e| is_rollout(e, RolloutStage::Complete))
        {
            completed = Some(now);
        }
        events.extend(step.events);
        ops = step.pod_ops;
    }
    let rollout = match (rollout_started, completed) {
        (true, Some(done)) => Some(PlanRollout {
            waves,
            duration_s: (done - start).as_secs_f64(),
        }),
        _ => None,
    };
    Ok(Settled { events, rollout })
}

fn is_rollout(event: &EventKind, stage: RolloutStage) -> bool {
    matches!(event, EventKind::Rollout { stage: s, .. } if *s == stage)
}

fn step(
    model: &ClusterModel,
    scenario: &Scenario,
    at_s: Option<f64>,
    label: String,
    settled: Settled,
) -> PlanStep {
    let ep = model.endpoints();
    let mut deleted = Vec::new();
    let mut created = Vec::new();
    let mut notes = Vec::new();
    for e in &settled.events {
        match e {
            EventKind::Pod {
                pod, created: true, ..
            } => created.push(pod.clone()),
            EventKind::Pod {
                pod,
                created: false,
                ..
            } => deleted.push(pod.clone()),
            EventKind::KubeEvent {
                reason, message, ..
            } => notes.push(format!("{reason}: {message}")),
            EventKind::Note { message } => notes.push(format!("note: {message}")),
            _ => {}
        }
    }
    deleted.sort_by(|a, b| natural_key(a).cmp(&natural_key(b)));
    created.sort_by(|a, b| natural_key(a).cmp(&natural_key(b)));
    notes.extend(network::notes(model, scenario));
    PlanStep {
        at_s,
        label,
        pods: ep
            .pods()
            .map(|p| {
                (
                    p.name.clone(),
                    PlanPod {
                        node: p.node.clone(),
                        zone: p.zone.clone(),
                    },
                )
            })
            .collect(),
        deleted,
        created,
        zone_cpu_ratios: ep.zone_cpu_ratios().cloned(),
        hints_enabled: ep.hints_enabled(),
        hints: ep.hints().clone(),
        reachable_from: scenario
            .cluster
            .zones
            .iter()
            .map(|z| (z.clone(), ep.reachable_from(z).to_vec()))
            .collect(),
        rollout: settled.rollout,
        events: notes,
    }
}

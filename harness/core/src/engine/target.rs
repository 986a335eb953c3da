//! The boundary between the engine and a target (local processes, or a kind cluster): a small
//! async trait, and the capability set checked before anything runs, so a scenario asking for
//! something a target cannot do is refused up front rather than skipped.

use std::collections::BTreeSet;
use std::fmt;
use std::path::PathBuf;

use crate::clock::{RunClock, TimeScale};
use crate::measure::RunData;
use crate::scenario::model::{Action, Routing, Scenario, TimelineEvent, Via};

/// Something a scenario may need from a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Capability {
    Sidecar,
    Sse,
    ReadinessOnSaturation,
    TopologyModeAuto,
    TrafficDistribution,
    NodeReadiness,
    AddNode,
    RemoveNode,
    RelabelNode,
    SetAllocatableCpu,
    Scale,
    KillPod,
    Rollout,
    Autoscaler,
    LoadBalancer,
    /// HAProxy ingress replicas (`ingress`, `via: ingress`, `reloadIngress`,
    /// `restartIngress`).
    Ingress,
    /// Running the control plane faster than Kubernetes does (a time scale below 1).
    TimeScale,
    /// Delay, loss and partitions between zones (`zoneNetwork`).
    ZoneNetwork,
}

impl Capability {
    /// Every capability there is (a target that can do everything returns these).
    pub const ALL: [Capability; 18] = [
        Capability::Sidecar,
        Capability::Sse,
        Capability::ReadinessOnSaturation,
        Capability::TopologyModeAuto,
        Capability::TrafficDistribution,
        Capability::NodeReadiness,
        Capability::AddNode,
        Capability::RemoveNode,
        Capability::RelabelNode,
        Capability::SetAllocatableCpu,
        Capability::Scale,
        Capability::KillPod,
        Capability::Rollout,
        Capability::Autoscaler,
        Capability::LoadBalancer,
        Capability::Ingress,
        Capability::TimeScale,
        Capability::ZoneNetwork,
    ];
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            Capability::Sidecar => "the concurrency-limiting sidecar (service.sidecar)",
            Capability::Sse => "SSE streams (service.sse / sseStreams)",
            Capability::ReadinessOnSaturation => {
                "readiness on saturation (sidecar.readinessOnSaturation)"
            }
            Capability::TopologyModeAuto => "Topology Aware Routing (routing.topologyMode: Auto)",
            Capability::TrafficDistribution => "spec.trafficDistribution routing",
            Capability::NodeReadiness => "the setNodeReady action",
            Capability::AddNode => "the addNode action",
            Capability::RemoveNode => "the removeNode action",
            Capability::RelabelNode => "the relabelNode action",
            Capability::SetAllocatableCpu => "the setAllocatableCpu action",
            Capability::Scale => "the scale action",
            Capability::KillPod => "the killPod action",
            Capability::Rollout => "the rollout action",
            Capability::Autoscaler => "the HorizontalPodAutoscaler (service.autoscaler)",
            Capability::LoadBalancer => "the load balancer (loadBalancer / via: loadBalancer)",
            Capability::Ingress => {
                "HAProxy ingress replicas (ingress / via: ingress / reloadIngress / restartIngress): \
                 they run the real `haproxy` program, which must be on PATH (Debian/Ubuntu: \
                 `apt-get install haproxy`, HAProxy 2.4 or later)"
            }
            Capability::ZoneNetwork => "network faults between zones (the zoneNetwork action)",
            Capability::TimeScale => {
                "a time scale below 1 (--time-scale / timeScale): its controllers, kubelets and \
                 load balancers keep their own clocks, so run with --time-scale 1"
            }
        };
        f.write_str(text)
    }
}

/// Everything `scenario` needs when run at `time_scale`.
pub fn requirements(scenario: &Scenario, time_scale: TimeScale) -> BTreeSet<Capability> {
    let mut needs = BTreeSet::new();
    if !time_scale.is_real() {
        needs.insert(Capability::TimeScale);
    }
    if let Some(sidecar) = &scenario.service.sidecar {
        needs.insert(Capability::Sidecar);
        if sidecar.readiness_on_saturation.is_some() {
            needs.insert(Capability::ReadinessOnSaturation);
        }
    }
    if scenario.service.sse.is_some() || scenario.load.generators.iter().any(|g| g.sse_streams > 0)
    {
        needs.insert(Capability::Sse);
    }
    match scenario.service.routing {
        Routing::None => {}
        Routing::TopologyModeAuto => {
            needs.insert(Capability::TopologyModeAuto);
        }
        Routing::TrafficDistribution(_) => {
            needs.insert(Capability::TrafficDistribution);
        }
    }
    if scenario.service.autoscaler.is_some() {
        needs.insert(Capability::Autoscaler);
    }
    if scenario.load_balancer.is_some()
        || scenario
            .load
            .generators
            .iter()
            .any(|g| g.via == Via::LoadBalancer)
    {
        needs.insert(Capability::LoadBalancer);
    }
    if scenario.ingress.is_some()
        || scenario
            .load
            .generators
            .iter()
            .any(|g| g.via == Via::Ingress)
    {
        needs.insert(Capability::Ingress);
    }
    for event in &scenario.timeline {
        needs.insert(match event.action {
            Action::SetNodeReady { .. } => Capability::NodeReadiness,
            Action::AddNode { .. } => Capability::AddNode,
            Action::RemoveNode { .. } => Capability::RemoveNode,
            Action::RelabelNode { .. } => Capability::RelabelNode,
            Action::SetAllocatableCpu { .. } => Capability::SetAllocatableCpu,
            Action::Scale { .. } => Capability::Scale,
            Action::KillPod { .. } | Action::KillPickedPod { .. } => Capability::KillPod,
            Action::Rollout(_) => Capability::Rollout,
            Action::ReloadIngress(_) | Action::RestartIngress(_) => Capability::Ingress,
            Action::ZoneNetwork(_) => Capability::ZoneNetwork,
        });
    }
    needs
}

/// Where and how a run happens.
#[derive(Debug, Clone)]
pub struct RunContext {
    pub run_id: String,
    /// Output directory of this run (reports, logs).
    pub out_dir: PathBuf,
    pub seed: u64,
    /// The control-plane time scale of this run (the one place it is kept; the scenario stays
    /// in Kubernetes time).
    pub time_scale: TimeScale,
}

/// A pod as the target sees it at an instant (for live progress).
#[derive(Debug, Clone, PartialEq)]
pub struct PodObservation {
    pub name: String,
    pub zone: String,
    pub ready: bool,
    pub in_flight: u64,
    pub queue_depth: u64,
    pub max_concurrency: u64,
}

/// A snapshot for progress display.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observation {
    pub pods: Vec<PodObservation>,
    pub hints_enabled: bool,
    /// Requests the load generators sent per second since the previous observation (the
    /// source side); `None` until two observations are apart.
    pub achieved_rps: Option<f64>,
    /// Of the requests that completed since the previous observation, the share that failed
    /// (non-2xx or transport error); `None` when none completed.
    pub error_rate: Option<f64>,
}

/// Any error a target's operation can fail with (a `LocalError`, a `kube::Error`, an I/O
/// error...), kept whole so callers can still downcast it and read its status or command.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A target failed (process, port, API server...): an infrastructure error. `operation` says
/// what the target was doing; the cause is the [`std::error::Error::source`].
#[derive(Debug, thiserror::Error)]
#[error("{operation}")]
pub struct TargetError {
    /// What failed, e.g. "starting the pods" or "applying `kill pod-3`".
    pub operation: String,
    #[source]
    pub source: BoxError,
}

impl TargetError {
    /// `operation` failed because of `source`.
    pub fn new(operation: impl Into<String>, source: impl Into<BoxError>) -> Self {
        TargetError {
            operation: operation.into(),
            source: source.into(),
        }
    }
}

/// A place scenarios run. Methods are called in this order: `deploy`, `start_load`, any
/// number of `act`/`observe`, `collect`, `teardown` (always, also after a failure).
#[allow(async_fn_in_trait)]
pub trait Target {
    /// `local`, `kind`.
    fn name(&self) -> &'static str;
    /// What this target can do.
    fn capabilities(&self) -> BTreeSet<Capability>;
    /// What this target refuses in `scenario` at `time_scale` although it has the
    /// capabilities (e.g. a duration a cluster holds in whole seconds that does not scale to
    /// one): each a sentence naming the field and the fix. Checked with the capabilities,
    /// before anything starts.
    fn refusals(&self, _scenario: &Scenario, _time_scale: TimeScale) -> Vec<String> {
        Vec::new()
    }
    /// What the target refuses after asking outside before anything is created (a cluster's
    /// version, say): sentences as [`Target::refusals`]'. An `Err` is a failure to ask (exit 3).
    async fn preflight(
        &mut self,
        _scenario: &Scenario,
        _ctx: &RunContext,
    ) -> Result<Vec<String>, TargetError> {
        Ok(Vec::new())
    }
    /// What the run should know before it starts but need not stop it (a machine close to
    /// its limits, say): sentences, printed at the start and kept as the run's notes. Asked
    /// after the refusals and the preflight passed.
    fn warnings(&self, _scenario: &Scenario, _ctx: &RunContext) -> Vec<String> {
        Vec::new()
    }
    /// Creates the cluster state and the Service's pods, and waits until they are ready.
    async fn deploy(&mut self, scenario: &Scenario, ctx: &RunContext) -> Result<(), TargetError>;
    /// Starts the load generators: they run `clock.warmup + clock.duration`.
    async fn start_load(&mut self, clock: &RunClock) -> Result<(), TargetError>;
    /// Applies one timeline action now.
    async fn act(&mut self, event: &TimelineEvent) -> Result<(), TargetError>;
    /// A snapshot for progress.
    async fn observe(&mut self) -> Result<Observation, TargetError>;
    /// Waits for the generators (or stops them early when `interrupted`) and gathers the data.
    async fn collect(&mut self, interrupted: bool) -> Result<RunData, TargetError>;
    /// Stops and removes everything the run created.
    async fn teardown(&mut self) -> Result<(), TargetError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_errors_keep_their_cause_whole() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let e = TargetError::new("scraping pod-1", io);
        assert_eq!(e.to_string(), "scraping pod-1");
        let cause = std::error::Error::source(&e).expect("a source");
        let io = cause
            .downcast_ref::<std::io::Error>()
            .expect("the original error type survives");
        assert_eq!(io.kind(), std::io::ErrorKind::ConnectionRefused);
        assert_eq!(crate::text::error_chain(&e), "scraping pod-1: refused");
    }
}

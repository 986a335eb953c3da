//! The typed scenario the engine consumes: validated, defaults applied, durations as
//! `Duration`, CPU as millicores, choices as enums, windows resolved to offsets from load start.
//! Built only from a file that passed every check (`scenario::load_scenario`).

mod autoscaler;
mod cost;
mod display;
pub mod hops;
mod ingress;
mod load_balancer;
mod workload;
mod zone_network;
mod zone_slice;

use std::time::Duration;

pub use super::format::{
    ConnectionModel, MetricName as Metric, PodPick, TopologyKey, TrafficDistribution, Via,
    WhenUnsatisfiable,
};
pub use autoscaler::{
    Autoscaler, Behavior, PolicyKind, Reporter, ScalingPolicy, ScalingRules, SelectPolicy,
};
pub use cost::Cost;
pub use ingress::{Ingress, IngressReplicas};
pub use load_balancer::{HealthCheck, LoadBalancer};
pub use workload::{
    App, IntOrPercent, PreStop, RolloutChange, RolloutStrategy, Termination, exec_runtime,
};
pub use zone_network::{Link, ZoneFault, ZoneNetworkChange, ZoneScope, link};
pub use zone_slice::ZoneSlice;

/// A validated scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.description`.
    pub description: Option<String>,
    /// The variant applied to the base document, if any.
    pub selected_variant: Option<String>,
    /// Every variant the file defines, in file order.
    pub variant_names: Vec<String>,
    pub cluster: Cluster,
    pub service: Service,
    pub load: Load,
    /// `None`: no load balancer (every generator goes through kube-proxy).
    pub load_balancer: Option<LoadBalancer>,
    /// `None`: no ingress replicas.
    pub ingress: Option<Ingress>,
    /// `cost`: the price of cross-zone bytes (0.01 USD per GB by default).
    pub cost: Cost,
    /// Changes during the load, in time order.
    pub timeline: Vec<TimelineEvent>,
    pub expectations: Vec<Expectation>,
    /// `timeScale`, in (0, 1] (default 1): only the default for `harness run --time-scale`.
    /// The scenario itself always stays in Kubernetes time; the scale of a run is kept in its
    /// `RunContext` and applied where a target sleeps and where the engine maps the clock
    /// (see `engine::time_scale`).
    pub time_scale: f64,
}

impl Scenario {
    /// Every variant the file defines, in file order.
    pub fn variant_names(&self) -> &[String] {
        &self.variant_names
    }

    /// Whether the timeline changes the network between zones (`zoneNetwork`).
    pub fn has_zone_faults(&self) -> bool {
        self.timeline
            .iter()
            .any(|e| matches!(e.action, Action::ZoneNetwork(_)))
    }
}

/// The cluster at load start.
#[derive(Debug, Clone, PartialEq)]
pub struct Cluster {
    /// Zone names, in file order.
    pub zones: Vec<String>,
    /// Every node: control-plane nodes first, then workers zone by zone, in file order.
    pub nodes: Vec<Node>,
}

impl Cluster {
    /// The node called `name`.
    pub fn node(&self, name: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.name == name)
    }

    /// Worker nodes (where service pods may run).
    pub fn workers(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter().filter(|n| n.role == NodeRole::Worker)
    }

    /// Every node (of either role) in `zone`.
    pub fn nodes_in_zone<'a>(&'a self, zone: &'a str) -> impl Iterator<Item = &'a Node> {
        self.nodes.iter().filter(move |n| n.zone == zone)
    }
}

/// A node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub name: String,
    /// The value of its `topology.kubernetes.io/zone` label.
    pub zone: String,
    /// `status.allocatable.cpu` in millicores.
    pub allocatable_millicpu: u64,
    /// The Ready condition.
    pub ready: bool,
    pub role: NodeRole,
}

/// Whether a node runs workloads or is a (labelled) control-plane node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeRole {
    Worker,
    /// Labelled `node-role.kubernetes.io/control-plane`: no service pods, excluded from hints.
    ControlPlane,
}

/// The service under test.
#[derive(Debug, Clone, PartialEq)]
pub struct Service {
    pub name: String,
    /// Pods at load start, named `pod-0` .. `pod-<replicas-1>`.
    pub replicas: u32,
    pub placement: Placement,
    pub routing: Routing,
    /// `None`: no sidecar, requests reach the service directly.
    pub sidecar: Option<Sidecar>,
    pub service_time: ServiceTime,
    /// `None`: the service offers no SSE streams.
    pub sse: Option<Sse>,
    pub readiness_probe: ReadinessProbe,
    /// How a new pod starts.
    pub startup: Startup,
    /// The pods' toleration of a NotReady or unreachable node before taint-based eviction
    /// (`service.notReadyToleration`).
    pub not_ready_toleration: Duration,
    /// The Deployment's rolling-update strategy.
    pub rollout: RolloutStrategy,
    pub termination: Termination,
    pub app: App,
    /// `None`: no HorizontalPodAutoscaler; the replica count changes only by `scale` actions.
    pub autoscaler: Option<Autoscaler>,
}

/// Where pods may run. Empty `zones`/`nodes` mean "no restriction".
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Placement {
    pub zones: Vec<String>,
    /// Worker node names.
    pub nodes: Vec<String>,
    pub topology_spread_constraints: Vec<SpreadConstraint>,
}

/// A pod topology spread constraint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpreadConstraint {
    pub max_skew: u32,
    pub topology_key: TopologyKey,
    pub when_unsatisfiable: WhenUnsatisfiable,
}

/// How kube-proxy narrows the endpoints a client may reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Routing {
    /// Every ready endpoint, from every zone.
    None,
    /// `service.kubernetes.io/topology-mode: Auto`: EndpointSlice hints by zone CPU share.
    TopologyModeAuto,
    /// `spec.trafficDistribution`.
    TrafficDistribution(TrafficDistribution),
}

/// The sidecar's admission control.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sidecar {
    pub max_concurrency: u32,
    /// `None`: unbounded queue (`queueSize: 0`).
    pub queue_limit: Option<u32>,
    /// `None`: wait forever (`queueTimeout: 0s`).
    pub queue_timeout: Option<Duration>,
    pub readiness_on_saturation: Option<SaturationReadiness>,
}

/// Fail readiness while more than `queue_above` requests have waited for `sustained_for`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SaturationReadiness {
    pub queue_above: u32,
    /// `readinessOnSaturation.for`.
    pub sustained_for: Duration,
}

/// Per-request service time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServiceTime {
    /// Sleep this long.
    Fixed(Duration),
    /// Sleep a time drawn from an exponential distribution with this mean.
    Exponential { mean: Duration },
    /// Burn this much CPU time.
    Cpu(Duration),
}

/// Server-Sent Events offered by the service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sse {
    pub heartbeat_interval: Duration,
}

/// The readiness probe (defaults: 10s, 0s, 3, 1 as in Kubernetes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadinessProbe {
    pub period: Duration,
    /// `initialDelaySeconds`.
    pub initial_delay: Duration,
    pub failure_threshold: u32,
    pub success_threshold: u32,
}

impl ReadinessProbe {
    /// When the kubelet probes a new container (kube-model's port of the probe worker).
    pub fn timing(&self) -> kube_model::probe::ProbeTiming {
        kube_model::probe::ProbeTiming {
            period: self.period,
            initial_delay: self.initial_delay,
        }
    }
}

/// Pod start-up (Kubernetes time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Startup {
    /// From the pod's creation to its containers reported started (`service.startup.latency`).
    pub latency: Duration,
}

impl Startup {
    /// The default `service.startup.latency` (see the format's doc comment for its source).
    pub const DEFAULT_LATENCY: Duration = Duration::from_secs(2);
}

/// The load.
#[derive(Debug, Clone, PartialEq)]
pub struct Load {
    pub warmup: Duration,
    /// Measured load after the warmup; timeline and windows are offsets into it.
    pub duration: Duration,
    pub request_timeout: Duration,
    pub generators: Vec<Generator>,
}

/// A load generator in one zone.
#[derive(Debug, Clone, PartialEq)]
pub struct Generator {
    pub name: String,
    pub zone: String,
    pub rate: Rate,
    pub connections: u32,
    pub connection_model: ConnectionModel,
    pub sse_streams: u32,
    pub path: String,
    /// Through kube-proxy, or through the scenario's load balancer (which then exists).
    pub via: Via,
    /// Offset from load start at which the generator starts (zero: with the warm-up).
    pub start_at: Duration,
}

/// A generator's request rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rate {
    /// Open loop at this many requests per second.
    PerSecond(f64),
    /// Closed loop, as fast as the connections allow.
    Max,
    /// Open loop, changing linearly from `from` to `to` requests per second over the load.
    Ramp { from: f64, to: f64 },
}

/// A change at a point of the load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimelineEvent {
    /// Offset from load start (after the warmup).
    pub at: Duration,
    pub name: Option<String>,
    pub action: Action,
}

/// What a timeline entry does. Node and zone names are checked to exist at that point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    SetNodeReady {
        node: String,
        ready: bool,
    },
    AddNode {
        zone: String,
        name: String,
        allocatable_millicpu: u64,
        ready: bool,
    },
    RemoveNode {
        node: String,
    },
    RelabelNode {
        node: String,
        zone: String,
    },
    SetAllocatableCpu {
        node: String,
        allocatable_millicpu: u64,
    },
    Scale {
        replicas: u32,
    },
    /// Kill the pod with this index (`pod-<index>`).
    KillPod {
        pod: u32,
    },
    /// Kill the oldest or newest pod running at that moment, in `zone` if given.
    KillPickedPod {
        pick: PodPick,
        zone: Option<String>,
    },
    /// Roll out a new revision of the Deployment.
    Rollout(RolloutChange),
    /// Reload the ingress replicas' HAProxy with a fresh render (hitless).
    ReloadIngress(IngressReplicas),
    /// Restart the ingress replicas' HAProxy (stop and start).
    RestartIngress(IngressReplicas),
    /// Degrade, cut or restore the network between zones.
    ZoneNetwork(ZoneNetworkChange),
}

/// Something that must hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Expectation {
    /// Unique among the scenario's expectations.
    pub name: String,
    pub metric: Metric,
    pub min: Option<Threshold>,
    pub max: Option<Threshold>,
    pub window: Window,
    /// `originZone`, `destinationZone`: the part of the traffic measured (whole by default).
    pub zones: ZoneSlice,
}

/// A bound, in the unit the metric's [`MetricKind`] calls for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Threshold {
    /// A fraction (0..=1) or a non-negative ratio.
    Value(f64),
    /// A whole number.
    Count(u64),
    /// A latency or another span of time (`rolloutDuration`, `timeToScaleUp`).
    Latency(Duration),
}

impl Threshold {
    /// The bound as a number: values and counts as they are, latencies in seconds.
    pub fn as_f64(self) -> f64 {
        match self {
            Threshold::Value(v) => v,
            Threshold::Count(c) => c as f64,
            Threshold::Latency(d) => d.as_secs_f64(),
        }
    }
}

/// What kind of value a metric has, and so which thresholds it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricKind {
    /// A fraction from 0 to 1.
    Fraction,
    /// A non-negative number.
    Ratio,
    /// A correlation coefficient from -1 to 1.
    Correlation,
    /// A whole number.
    Count,
    /// A duration (a latency or another span of time).
    Latency,
}

impl Metric {
    /// The kind of value this metric has.
    pub fn kind(self) -> MetricKind {
        match self {
            Metric::ErrorRate
            | Metric::Http5xxRate
            | Metric::TransportErrorRate
            | Metric::TimeoutRate
            | Metric::MaxSaturation
            | Metric::RejectedRate
            | Metric::TerminationErrorRate
            | Metric::FirstPositionsShare
            | Metric::CrossZoneShare => MetricKind::Fraction,
            Metric::PositionRankCorrelation => MetricKind::Correlation,
            Metric::SkewMaxMean | Metric::SkewCv => MetricKind::Ratio,
            Metric::StarvedPods
            | Metric::HintFlaps
            | Metric::RequestsAfterRemoval
            | Metric::MaxReplicas
            | Metric::MinReplicas
            | Metric::ReadinessFlips
            | Metric::IngressRestarts
            | Metric::MinRoutableTargets => MetricKind::Count,
            Metric::LatencyP99
            | Metric::PodLatencyP90
            | Metric::RolloutDuration
            | Metric::TimeToScaleUp => MetricKind::Latency,
        }
    }

    /// The name used in scenario files (`errorRate`).
    pub fn as_str(self) -> &'static str {
        match self {
            Metric::ErrorRate => "errorRate",
            Metric::Http5xxRate => "http5xxRate",
            Metric::TransportErrorRate => "transportErrorRate",
            Metric::TimeoutRate => "timeoutRate",
            Metric::SkewMaxMean => "skewMaxMean",
            Metric::SkewCv => "skewCv",
            Metric::StarvedPods => "starvedPods",
            Metric::LatencyP99 => "latencyP99",
            Metric::HintFlaps => "hintFlaps",
            Metric::MaxSaturation => "maxSaturation",
            Metric::RejectedRate => "rejectedRate",
            Metric::TerminationErrorRate => "terminationErrorRate",
            Metric::RequestsAfterRemoval => "requestsAfterRemoval",
            Metric::RolloutDuration => "rolloutDuration",
            Metric::TimeToScaleUp => "timeToScaleUp",
            Metric::MaxReplicas => "maxReplicas",
            Metric::MinReplicas => "minReplicas",
            Metric::PositionRankCorrelation => "positionRankCorrelation",
            Metric::FirstPositionsShare => "firstPositionsShare",
            Metric::ReadinessFlips => "readinessFlips",
            Metric::IngressRestarts => "ingressRestarts",
            Metric::PodLatencyP90 => "podLatencyP90",
            Metric::MinRoutableTargets => "minRoutableTargets",
            Metric::CrossZoneShare => "crossZoneShare",
        }
    }
}

/// A window of the load, resolved to offsets from load start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    pub from: Duration,
    pub to: Duration,
    /// As written, for reports: `start..end`, `node-change+5s..end`.
    pub label: String,
}

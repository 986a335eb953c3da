//! The `service` section as written: replicas, placement, routing mode, sidecar limits,
//! service time, SSE and the readiness probe; the rollout strategy, termination, the app's
//! drain and the autoscaler are in `lifecycle` and `autoscaler`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::autoscaler::AutoscalerSpec;
use super::lifecycle::{AppSpec, RolloutSpec, TerminationSpec};
use super::scalars::{DnsLabel, DurationText, NodeName, ZoneName};

/// The service under test (the sample `flagsvc` behind the `sidecar` concurrency limiter).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServiceSpec {
    /// The Service name, a DNS label.
    pub name: DnsLabel,
    /// The number of pods at load start. Pods are named `pod-0` .. `pod-<replicas-1>`.
    #[schemars(range(min = 1))]
    pub replicas: u32,
    /// Where pods may run. Without it, pods may run on any worker node.
    #[serde(default)]
    pub placement: Option<PlacementSpec>,
    /// Topology-aware routing: exactly one of `topologyMode` or `trafficDistribution`. Omit it
    /// for no topology routing (kube-proxy picks among all ready endpoints).
    #[serde(default)]
    pub routing: Option<RoutingSpec>,
    /// The sidecar's admission control in front of each pod. Omit it for no sidecar (requests
    /// reach the service directly, with no concurrency limit).
    #[serde(default)]
    pub sidecar: Option<SidecarSpec>,
    /// How long the service takes per request: exactly one of `fixed`, `exponential`, `cpu`.
    pub service_time: ServiceTimeSpec,
    /// Server push: the service offers Server-Sent Events streams that hold a sidecar slot for
    /// as long as they are open. Required when a generator opens `sseStreams`.
    #[serde(default)]
    pub sse: Option<SseSpec>,
    /// The readiness probe the kubelet runs against each pod (defaults as in Kubernetes).
    #[serde(default)]
    pub readiness_probe: ProbeSpec,
    /// How long a new pod takes to start, before its readiness probe can pass.
    #[serde(default)]
    pub startup: StartupSpec,
    /// How long pods stay bound to a node whose kubelet went silent (`setNodeReady: false`)
    /// before taint-based eviction deletes them and the ReplicaSet recreates them elsewhere:
    /// the `tolerationSeconds` of their `node.kubernetes.io/unreachable` and
    /// `node.kubernetes.io/not-ready` NoExecute tolerations. Default `300s`, what the
    /// DefaultTolerationSeconds admission plugin gives every pod; whole seconds.
    #[serde(default = "five_minutes")]
    pub not_ready_toleration: DurationText,
    /// The Deployment's rolling-update strategy, used by `rollout` timeline actions
    /// (defaults as in Kubernetes).
    #[serde(default)]
    pub rollout: RolloutSpec,
    /// How pods terminate: grace period, `preStop` hook, and whether the image has a shell
    /// (defaults as in Kubernetes: 30s, no hook).
    #[serde(default)]
    pub termination: TerminationSpec,
    /// The service's own shutdown behaviour.
    #[serde(default)]
    pub app: AppSpec,
    /// A HorizontalPodAutoscaler that owns the replica count. Omit it for a fixed count
    /// (changed only by `scale` actions).
    #[serde(default)]
    pub autoscaler: Option<AutoscalerSpec>,
}

/// Pod placement. `zones` and `nodes` pin pods (a pod may only run on a listed node that is in a
/// listed zone); spread constraints then choose among the allowed nodes.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlacementSpec {
    /// Only schedule pods on nodes in these zones (node affinity on `topology.kubernetes.io/zone`).
    #[serde(default)]
    pub zones: Vec<ZoneName>,
    /// Only schedule pods on these worker nodes (node affinity on `kubernetes.io/hostname`).
    #[serde(default)]
    pub nodes: Vec<NodeName>,
    /// Pod topology spread constraints, as in a pod spec.
    #[serde(default)]
    pub topology_spread_constraints: Vec<SpreadSpec>,
}

/// A pod topology spread constraint.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SpreadSpec {
    /// The largest allowed difference in pod count between two topology domains.
    #[schemars(range(min = 1))]
    pub max_skew: u32,
    /// The node label whose values are the topology domains.
    pub topology_key: TopologyKey,
    /// What to do with a pod that cannot satisfy the constraint.
    pub when_unsatisfiable: WhenUnsatisfiable,
}

/// The node label a spread constraint counts pods by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
pub enum TopologyKey {
    /// One domain per zone.
    #[serde(rename = "topology.kubernetes.io/zone")]
    Zone,
    /// One domain per node.
    #[serde(rename = "kubernetes.io/hostname")]
    Hostname,
}

/// A spread constraint's `whenUnsatisfiable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
pub enum WhenUnsatisfiable {
    /// The pod stays Pending rather than violate `maxSkew`.
    DoNotSchedule,
    /// The scheduler prefers placements that reduce skew but schedules the pod anyway.
    ScheduleAnyway,
}

/// The routing mode. Exactly one key.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RoutingSpec {
    /// The `service.kubernetes.io/topology-mode` annotation: `Auto` turns on Topology Aware
    /// Routing (EndpointSlice hints by zone CPU share); `Disabled` is the same as no routing.
    #[serde(default)]
    pub topology_mode: Option<TopologyMode>,
    /// `spec.trafficDistribution` (KEP-4444): prefer endpoints in the client's zone or node.
    #[serde(default)]
    pub traffic_distribution: Option<TrafficDistribution>,
}

/// Values of the `service.kubernetes.io/topology-mode` annotation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum TopologyMode {
    /// Topology Aware Routing on.
    Auto,
    /// Topology Aware Routing off.
    Disabled,
}

/// Values of `spec.trafficDistribution`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum TrafficDistribution {
    /// Prefer endpoints in the client's zone (the original KEP-4444 value).
    PreferClose,
    /// Prefer endpoints in the client's zone (the newer, explicit name of `PreferClose`).
    PreferSameZone,
    /// Prefer endpoints on the client's node, then in its zone.
    PreferSameNode,
}

/// The sidecar's admission control: a concurrency limit with a queue in front of it.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SidecarSpec {
    /// The most requests (including open SSE streams) in flight to the service at once.
    #[schemars(range(min = 1))]
    pub max_concurrency: u32,
    /// The most requests waiting for a slot; `0` means unbounded (the incident's setting).
    /// Requests beyond it are rejected at once with 503.
    #[serde(default)]
    pub queue_size: u32,
    /// How long a request may wait for a slot before it is rejected with 503; `0s` means wait
    /// forever (the incident's setting).
    #[serde(default = "zero_seconds")]
    pub queue_timeout: DurationText,
    /// Make the pod report not-ready while its queue stays long.
    #[serde(default)]
    pub readiness_on_saturation: Option<SaturationReadinessSpec>,
}

/// Readiness tied to saturation: the pod fails its readiness probe while more than `queueAbove`
/// requests have been waiting for at least `for`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SaturationReadinessSpec {
    /// The queue length above which the pod counts as saturated.
    pub queue_above: u32,
    /// How long the queue must stay above `queueAbove` before readiness fails.
    pub r#for: DurationText,
}

/// How long the service works on one request. Exactly one key.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServiceTimeSpec {
    /// Every request takes this long (the service sleeps).
    #[serde(default)]
    pub fixed: Option<DurationText>,
    /// Service times drawn from an exponential distribution (the service sleeps).
    #[serde(default)]
    pub exponential: Option<ExponentialSpec>,
    /// Every request burns this much CPU time (the service spins), so pods contend for cores.
    #[serde(default)]
    pub cpu: Option<DurationText>,
}

/// An exponential distribution of service times.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExponentialSpec {
    /// The mean service time.
    pub mean: DurationText,
}

/// Server-Sent Events offered by the service.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SseSpec {
    /// How often the service writes a heartbeat event on each open stream.
    pub heartbeat_interval: DurationText,
}

/// The readiness probe.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProbeSpec {
    /// How often the probe runs (`periodSeconds`).
    #[serde(default = "ten_seconds")]
    pub period: DurationText,
    /// How long after the container starts the first probe may run (`initialDelaySeconds`);
    /// the kubelet compares whole seconds.
    #[serde(default = "zero_seconds")]
    pub initial_delay: DurationText,
    /// Consecutive failures after which the pod becomes not-ready.
    #[serde(default = "three")]
    #[schemars(range(min = 1))]
    pub failure_threshold: u32,
    /// Consecutive successes after which a not-ready pod becomes ready again.
    #[serde(default = "one")]
    #[schemars(range(min = 1))]
    pub success_threshold: u32,
}

impl Default for ProbeSpec {
    fn default() -> Self {
        Self {
            period: ten_seconds(),
            initial_delay: zero_seconds(),
            failure_threshold: three(),
            success_threshold: one(),
        }
    }
}

/// Pod start-up: from the pod's creation until the kubelet reports its containers started.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StartupSpec {
    /// From the pod's creation to its containers reported started: scheduling, the kubelet's
    /// sync, sandbox and network set-up and the container start with a cached image (what
    /// Kubernetes' pod start-up SLO measures). The readiness probe runs from then on. Default
    /// `2s`, the median Kubernetes measured for cached-image pods in a full 100-node cluster
    /// (1.94 s); the SLO bounds the 99th percentile at 5 s. `0s` starts pods at once.
    #[serde(default = "two_seconds")]
    pub latency: DurationText,
}

impl Default for StartupSpec {
    fn default() -> Self {
        Self {
            latency: two_seconds(),
        }
    }
}

fn five_minutes() -> DurationText {
    DurationText::of("300s")
}

fn two_seconds() -> DurationText {
    DurationText::of("2s")
}
fn zero_seconds() -> DurationText {
    DurationText::of("0s")
}
fn ten_seconds() -> DurationText {
    DurationText::of("10s")
}
fn three() -> u32 {
    3
}
fn one() -> u32 {
    1
}

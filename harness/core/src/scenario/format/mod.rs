//! The scenario file format exactly as written (`apiVersion: harness/v1alpha1`,
//! `kind: Scenario`): serde types with `deny_unknown_fields` whose doc comments become the JSON
//! Schema descriptions. Values keep their written form (durations, CPU quantities, rates as
//! text); `scenario::build` turns them into the engine's typed model.

mod autoscaler;
mod cost;
mod expect;
mod ingress;
mod lifecycle;
mod load;
mod load_balancer;
pub mod scalars;
mod service;
mod timeline;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use autoscaler::{
    AutoscalerMetricSpec, AutoscalerSpec, BehaviorSpec, PolicyKind, Reporter, ScalingPolicySpec,
    ScalingRulesSpec, SelectPolicy,
};
pub use cost::CostSpec;
pub use expect::{ExpectationSpec, MetricName, WindowSpec};
pub use ingress::{
    BalanceAlgorithmSpec, ChurnSpec, IngressSpec, IngressVersion, SortEndpointsBySpec,
};
pub use lifecycle::{AppSpec, PreStopChangeSpec, PreStopSpec, RolloutSpec, TerminationSpec};
pub use load::{ConnectionModel, GeneratorSpec, LoadSpec, Via};
pub use load_balancer::{HealthCheckSpec, LoadBalancerSpec};
pub use scalars::{
    CpuText, DnsLabel, DurationText, EventName, HttpPath, IntOrPercentText, NodeName, PodRefText,
    RateText, Scalar, ThresholdText, WindowBound, ZoneName,
};
pub use service::{
    ExponentialSpec, PlacementSpec, ProbeSpec, RoutingSpec, SaturationReadinessSpec, ServiceSpec,
    ServiceTimeSpec, SidecarSpec, SpreadSpec, SseSpec, TopologyKey, TopologyMode,
    TrafficDistribution, WhenUnsatisfiable,
};
pub use timeline::{
    AddNodeSpec, IngressReplicaSpec, KillPodSpec, NodeRefSpec, PodPick, RelabelNodeSpec,
    RolloutActionSpec, RolloutSetSpec, ScaleSpec, SetAllocatableCpuSpec, SetNodeReadySpec,
    TimelineEntrySpec, ZoneNetworkSpec,
};

/// The only `apiVersion` this harness reads.
pub const API_VERSION: &str = "harness/v1alpha1";
/// The only `kind` this harness reads.
pub const KIND: &str = "Scenario";

/// A schema keyword (removed before the schema is published) marking the one place `null` is
/// a valid value: every other `null` alternative `schemars` writes for an `Option` is removed.
pub(crate) const NULL_ALLOWED: &str = "x-harness-null-allowed";

/// A harness scenario: a cluster, a service on it, load from zones, a timeline of changes, and
/// expectations that must hold. `variants` holds named overrides of this document.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(title = "harness scenario")]
pub struct ScenarioFile {
    /// The format version. Must be `harness/v1alpha1`.
    pub api_version: ApiVersion,
    /// The document kind. Must be `Scenario`.
    pub kind: Kind,
    /// The scenario's name and description.
    pub metadata: Metadata,
    /// The cluster: zones, worker nodes and control-plane nodes.
    pub cluster: ClusterSpec,
    /// The service under test: its pods, placement, routing mode, sidecar and behaviour.
    pub service: ServiceSpec,
    /// The load: warmup, duration, and the load generators in each zone.
    pub load: LoadSpec,
    /// An ALB-like load balancer sending straight to pod IPs, for generators with
    /// `via: loadBalancer`. Omit it for none.
    #[serde(default)]
    pub load_balancer: Option<LoadBalancerSpec>,
    /// HAProxy ingress replicas run by a modelled haproxy-ingress controller, for generators
    /// with `via: ingress`. Omit it for none.
    #[serde(default)]
    pub ingress: Option<IngressSpec>,
    /// The price of bytes that cross between zones, for the reports' estimated monthly cost
    /// of the run's cross-zone traffic (0.01 USD per GB by default).
    #[serde(default)]
    pub cost: Option<CostSpec>,
    /// A default for `harness run --time-scale`, in (0, 1]: every control-plane period, delay
    /// and timeout (probe period, autoscaler sync, stabilization and policy periods, `preStop`
    /// sleep, grace period, load-balancer lags and health checks, `minReadySeconds`, the app's
    /// drain delay) and the scenario clock (warmup, duration, timeline `at`, expectation
    /// windows) are multiplied by it; the data plane (service time, request timeout, SSE
    /// heartbeat, sidecar queue timeout) is not.
    #[serde(default)]
    #[schemars(extend("exclusiveMinimum" = 0, "maximum" = 1))]
    pub time_scale: Option<f64>,
    /// Changes applied during the load, in time order. `at` is measured from load start (after
    /// the warmup). Each entry has exactly one action key.
    #[serde(default)]
    pub timeline: Vec<TimelineEntrySpec>,
    /// What must hold for the scenario to pass.
    #[serde(default)]
    pub expect: Vec<ExpectationSpec>,
    /// Named overrides of this document, each a JSON Merge Patch (RFC 7386) applied to the
    /// document before it is read: mappings merge recursively, sequences replace wholesale and
    /// `null` deletes a key. Select one with `--variant NAME`.
    #[serde(default)]
    #[schemars(with = "VariantsSchema")]
    pub variants: serde_json::Map<String, serde_json::Value>,
}

/// The format version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum ApiVersion {
    #[serde(rename = "harness/v1alpha1")]
    V1Alpha1,
}

/// The document kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum Kind {
    Scenario,
}

/// The scenario's identity.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Metadata {
    /// The scenario name, a DNS label (used in run ids, labels and report names).
    pub name: DnsLabel,
    /// What the scenario reproduces or checks, for people reading reports.
    #[serde(default)]
    pub description: Option<String>,
}

/// The cluster the service runs on.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterSpec {
    /// Control-plane nodes. They carry the `node-role.kubernetes.io/control-plane` label: no
    /// service pods are scheduled on them and the EndpointSlice controller leaves their CPU
    /// out of the zone shares used for topology hints.
    #[serde(default)]
    pub control_plane: Vec<ControlPlaneNodeSpec>,
    /// The zones (values of `topology.kubernetes.io/zone`) and their worker nodes. A zone may
    /// start with no nodes and gain some through `addNode`.
    #[schemars(length(min = 1))]
    pub zones: Vec<ZoneSpec>,
}

/// A zone and its worker nodes.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ZoneSpec {
    /// The zone name, e.g. `ap-northeast-2a`.
    pub name: ZoneName,
    /// The worker nodes in this zone.
    #[serde(default)]
    pub nodes: Vec<NodeSpec>,
}

/// A worker node.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeSpec {
    /// The node name, unique in the cluster.
    pub name: NodeName,
    /// The node's allocatable CPU (`status.allocatable.cpu`): cores such as `"4"` or
    /// millicores such as `"3500m"`. Topology hints divide endpoints by these, summed per zone
    /// over ready nodes.
    pub allocatable_cpu: CpuText,
    /// Whether the node is Ready. Not-ready nodes count for nothing in topology hints.
    #[serde(default = "yes")]
    pub ready: bool,
}

/// A control-plane node.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ControlPlaneNodeSpec {
    /// The node name, unique in the cluster.
    pub name: NodeName,
    /// The zone the node is in; must be one of `cluster.zones`.
    pub zone: ZoneName,
    /// The node's allocatable CPU, as for worker nodes.
    pub allocatable_cpu: CpuText,
    /// Whether the node is Ready.
    #[serde(default = "yes")]
    pub ready: bool,
}

pub(crate) fn yes() -> bool {
    true
}

/// The schema of the `variants` mapping: variant name (a DNS label) to merge patch.
struct VariantsSchema;

impl JsonSchema for VariantsSchema {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Variants".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "object",
            "propertyNames": { "pattern": scalars::DNS_LABEL_PATTERN, "maxLength": 63 },
            "additionalProperties": {
                "type": "object",
                "description": "A merge patch over this document (it cannot change `variants`): the keys it sets replace or merge into the base document, `null` deletes a key."
            }
        })
    }
}

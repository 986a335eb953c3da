//! `service.autoscaler` as written: a HorizontalPodAutoscaler (`autoscaling/v2`) on the
//! service's Deployment, scaling on requests per second per pod.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::scalars::DurationText;

/// A HorizontalPodAutoscaler. While it exists it owns the replica count: on its first sync it
/// moves `service.replicas` into `minReplicas..maxReplicas`, and `scale` timeline actions are
/// not allowed.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AutoscalerSpec {
    /// The fewest replicas it scales down to (`spec.minReplicas`), at least 1.
    #[serde(default = "one")]
    pub min_replicas: u32,
    /// The most replicas it scales up to (`spec.maxReplicas`), at least `minReplicas`.
    #[schemars(range(min = 1))]
    pub max_replicas: u32,
    /// What it scales on: an average request rate per pod.
    pub metric: AutoscalerMetricSpec,
    /// How often the controller recomputes the replica count
    /// (`--horizontal-pod-autoscaler-sync-period`).
    #[serde(default = "fifteen_seconds")]
    pub sync_period: DurationText,
    /// The controller does not scale while the ratio of the metric to its target is within
    /// this distance of 1 (`--horizontal-pod-autoscaler-tolerance`).
    #[serde(default = "tenth")]
    #[schemars(range(min = 0))]
    pub tolerance: f64,
    /// `spec.behavior`: stabilization windows and rate limits for each direction. Omitted
    /// directions and fields take Kubernetes' defaults.
    #[serde(default)]
    pub behavior: Option<BehaviorSpec>,
}

/// The metric the autoscaler scales on: requests per second per pod, counted on one side.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AutoscalerMetricSpec {
    /// Which side counts the requests (Istio's `reporter` label).
    pub reporter: Reporter,
    /// The target average requests per second per pod (`target.averageValue`), more than 0.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub target_average_value: f64,
}

/// Where the requests an autoscaler scales on are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Reporter {
    /// Requests the pods' sidecars admitted, per pod (`reporter="destination"`): it falls
    /// when pods leave the endpoints, however high demand is. Requires `service.sidecar`.
    Destination,
    /// Requests the load generators attempted (`reporter="source"`), over the pods: demand.
    Source,
}

/// `spec.behavior`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BehaviorSpec {
    /// Scaling up. Defaults: no stabilization window, `selectPolicy: Max`, policies
    /// `{ type: Pods, value: 4, period: 15s }` and `{ type: Percent, value: 100, period: 15s }`.
    #[serde(default)]
    pub scale_up: Option<ScalingRulesSpec>,
    /// Scaling down. Defaults: a `300s` stabilization window, `selectPolicy: Max`, policy
    /// `{ type: Percent, value: 100, period: 15s }`.
    #[serde(default)]
    pub scale_down: Option<ScalingRulesSpec>,
}

/// `HPAScalingRules` for one direction; each omitted field takes the direction's default.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScalingRulesSpec {
    /// `stabilizationWindowSeconds`: the controller uses the most conservative recommendation
    /// of this past window (the highest when scaling down, the lowest when scaling up); at
    /// most `1h`.
    #[serde(default)]
    pub stabilization_window: Option<DurationText>,
    /// Which policy limits the change when several apply.
    #[serde(default)]
    pub select_policy: Option<SelectPolicy>,
    /// The rate limits, at least one.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub policies: Option<Vec<ScalingPolicySpec>>,
}

/// `selectPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
pub enum SelectPolicy {
    /// The policy that allows the largest change.
    Max,
    /// The policy that allows the smallest change.
    Min,
    /// No scaling in this direction.
    Disabled,
}

/// `HPAScalingPolicy`: at most `value` pods (or percent of the current pods) per `period`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScalingPolicySpec {
    /// Whether `value` counts pods or a percentage of the current replicas.
    pub r#type: PolicyKind,
    /// The most pods, or percent, the replica count may change by within `period`.
    #[schemars(range(min = 1))]
    pub value: u32,
    /// `periodSeconds`: the window the change is measured over; more than zero, at most `30m`.
    pub period: DurationText,
}

/// A scaling policy's `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
pub enum PolicyKind {
    /// `value` is a number of pods.
    Pods,
    /// `value` is a percentage of the current replicas.
    Percent,
}

fn one() -> u32 {
    1
}
fn tenth() -> f64 {
    0.1
}
fn fifteen_seconds() -> DurationText {
    DurationText::of("15s")
}

// Ported from kubernetes/kubernetes v1.34 (release-1.34 line; horizontal.go read from a stored
// copy of the v1.32 line, tolerancesForHpa as added for KEP-4951 in v1.33; controller flag
// defaults from pkg/controller/podautoscaler/config/v1alpha1/defaults.go).
// The `autoscaling/v2` HorizontalPodAutoscaler spec fields the model reads, the
// kube-controller-manager HPA flags, and horizontal.go's tolerancesForHpa and metric naming
// (computeStatusFor{Pods,Object,External}Metric).
//! The HPA as the model sees it: one metric with its target, min/max replicas, optional
//! `spec.behavior`, plus the controller-wide options (tolerance, downscale stabilization,
//! the `HPAConfigurableTolerance` gate).
//!
//! Metric values are plain numbers in the metric's unit (requests per second, queue length);
//! the controller works on them in milli-units the way `Quantity.MilliValue()` reads them.
//! The sync period (`--horizontal-pod-autoscaler-sync-period`, 15 s by default) is not an
//! option here: the caller decides when to call [`super::reconcile`].

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::behavior::Behavior;
use super::calculator::{DEFAULT_TOLERANCE, Tolerances};

/// Default `--horizontal-pod-autoscaler-sync-period`: how often a caller would reconcile.
pub const DEFAULT_SYNC_PERIOD: Duration = Duration::from_secs(15);
/// Default `--horizontal-pod-autoscaler-downscale-stabilization`.
pub const DEFAULT_DOWNSCALE_STABILIZATION: Duration = Duration::from_secs(300);
/// `spec.minReplicas` when unset.
pub const DEFAULT_MIN_REPLICAS: i32 = 1;

/// The metric source type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum MetricKind {
    /// A per-pod metric averaged over the selector's pods (custom metrics API).
    Pods,
    /// A metric describing one object (custom metrics API); `described_kind` is its kind,
    /// e.g. `Service` or `Ingress`.
    Object { described_kind: String },
    /// A metric from outside the cluster (external metrics API); all returned series are summed.
    External,
}

/// `MetricTarget` for the non-resource metrics.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum MetricTarget {
    /// The metric's total should equal this (Object, External).
    Value(f64),
    /// The metric divided by the pod count should equal this (Pods, Object, External).
    AverageValue(f64),
}

/// One entry of `spec.metrics`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricSpec {
    pub name: String,
    pub kind: MetricKind,
    pub target: MetricTarget,
}

impl MetricSpec {
    /// A Pods metric with an `AverageValue` target (e.g. 10 requests per second per pod).
    pub fn pods(name: impl Into<String>, average_value: f64) -> Self {
        MetricSpec {
            name: name.into(),
            kind: MetricKind::Pods,
            target: MetricTarget::AverageValue(average_value),
        }
    }

    /// An Object metric on an object of kind `described_kind`.
    pub fn object(
        name: impl Into<String>,
        described_kind: impl Into<String>,
        target: MetricTarget,
    ) -> Self {
        MetricSpec {
            name: name.into(),
            kind: MetricKind::Object {
                described_kind: described_kind.into(),
            },
            target,
        }
    }

    /// An External metric.
    pub fn external(name: impl Into<String>, target: MetricTarget) -> Self {
        MetricSpec {
            name: name.into(),
            kind: MetricKind::External,
            target,
        }
    }

    /// How the controller names the metric in conditions and events. Upstream prints the
    /// metric selector with `%+v`; the model has none, which Go prints as `<nil>`. (An Object
    /// metric with an `AverageValue` target is called "external metric" upstream too.)
    pub fn describe(&self) -> String {
        match (&self.kind, &self.target) {
            (MetricKind::Pods, _) => format!("pods metric {}", self.name),
            (MetricKind::Object { described_kind }, MetricTarget::Value(_)) => {
                format!("{described_kind} metric {}", self.name)
            }
            (MetricKind::Object { .. } | MetricKind::External, _) => {
                format!("external metric {}(<nil>)", self.name)
            }
        }
    }
}

/// The parts of a `HorizontalPodAutoscaler` spec the controller's decision depends on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HpaSpec {
    /// `spec.minReplicas` (the API default is [`DEFAULT_MIN_REPLICAS`]).
    pub min_replicas: i32,
    pub max_replicas: i32,
    pub metric: MetricSpec,
    /// `spec.behavior`; `None` selects the controller's no-behavior path, which differs from
    /// `Some(Behavior::default())` (see [`super::normalize`]).
    pub behavior: Option<Behavior>,
}

impl HpaSpec {
    /// An HPA without `spec.behavior`.
    pub fn new(min_replicas: i32, max_replicas: i32, metric: MetricSpec) -> Self {
        HpaSpec {
            min_replicas,
            max_replicas,
            metric,
            behavior: None,
        }
    }

    /// Sets `spec.behavior` (unset fields take the API defaults).
    pub fn with_behavior(mut self, behavior: Behavior) -> Self {
        self.behavior = Some(behavior);
        self
    }
}

/// kube-controller-manager settings that change HPA decisions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ControllerOptions {
    /// `--horizontal-pod-autoscaler-tolerance` (0.1).
    pub tolerance: f64,
    /// `--horizontal-pod-autoscaler-downscale-stabilization` (5 min): the scale-down window
    /// of HPAs without behavior, and of behaviors that leave it unset.
    pub downscale_stabilization: Duration,
    /// The `HPAConfigurableTolerance` feature gate (alpha and off by default in v1.34): only
    /// with it on are `behavior.scaleUp/scaleDown.tolerance` honoured.
    pub configurable_tolerance: bool,
}

impl Default for ControllerOptions {
    fn default() -> Self {
        ControllerOptions {
            tolerance: DEFAULT_TOLERANCE,
            downscale_stabilization: DEFAULT_DOWNSCALE_STABILIZATION,
            configurable_tolerance: false,
        }
    }
}

/// upstream `tolerancesForHpa`: the cluster-wide tolerance both ways, overridden per
/// direction by the behavior's `tolerance` when the feature gate is on.
pub fn tolerances_for_hpa(options: &ControllerOptions, spec: &HpaSpec) -> Tolerances {
    let mut tolerances = Tolerances::uniform(options.tolerance);
    let Some(behavior) = spec.behavior.as_ref() else {
        return tolerances;
    };
    if !options.configurable_tolerance {
        return tolerances;
    }
    if let Some(down) = behavior.scale_down.as_ref().and_then(|r| r.tolerance) {
        tolerances.scale_down = down;
    }
    if let Some(up) = behavior.scale_up.as_ref().and_then(|r| r.tolerance) {
        tolerances.scale_up = up;
    }
    tolerances
}

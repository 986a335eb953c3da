// Ported from kubernetes/kubernetes v1.34 (release-1.34 line; horizontal.go read from a stored
// copy of the v1.32 line; unchanged through v1.34).
// The inputs pkg/controller/podautoscaler/horizontal.go reads at a sync (the scale
// subresource's spec/status replicas, the pod lister, the metrics clients) and what it writes
// back (scale, status.desiredReplicas, status.currentMetrics, status.conditions, events).
//! The observation a sync reads and the decision it produces.

use serde::Serialize;

use super::pods::PodMetric;
use super::state::Condition;
use crate::events::EventType;

/// What the controller reads from the API at one sync.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Observation {
    /// The scale target's `spec.replicas`: the count the HPA compares against and changes.
    pub current_replicas: i32,
    /// The scale target's `status.replicas` (pods that exist): the divisor of `AverageValue`
    /// Object and External targets.
    pub status_replicas: i32,
    /// The pods matching the selector, with their samples (Pods metrics) and readiness
    /// (ready counts for `Value` targets).
    pub pods: Vec<PodMetric>,
    /// Object metric: its value (first entry used). External metric: every returned series,
    /// summed. Empty: the metrics API returned nothing.
    pub metric_values: Vec<f64>,
}

impl Observation {
    /// A Pods-metric observation; `status_replicas` is the number of pods given.
    pub fn pods(current_replicas: i32, pods: Vec<PodMetric>) -> Self {
        Observation {
            current_replicas,
            status_replicas: i32::try_from(pods.len()).unwrap_or(i32::MAX),
            pods,
            metric_values: Vec::new(),
        }
    }

    /// An Object or External observation of a total (e.g. requests per second counted at the
    /// callers), with the workload's pods for ready counts.
    pub fn total(current_replicas: i32, total: f64, pods: Vec<PodMetric>) -> Self {
        Observation {
            current_replicas,
            status_replicas: i32::try_from(pods.len()).unwrap_or(i32::MAX),
            pods,
            metric_values: vec![total],
        }
    }
}

/// An event the controller records on the HPA.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HpaEvent {
    #[serde(rename = "type")]
    pub event_type: EventType,
    pub reason: String,
    pub message: String,
}

/// The outcome of one sync.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    /// The replica count after this sync: the new `spec.replicas` when `rescaled`, else the
    /// current one. Upstream writes the same into `status.desiredReplicas`, except after a
    /// metrics error, when the status keeps its previous value ([`super::HpaState::desired_replicas`]).
    pub desired_replicas: i32,
    pub rescaled: bool,
    /// The metric's own proposal before stabilization and limits.
    pub metric_replicas: Option<i32>,
    /// Current / target as the calculator computed it.
    pub usage_ratio: Option<f64>,
    /// The metric's current value as the status reports it (per-pod average for
    /// `AverageValue`, total for `Value`), in metric units.
    pub current_value: Option<f64>,
    /// The rescale reason as in the `SuccessfulRescale` event (empty when none).
    pub reason: String,
    /// `status.conditions` after the sync.
    pub conditions: Vec<Condition>,
    pub events: Vec<HpaEvent>,
    /// Why no replica count could be computed, as upstream's reconcile error.
    pub error: Option<String>,
}

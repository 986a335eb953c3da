//! A model of the Horizontal Pod Autoscaler controller of Kubernetes v1.34
//! (`pkg/controller/podautoscaler`), for the metrics a traffic harness scales on: Pods metrics
//! (a per-pod rate such as requests per second, `AverageValue` target), Object metrics and
//! External metrics (`Value` or `AverageValue` targets).
//!
//! - [`calculator`]: the replica calculator: usage ratio, the 0.1 tolerance, missing and
//!   pending pods, `Running`+`Ready` counts for `Value` targets;
//! - [`pods`]: the pods behind the selector with their samples, and how they are sorted;
//! - [`behavior`]: `spec.behavior` and its API defaults;
//! - [`normalize`]: stabilization windows, rate policies, min/max, and the no-behavior path;
//! - [`state`]: the history carried between syncs (recommendations, scale events, conditions);
//! - [`spec`]: the HPA spec and the controller options;
//! - [`observe`]: what a sync reads (scale replicas, pods, metric values) and decides;
//! - [`reconcile`](mod@reconcile): one sync as a pure function of spec, state, time and
//!   observation.
//!
//! Time is a [`std::time::Duration`] since an epoch the caller chooses; the caller also picks
//! the sync period (upstream: 15 s). Nothing here sleeps or reads a clock.
//!
//! What the model leaves out: CPU and memory (`Resource`, `ContainerResource`) metrics and
//! with them pod requests, the CPU initialization period and the readiness-transition rules
//! that only apply to CPU; several metrics per HPA (upstream takes the largest proposal);
//! samples for pods outside the selector; metric timestamps; `scaleTargetRef` selector
//! validation and multiple-HPA detection. See each file for the exact upstream functions.
//!
//! The incident this serves (docs/incidents.md §3): a Pods metric counted at the
//! destination is the average over *all* running pods, ready or not, of what each pod
//! processed. When pods fail readiness under a surge they leave the endpoints, stop receiving
//! requests and report (nearly) nothing; the average falls while demand stays high, so the HPA
//! sees less load and does not scale up. The same demand counted at the source and given as an
//! External metric with an `AverageValue` target yields `ceil(total / target)` replicas.

pub mod behavior;
pub mod calculator;
mod compute;
pub mod normalize;
pub mod observe;
pub mod pods;
pub mod reconcile;
pub mod spec;
pub mod state;

#[cfg(test)]
mod tests_horizontal;
#[cfg(test)]
mod tests_reconcile;

pub use behavior::{Behavior, PolicyType, ScalingPolicy, ScalingRules, SelectPolicy};
pub use calculator::{CalcError, DEFAULT_TOLERANCE, Proposal, Tolerances};
pub use observe::{Decision, HpaEvent, Observation};
pub use pods::{PodMetric, PodPhase, from_milli, to_milli};
pub use reconcile::{reconcile, reconcile_default};
pub use spec::{
    ControllerOptions, DEFAULT_DOWNSCALE_STABILIZATION, DEFAULT_SYNC_PERIOD, HpaSpec, MetricKind,
    MetricSpec, MetricTarget,
};
pub use state::{Condition, ConditionType, HpaState, ScaleEvent, TimestampedRecommendation};

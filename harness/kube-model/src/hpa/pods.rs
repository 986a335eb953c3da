// Ported from kubernetes/kubernetes v1.34 (release-1.34 line; replica_calculator.go read from
// stored copies of the v1.32 and v1.35 lines, which agree on these functions).
// pkg/controller/podautoscaler/replica_calculator.go (groupPods, getReadyPodsCount,
// removeMetricsForPods) and the milli-unit reading of metric quantities
// (`Quantity.MilliValue()`, as the metrics clients report samples).
//! The pods behind the scale target's selector, each with the metric sample the custom
//! metrics API returned for it (if any), and how the replica calculator sorts them.
//!
//! For Pods, Object and External metrics (everything but CPU) the sorting is:
//!
//! - **ignored**: being deleted (deletion timestamp set) or phase `Failed`; their samples are
//!   dropped;
//! - **unready**: phase `Pending`; samples dropped, and on a scale-up they count as using 0;
//! - **missing**: no sample; on a scale-down they count as using exactly the target, on a
//!   scale-up as using 0;
//! - **ready**: everything else, *whatever the pod's `Ready` condition says*. A `Running` pod
//!   that failed its readiness probe keeps its sample and counts fully. Only the CPU resource
//!   metric looks at readiness (and pod start times); that branch is not modelled.
//!
//! Separately, Object and External metrics with a `Value` target divide by the number of pods
//! that are `Running` **and** `Ready` ([`ready_pod_count`]).

use std::collections::BTreeSet;

use serde::Serialize;

/// `PodStatus.phase`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum PodPhase {
    Pending,
    Running,
    Succeeded,
    Failed,
    Unknown,
}

/// One pod matched by the selector, with its metric sample in milli-units.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodMetric {
    pub name: String,
    pub phase: PodPhase,
    /// The `Ready` pod condition is `True`.
    pub ready: bool,
    /// `metadata.deletionTimestamp` is set (terminating).
    pub deleting: bool,
    /// The sample for this pod, in milli-units (`10 rps` = `10000`); `None` when the metrics
    /// API returned nothing for the pod.
    pub value_milli: Option<i64>,
}

impl PodMetric {
    /// A running, ready pod without a sample.
    pub fn new(name: impl Into<String>) -> Self {
        PodMetric {
            name: name.into(),
            phase: PodPhase::Running,
            ready: true,
            deleting: false,
            value_milli: None,
        }
    }

    /// A running, ready pod reporting `value` (e.g. requests per second).
    pub fn ready(name: impl Into<String>, value: f64) -> Self {
        PodMetric::new(name).with_value(value)
    }

    /// A running pod whose readiness probe fails, still reporting `value`.
    pub fn unready(name: impl Into<String>, value: f64) -> Self {
        PodMetric::new(name).with_value(value).with_ready(false)
    }

    /// Sets the sample from a value in metric units.
    pub fn with_value(mut self, value: f64) -> Self {
        self.value_milli = Some(to_milli(value));
        self
    }

    /// Sets the sample in milli-units, as upstream's tests write them.
    pub fn with_value_milli(mut self, milli: i64) -> Self {
        self.value_milli = Some(milli);
        self
    }

    /// Drops the sample (the pod is "missing" from the metrics).
    pub fn without_value(mut self) -> Self {
        self.value_milli = None;
        self
    }

    pub fn with_phase(mut self, phase: PodPhase) -> Self {
        self.phase = phase;
        self
    }

    pub fn with_ready(mut self, ready: bool) -> Self {
        self.ready = ready;
        self
    }

    /// Marks the pod as being deleted.
    pub fn deleting(mut self) -> Self {
        self.deleting = true;
        self
    }

    /// The sample in metric units.
    pub fn value(&self) -> Option<f64> {
        self.value_milli.map(from_milli)
    }
}

/// A metric value as `Quantity.MilliValue()` reports it: milli-units, rounded up. Values that
/// are a whole number of milli-units up to binary floating-point noise (`0.1 * 1000`) are
/// taken as that number rather than rounded up past it. Non-finite input saturates.
pub fn to_milli(value: f64) -> i64 {
    let scaled = value * 1000.0;
    let nearest = scaled.round();
    if (scaled - nearest).abs() <= 1e-6 * nearest.abs().max(1.0) {
        nearest as i64
    } else {
        scaled.ceil() as i64
    }
}

/// Milli-units back to metric units.
pub fn from_milli(milli: i64) -> f64 {
    milli as f64 / 1000.0
}

/// How the calculator sorted the pods (upstream `groupPods` for a non-CPU metric).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodGroups {
    /// Pods whose sample counts as is.
    pub ready_count: usize,
    /// `Pending` pods.
    pub unready: BTreeSet<String>,
    /// Pods without a sample.
    pub missing: BTreeSet<String>,
    /// Deleted or failed pods.
    pub ignored: BTreeSet<String>,
}

/// Sorts the pods the way upstream's `groupPods` does for any metric but CPU.
pub fn group_pods(pods: &[PodMetric]) -> PodGroups {
    let mut groups = PodGroups::default();
    for pod in pods {
        if pod.deleting || pod.phase == PodPhase::Failed {
            groups.ignored.insert(pod.name.clone());
        } else if pod.phase == PodPhase::Pending {
            groups.unready.insert(pod.name.clone());
        } else if pod.value_milli.is_none() {
            groups.missing.insert(pod.name.clone());
        } else {
            groups.ready_count += 1;
        }
    }
    groups
}

/// Pods that are `Running` with `Ready=True` (upstream `getReadyPodsCount`; a terminating
/// pod that is still running and ready counts).
pub fn ready_pod_count(pods: &[PodMetric]) -> usize {
    pods.iter()
        .filter(|p| p.phase == PodPhase::Running && p.ready)
        .count()
}

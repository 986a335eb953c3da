// Ported from kubernetes/kubernetes v1.34 (release-1.34 line; horizontal.go read from a stored
// copy of the v1.32 line, plus the v1.33 per-HPA tolerances).
// pkg/controller/podautoscaler/horizontal.go (computeReplicasForMetric,
// computeStatusForObjectMetric, computeStatusForPodsMetric, computeStatusForExternalMetric,
// getUnableComputeReplicaCountCondition).
//! Which calculator a metric spec goes to, with which replica count (`spec.replicas` for Pods
//! and `Value` targets, `status.replicas` for `AverageValue` Object/External targets), and the
//! condition reason and error wording when it fails.

use super::calculator::{self as calc, CalcError, Proposal};
use super::observe::Observation;
use super::pods::to_milli;
use super::spec::{ControllerOptions, HpaSpec, MetricKind, MetricTarget, tolerances_for_hpa};

/// A failed metric computation: the condition reason, the raw error (condition message and
/// event) and the wrapped error upstream aggregates.
pub(crate) struct MetricFailure {
    pub(crate) reason: &'static str,
    pub(crate) raw: String,
    pub(crate) wrapped: String,
}

pub(crate) fn compute_for_metric(
    options: &ControllerOptions,
    spec: &HpaSpec,
    obs: &Observation,
) -> Result<Proposal, MetricFailure> {
    let tolerances = tolerances_for_hpa(options, spec);
    let metric = &spec.metric;
    let name = metric.name.as_str();
    let values: Vec<i64> = obs.metric_values.iter().map(|v| to_milli(*v)).collect();
    let fail = |reason, raw: String, wrapped: String| MetricFailure {
        reason,
        raw,
        wrapped,
    };
    match (&metric.kind, metric.target) {
        (MetricKind::Pods, MetricTarget::AverageValue(target)) => calc::pod_metric_replicas(
            name,
            obs.current_replicas,
            to_milli(target),
            &obs.pods,
            tolerances,
        )
        .map_err(|e| {
            let w = format!("failed to get pods metric value: {e}");
            fail("FailedGetPodsMetric", e.to_string(), w)
        }),
        (MetricKind::Pods, MetricTarget::Value(_)) => {
            // API validation rejects this; upstream would dereference a nil AverageValue.
            let e = "invalid pods metric source: the target must be an average value".to_owned();
            let w = format!("failed to get pods metric value: {e}");
            Err(fail("FailedGetPodsMetric", e, w))
        }
        (MetricKind::Object { described_kind }, target) => {
            let Some(&value) = values.first() else {
                let e = CalcError::NoObjectMetric(name.to_owned(), described_kind.clone());
                let inner = match target {
                    MetricTarget::Value(_) => e.to_string(),
                    MetricTarget::AverageValue(_) => {
                        format!("failed to get {name} object metric: {e}")
                    }
                };
                let w = format!("failed to get object metric value: {inner}");
                return Err(fail("FailedGetObjectMetric", e.to_string(), w));
            };
            match target {
                MetricTarget::Value(t) => calc::object_metric_replicas(
                    obs.current_replicas,
                    to_milli(t),
                    value,
                    &obs.pods,
                    tolerances,
                )
                .map_err(|e| {
                    let w = format!("failed to get object metric value: {e}");
                    fail("FailedGetObjectMetric", e.to_string(), w)
                }),
                MetricTarget::AverageValue(t) => Ok(calc::object_per_pod_metric_replicas(
                    obs.status_replicas,
                    to_milli(t),
                    value,
                    tolerances,
                )),
            }
        }
        (MetricKind::External, MetricTarget::AverageValue(t)) => {
            calc::external_per_pod_metric_replicas(
                name,
                obs.status_replicas,
                to_milli(t),
                &values,
                tolerances,
            )
            .map_err(|e| {
                let inner = format!("failed to get {name} external metric: {e}");
                let w = format!("failed to get {name} external metric value: {inner}");
                fail("FailedGetExternalMetric", e.to_string(), w)
            })
        }
        (MetricKind::External, MetricTarget::Value(t)) => calc::external_metric_replicas(
            name,
            obs.current_replicas,
            to_milli(t),
            &values,
            &obs.pods,
            tolerances,
        )
        .map_err(|e| {
            let inner = format!("failed to get external metric {name}: {e}");
            let w = format!("failed to get {name} external metric value: {inner}");
            fail("FailedGetExternalMetric", e.to_string(), w)
        }),
    }
}

// Ported from kubernetes/kubernetes v1.34 (release-1.34 line; replica_calculator.go read from
// stored copies of the v1.32 line (before per-HPA tolerances) and of the v1.35 line (with
// `Tolerances` and the overflow caps); v1.34 is the former plus `Tolerances` (v1.33) and the
// GetExternalPerPodMetricReplicas overflow guard (PR #127050, v1.34), without PR #126979 and
// PR #133888 (both v1.35)). metrics/utilization.go read for GetMetricUsageRatio.
// pkg/controller/podautoscaler/replica_calculator.go (Tolerances.isWithin, GetMetricReplicas,
// calcPlainMetricReplicas, GetObjectMetricReplicas, getUsageRatioReplicaCount,
// GetObjectPerPodMetricReplicas, GetExternalMetricReplicas, GetExternalPerPodMetricReplicas)
// and pkg/controller/podautoscaler/metrics/utilization.go (GetMetricUsageRatio).
//! The replica calculator for Pods, Object and External metrics: from the metric samples,
//! the target and the current replica count to a proposed replica count.
//!
//! All arithmetic is upstream's: samples and targets in milli-units (`i64`), the per-pod
//! average by integer division, ratios in `f64`, replica counts by `ceil`.
//!
//! - **Pods** (`AverageValue`): `usage = sum / n` over the counted pods, `ratio = usage /
//!   target`; within tolerance → no change, else `ceil(ratio * ready)`. With missing or
//!   (pending) unready pods the ratio is recomputed with fill-ins (see [`super::pods`]) and
//!   the change is dropped if the fill-ins flip its direction.
//! - **Object/External `Value`**: `ratio = value / target` (External: the sum of all series);
//!   `ceil(ratio * readyPods)` where ready means `Running` and `Ready`; from 0 replicas,
//!   `ceil(ratio)`.
//! - **Object/External `AverageValue`**: `ratio = value / (target * statusReplicas)`;
//!   outside tolerance `ceil(value / target)`, which does not depend on readiness at all.
//!
//! Float-to-int conversions saturate (Rust `as`); v1.34 Go wraps on amd64 in the sites it did
//! not yet clamp. The difference only shows past 2^31 replicas.

use thiserror::Error;

use super::pods::{PodMetric, group_pods, ready_pod_count};

/// The cluster-wide default tolerance (`--horizontal-pod-autoscaler-tolerance`).
pub const DEFAULT_TOLERANCE: f64 = 0.1;

/// Usage-ratio tolerances: no change while `1 - scale_down <= ratio <= 1 + scale_up`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerances {
    pub scale_down: f64,
    pub scale_up: f64,
}

impl Tolerances {
    /// The same tolerance both ways.
    pub const fn uniform(tolerance: f64) -> Self {
        Tolerances {
            scale_down: tolerance,
            scale_up: tolerance,
        }
    }

    /// upstream `Tolerances.isWithin`.
    pub fn is_within(&self, usage_ratio: f64) -> bool {
        (1.0 - self.scale_down) <= usage_ratio && usage_ratio <= (1.0 + self.scale_up)
    }
}

impl Default for Tolerances {
    fn default() -> Self {
        Tolerances::uniform(DEFAULT_TOLERANCE)
    }
}

/// Why no replica count could be computed; texts follow upstream's errors (namespace and
/// label selector, which the model does not have, are left out).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CalcError {
    #[error("unable to get metric {0}: no metrics returned from custom metrics API")]
    NoPodMetrics(String),
    #[error("unable to get metric {0}: no metrics returned from custom metrics API on {1}")]
    NoObjectMetric(String, String),
    #[error("unable to get external metric {0}: no metrics returned from external metrics API")]
    NoExternalMetrics(String),
    #[error("did not receive metrics for targeted pods (pods might be unready)")]
    NoMetricsForTargetedPods,
    #[error(
        "unable to calculate ready pods: no pods returned by selector while calculating replica count"
    )]
    NoPodsForReadyCount,
}

/// A proposal from one metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Proposal {
    /// Proposed replica count (before min/max, stabilization and rate limits).
    pub replicas: i32,
    /// What the HPA status reports as the metric's current value, in milli-units: the per-pod
    /// average (Pods, `AverageValue`) or the raw value (`Value`).
    pub usage_milli: i64,
    /// The usage ratio the decision started from (current / target).
    pub usage_ratio: f64,
}

fn ceil_i32(x: f64) -> i32 {
    x.ceil() as i32
}

/// upstream `GetMetricUsageRatio`: integer average, then the ratio to the target.
fn metric_usage_ratio(samples: &[i64], target_milli: i64) -> (f64, i64) {
    let total = samples.iter().fold(0i64, |acc, v| acc.wrapping_add(*v));
    let usage = total / samples.len() as i64;
    (usage as f64 / target_milli as f64, usage)
}

/// A Pods metric with an `AverageValue` target (upstream `GetMetricReplicas` →
/// `calcPlainMetricReplicas` with no resource name). `current_replicas` is the scale
/// target's `spec.replicas`.
pub fn pod_metric_replicas(
    metric_name: &str,
    current_replicas: i32,
    target_milli: i64,
    pods: &[PodMetric],
    tolerances: Tolerances,
) -> Result<Proposal, CalcError> {
    // The custom metrics API answers first: no samples at all (which includes no pods) is an
    // error of its own, before the pod list is looked at.
    if pods.iter().all(|p| p.value_milli.is_none()) {
        return Err(CalcError::NoPodMetrics(metric_name.to_owned()));
    }
    let groups = group_pods(pods);
    // The samples left after dropping ignored and unready pods, keyed by pod name.
    let mut samples: std::collections::BTreeMap<&str, i64> = pods
        .iter()
        .filter_map(|p| p.value_milli.map(|v| (p.name.as_str(), v)))
        .filter(|(n, _)| !groups.ignored.contains(*n) && !groups.unready.contains(*n))
        .collect();
    if samples.is_empty() {
        return Err(CalcError::NoMetricsForTargetedPods);
    }
    let values: Vec<i64> = samples.values().copied().collect();
    let (usage_ratio, usage) = metric_usage_ratio(&values, target_milli);
    let proposal = |replicas| Proposal {
        replicas,
        usage_milli: usage,
        usage_ratio,
    };

    let scale_up_with_unready = !groups.unready.is_empty() && usage_ratio > 1.0;
    if !scale_up_with_unready && groups.missing.is_empty() {
        if tolerances.is_within(usage_ratio) {
            return Ok(proposal(current_replicas));
        }
        return Ok(proposal(ceil_i32(usage_ratio * groups.ready_count as f64)));
    }

    if !groups.missing.is_empty() {
        // Scale-down: a missing pod uses exactly the target; scale-up: nothing.
        let fill = if usage_ratio < 1.0 {
            Some(target_milli)
        } else if usage_ratio > 1.0 {
            Some(0)
        } else {
            None
        };
        if let Some(fill) = fill {
            for name in &groups.missing {
                samples.insert(name, fill);
            }
        }
    }
    if scale_up_with_unready {
        for name in &groups.unready {
            samples.insert(name, 0);
        }
    }

    let values: Vec<i64> = samples.values().copied().collect();
    let (new_ratio, _) = metric_usage_ratio(&values, target_milli);
    if tolerances.is_within(new_ratio)
        || (usage_ratio < 1.0 && new_ratio > 1.0)
        || (usage_ratio > 1.0 && new_ratio < 1.0)
    {
        return Ok(proposal(current_replicas));
    }
    let new_replicas = ceil_i32(new_ratio * values.len() as f64);
    if (new_ratio < 1.0 && new_replicas > current_replicas)
        || (new_ratio > 1.0 && new_replicas < current_replicas)
    {
        return Ok(proposal(current_replicas));
    }
    Ok(proposal(new_replicas))
}

/// upstream `getUsageRatioReplicaCount`: `ceil(ratio * Running&Ready pods)`, or `ceil(ratio)`
/// from zero replicas (no tolerance then).
fn usage_ratio_replica_count(
    current_replicas: i32,
    usage_ratio: f64,
    pods: &[PodMetric],
    tolerances: Tolerances,
) -> Result<i32, CalcError> {
    if current_replicas == 0 {
        return Ok(ceil_i32(usage_ratio));
    }
    if tolerances.is_within(usage_ratio) {
        return Ok(current_replicas);
    }
    if pods.is_empty() {
        return Err(CalcError::NoPodsForReadyCount);
    }
    Ok(ceil_i32(usage_ratio * ready_pod_count(pods) as f64))
}

/// An Object metric with a `Value` target (upstream `GetObjectMetricReplicas`);
/// `current_replicas` is `spec.replicas`, `pods` the selector's pods (for the ready count).
pub fn object_metric_replicas(
    current_replicas: i32,
    target_milli: i64,
    value_milli: i64,
    pods: &[PodMetric],
    tolerances: Tolerances,
) -> Result<Proposal, CalcError> {
    let usage_ratio = value_milli as f64 / target_milli as f64;
    let replicas = usage_ratio_replica_count(current_replicas, usage_ratio, pods, tolerances)?;
    Ok(Proposal {
        replicas,
        usage_milli: value_milli,
        usage_ratio,
    })
}

/// An Object metric with an `AverageValue` target (upstream `GetObjectPerPodMetricReplicas`);
/// `status_replicas` is the scale target's `status.replicas`.
pub fn object_per_pod_metric_replicas(
    status_replicas: i32,
    target_average_milli: i64,
    value_milli: i64,
    tolerances: Tolerances,
) -> Proposal {
    let mut replicas = status_replicas;
    let usage_ratio = value_milli as f64 / (target_average_milli as f64 * status_replicas as f64);
    if !tolerances.is_within(usage_ratio) {
        replicas = ceil_i32(value_milli as f64 / target_average_milli as f64);
    }
    let usage = (value_milli as f64 / status_replicas as f64).ceil() as i64;
    Proposal {
        replicas,
        usage_milli: usage,
        usage_ratio,
    }
}

/// An External metric with a `Value` target (upstream `GetExternalMetricReplicas`): the sum of
/// all returned series against the target.
pub fn external_metric_replicas(
    metric_name: &str,
    current_replicas: i32,
    target_milli: i64,
    values_milli: &[i64],
    pods: &[PodMetric],
    tolerances: Tolerances,
) -> Result<Proposal, CalcError> {
    if values_milli.is_empty() {
        return Err(CalcError::NoExternalMetrics(metric_name.to_owned()));
    }
    // v1.34 sums without an overflow guard (PR #133888 added one in v1.35).
    let usage = values_milli
        .iter()
        .fold(0i64, |acc, v| acc.wrapping_add(*v));
    let usage_ratio = usage as f64 / target_milli as f64;
    let replicas = usage_ratio_replica_count(current_replicas, usage_ratio, pods, tolerances)?;
    Ok(Proposal {
        replicas,
        usage_milli: usage,
        usage_ratio,
    })
}

/// An External metric with an `AverageValue` target (upstream
/// `GetExternalPerPodMetricReplicas`): `ceil(sum / target)` once outside tolerance.
pub fn external_per_pod_metric_replicas(
    metric_name: &str,
    status_replicas: i32,
    target_per_pod_milli: i64,
    values_milli: &[i64],
    tolerances: Tolerances,
) -> Result<Proposal, CalcError> {
    if values_milli.is_empty() {
        return Err(CalcError::NoExternalMetrics(metric_name.to_owned()));
    }
    let mut usage = 0i64;
    for v in values_milli {
        usage = usage.wrapping_add(*v);
        if usage < 0 {
            // Only an int64 overflow gets here (PR #127050).
            usage = i64::MAX;
            break;
        }
    }
    let mut replicas = status_replicas;
    let usage_ratio = usage as f64 / (target_per_pod_milli as f64 * status_replicas as f64);
    if !tolerances.is_within(usage_ratio) {
        let wanted = (usage as f64 / target_per_pod_milli as f64).ceil();
        replicas = if wanted > i32::MAX as f64 {
            i32::MAX
        } else {
            wanted as i32
        };
    }
    let usage_milli = if usage as f64 >= i64::MAX as f64 {
        i64::MAX
    } else {
        (usage as f64 / status_replicas as f64).ceil() as i64
    };
    Ok(Proposal {
        replicas,
        usage_milli,
        usage_ratio,
    })
}

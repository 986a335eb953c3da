//! Checks and builds `service.autoscaler`: replica bounds (`1 <= minReplicas <= maxReplicas`),
//! a `destination` reporter only with a sidecar, positive periods, and `behavior` with
//! Kubernetes' defaults filled in per direction and per field.

use std::time::Duration;

use super::super::diagnostic::Problems;
use super::super::format::{AutoscalerSpec, Reporter, ScalingRulesSpec};
use super::super::model::{Autoscaler, Behavior, ScalingPolicy, ScalingRules};
use super::super::path::FieldPath;
use super::super::units::format_duration;
use super::{duration, positive_duration};

/// Kubernetes' limit on `stabilizationWindowSeconds`.
const MAX_STABILIZATION: Duration = Duration::from_secs(3600);
/// Kubernetes' limit on a policy's `periodSeconds`.
const MAX_POLICY_PERIOD: Duration = Duration::from_secs(1800);

pub(super) fn build(
    spec: &AutoscalerSpec,
    path: &FieldPath,
    has_sidecar: bool,
    problems: &mut Problems<'_>,
) -> Autoscaler {
    if spec.min_replicas == 0 {
        problems.at(
            &path.key("minReplicas"),
            "minReplicas 0 (scale to zero) needs Kubernetes' alpha HPAScaleToZero feature gate, which the harness does not model; use 1 or more",
        );
    } else if spec.max_replicas < spec.min_replicas {
        problems.at(
            &path.key("maxReplicas"),
            format!(
                "maxReplicas ({}) is less than minReplicas ({})",
                spec.max_replicas, spec.min_replicas
            ),
        );
    }
    let reporter = spec.metric.reporter;
    if reporter == Reporter::Destination && !has_sidecar {
        problems.at(
            &path.key("metric").key("reporter"),
            "reporter `destination` counts the requests each pod's sidecar admitted, but `service.sidecar` is not set; add a sidecar or use `source`",
        );
    }
    let sync_period = positive_duration(problems, &path.key("syncPeriod"), &spec.sync_period);
    let behavior_path = path.key("behavior");
    let behavior = spec.behavior.clone().unwrap_or_default();
    let defaults = Behavior::default();
    Autoscaler {
        min_replicas: spec.min_replicas,
        max_replicas: spec.max_replicas,
        reporter,
        target_average_value: spec.metric.target_average_value,
        sync_period: sync_period.unwrap_or(Duration::from_secs(15)),
        tolerance: spec.tolerance,
        behavior: Behavior {
            scale_up: rules(
                behavior.scale_up.as_ref(),
                defaults.scale_up,
                &behavior_path.key("scaleUp"),
                problems,
            ),
            scale_down: rules(
                behavior.scale_down.as_ref(),
                defaults.scale_down,
                &behavior_path.key("scaleDown"),
                problems,
            ),
        },
    }
}

/// One direction's rules: each field written replaces the default's (as Kubernetes' defaulting
/// does), and is checked against Kubernetes' limits.
fn rules(
    spec: Option<&ScalingRulesSpec>,
    defaults: ScalingRules,
    path: &FieldPath,
    problems: &mut Problems<'_>,
) -> ScalingRules {
    let Some(spec) = spec else {
        return defaults;
    };
    let window_path = path.key("stabilizationWindow");
    let stabilization_window = spec
        .stabilization_window
        .as_ref()
        .and_then(|text| duration(problems, &window_path, text));
    if let Some(window) = stabilization_window
        && window > MAX_STABILIZATION
    {
        let message = too_long("the stabilization window", window, MAX_STABILIZATION);
        problems.at(&window_path, message);
    }
    let policies = spec.policies.as_ref().map(|policies| {
        policies
            .iter()
            .enumerate()
            .map(|(i, policy)| {
                let period_path = path.key("policies").index(i).key("period");
                let period = positive_duration(problems, &period_path, &policy.period)
                    .unwrap_or(Duration::from_secs(15));
                if period > MAX_POLICY_PERIOD {
                    let message = too_long("a policy period", period, MAX_POLICY_PERIOD);
                    problems.at(&period_path, message);
                }
                ScalingPolicy {
                    kind: policy.r#type,
                    value: policy.value,
                    period,
                }
            })
            .collect()
    });
    ScalingRules {
        stabilization_window: stabilization_window.unwrap_or(defaults.stabilization_window),
        select_policy: spec.select_policy.unwrap_or(defaults.select_policy),
        policies: policies.unwrap_or(defaults.policies),
    }
}

fn too_long(what: &str, value: Duration, limit: Duration) -> String {
    format!(
        "{what} may be at most {} (Kubernetes' limit), found {}",
        format_duration(limit),
        format_duration(value)
    )
}

// Ported from kubernetes/kubernetes v1.34 (release-1.34 line; horizontal.go read from a stored
// copy of the v1.32 line, plus the v1.33 per-HPA tolerances; the sync flow is unchanged
// through v1.34).
// pkg/controller/podautoscaler/horizontal.go (reconcileAutoscaler, computeReplicasForMetrics
// for a single metric, normalizeDesiredReplicas, normalizeDesiredReplicasWithBehaviors,
// maybeInitScaleDownStabilizationWindow, setStatus, setCurrentReplicasAndMetricsInStatus).
//! One sync of one HPA as a pure function: [`reconcile`] takes the spec, the state carried
//! from earlier syncs, the time, and what the controller would read from the API (the scale
//! subresource and the metric samples), and returns the replica count it would write, the
//! status conditions and the events. Call it every sync period (15 s upstream) on whatever
//! clock the caller runs.
//!
//! The order is upstream's: seed the recommendation history; a target at 0 replicas (with
//! `minReplicas > 0`) disables scaling; a count outside `[min, max]` is brought inside without
//! looking at metrics; otherwise the metric's proposal goes through stabilization and the
//! limits, and a rescale is recorded as a scale event.

use std::time::Duration;

use super::compute::compute_for_metric;
use super::normalize::{self, NormalizationArg};
use super::observe::{Decision, HpaEvent, Observation};
use super::pods::from_milli;
use super::spec::{ControllerOptions, HpaSpec};
use super::state::{ConditionType, HpaState};
use crate::events::EventType;

/// upstream `normalizeDesiredReplicas` (no behavior).
fn normalize_without_behavior(
    options: &ControllerOptions,
    spec: &HpaSpec,
    state: &mut HpaState,
    now: Duration,
    current: i32,
    prenormalized: i32,
) -> i32 {
    let stabilized = normalize::stabilize_recommendation(
        &mut state.recommendations,
        now,
        options.downscale_stabilization,
        prenormalized,
    );
    if stabilized != prenormalized {
        state.set_condition(
            ConditionType::AbleToScale,
            true,
            "ScaleDownStabilized",
            "recent recommendations were higher than current one, applying the highest recent recommendation",
        );
    } else {
        state.set_condition(
            ConditionType::AbleToScale,
            true,
            "ReadyForNewScale",
            "recommended size matches current size",
        );
    }
    let n = normalize::convert_desired_replicas_with_rules(
        current,
        stabilized,
        spec.min_replicas,
        spec.max_replicas,
    );
    let limited = n.replicas != stabilized;
    state.set_condition(ConditionType::ScalingLimited, limited, n.reason, n.message);
    n.replicas
}

/// upstream `normalizeDesiredReplicasWithBehaviors`.
fn normalize_with_behavior(
    options: &ControllerOptions,
    spec: &HpaSpec,
    state: &mut HpaState,
    now: Duration,
    current: i32,
    prenormalized: i32,
) -> i32 {
    let behavior = spec.behavior.clone().unwrap_or_default();
    let mut scale_down = behavior.scale_down_rules();
    // maybeInitScaleDownStabilizationWindow: the controller flag fills an unset window.
    scale_down.stabilization_window_seconds.get_or_insert(
        i32::try_from(options.downscale_stabilization.as_secs()).unwrap_or(i32::MAX),
    );
    let mut args = NormalizationArg {
        scale_up: behavior.scale_up_rules(),
        scale_down,
        min_replicas: spec.min_replicas,
        max_replicas: spec.max_replicas,
        current_replicas: current,
        desired_replicas: prenormalized,
    };
    let s =
        normalize::stabilize_recommendation_with_behaviors(&mut state.recommendations, now, &args);
    if s.replicas != prenormalized {
        state.set_condition(ConditionType::AbleToScale, true, s.reason, s.message);
    } else {
        state.set_condition(
            ConditionType::AbleToScale,
            true,
            "ReadyForNewScale",
            "recommended size matches current size",
        );
    }
    args.desired_replicas = s.replicas;
    let n = normalize::convert_desired_replicas_with_behavior_rate(
        &args,
        &state.scale_up_events,
        &state.scale_down_events,
        now,
    );
    let limited = n.replicas != s.replicas;
    state.set_condition(ConditionType::ScalingLimited, limited, n.reason, n.message);
    n.replicas
}

/// One sync of the HPA (upstream `reconcileAutoscaler`), at time `now` on the caller's clock.
pub fn reconcile(
    options: &ControllerOptions,
    spec: &HpaSpec,
    state: &mut HpaState,
    now: Duration,
    obs: &Observation,
) -> Decision {
    let mut events = Vec::new();
    let mut decision = Decision {
        desired_replicas: obs.current_replicas,
        rescaled: false,
        metric_replicas: None,
        usage_ratio: None,
        current_value: None,
        reason: String::new(),
        conditions: Vec::new(),
        events: Vec::new(),
        error: None,
    };
    state.set_condition(
        ConditionType::AbleToScale,
        true,
        "SucceededGetScale",
        "the HPA controller was able to get the target's current scale",
    );
    let current = obs.current_replicas;
    state.record_initial_recommendation(current, now);
    let min = spec.min_replicas;

    let mut rescale = true;
    let mut desired;
    if current == 0 && min != 0 {
        desired = 0;
        rescale = false;
        state.set_condition(
            ConditionType::ScalingActive,
            false,
            "ScalingDisabled",
            "scaling is disabled since the replica count of the target is zero",
        );
    } else if current > spec.max_replicas {
        decision.reason = "Current number of replicas above Spec.MaxReplicas".to_owned();
        desired = spec.max_replicas;
    } else if current < min {
        decision.reason = "Current number of replicas below Spec.MinReplicas".to_owned();
        desired = min;
    } else {
        let proposal = match compute_for_metric(options, spec, obs) {
            Ok(p) => p,
            Err(f) => {
                let message = format!("the HPA was unable to compute the replica count: {}", f.raw);
                state.set_condition(ConditionType::ScalingActive, false, f.reason, message);
                let aggregated = format!(
                    "invalid metrics (1 invalid out of 1), first error is: {}",
                    f.wrapped
                );
                events.push(warning(f.reason, f.raw));
                events.push(warning("FailedComputeMetricsReplicas", aggregated.clone()));
                // No scale; status.desiredReplicas keeps its previous value.
                decision.desired_replicas = current;
                decision.error = Some(format!(
                    "failed to compute desired number of replicas based on listed metrics: {aggregated}"
                ));
                decision.conditions = state.conditions.clone();
                decision.events = events;
                return decision;
            }
        };
        let metric_name = spec.metric.describe();
        state.set_condition(
            ConditionType::ScalingActive,
            true,
            "ValidMetricFound",
            format!(
                "the HPA was able to successfully calculate a replica count from {metric_name}"
            ),
        );
        decision.metric_replicas = Some(proposal.replicas);
        decision.usage_ratio = Some(proposal.usage_ratio);
        decision.current_value = Some(from_milli(proposal.usage_milli));
        desired = 0;
        let mut rescale_metric = "";
        if proposal.replicas > desired {
            desired = proposal.replicas;
            rescale_metric = &metric_name;
        }
        if desired > current {
            decision.reason = format!("{rescale_metric} above target");
        }
        if desired < current {
            decision.reason = "All metrics below target".to_owned();
        }
        desired = if spec.behavior.is_none() {
            normalize_without_behavior(options, spec, state, now, current, desired)
        } else {
            normalize_with_behavior(options, spec, state, now, current, desired)
        };
        rescale = desired != current;
    }

    if rescale {
        state.set_condition(
            ConditionType::AbleToScale,
            true,
            "SucceededRescale",
            format!("the HPA controller was able to update the target scale to {desired}"),
        );
        events.push(HpaEvent {
            event_type: EventType::Normal,
            reason: "SuccessfulRescale".to_owned(),
            message: format!("New size: {desired}; reason: {}", decision.reason),
        });
        state.store_scale_event(spec.behavior.as_ref(), current, desired, now);
        state.last_scale_time = Some(now);
    } else {
        desired = current;
    }
    state.desired_replicas = Some(desired);
    decision.desired_replicas = desired;
    decision.rescaled = rescale;
    decision.conditions = state.conditions.clone();
    decision.events = events;
    decision
}

/// [`reconcile`] with the default controller options.
pub fn reconcile_default(
    spec: &HpaSpec,
    state: &mut HpaState,
    now: Duration,
    obs: &Observation,
) -> Decision {
    reconcile(&ControllerOptions::default(), spec, state, now, obs)
}

fn warning(reason: &str, message: String) -> HpaEvent {
    HpaEvent {
        event_type: EventType::Warning,
        reason: reason.to_owned(),
        message,
    }
}

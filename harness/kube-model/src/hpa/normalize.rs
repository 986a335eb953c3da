// Ported from kubernetes/kubernetes v1.34 (release-1.34 line; horizontal.go read from a stored
// copy of the v1.32 line; normalization is unchanged through v1.34).
// pkg/controller/podautoscaler/horizontal.go (stabilizeRecommendation,
// convertDesiredReplicasWithRules, calculateScaleUpLimit, NormalizationArg,
// stabilizeRecommendationWithBehaviors, convertDesiredReplicasWithBehaviorRate,
// calculateScaleUpLimitWithScalingRules, calculateScaleDownLimitWithBehaviors).
//! From the metric's proposal to the replica count the controller writes: stabilization over
//! the recommendation history, then min/max and rate limits.
//!
//! **With `spec.behavior`** (after defaulting): the proposal is recorded; the result is the
//! current count moved toward the proposal but no further than the lowest recommendation of
//! the scale-up window (when going up) or the highest of the scale-down window (when going
//! down). Then the rate: going up, at most what the scale-up policies allow on top of the
//! replicas at the start of each policy's period (`Pods`: `+value`, `Percent`:
//! `ceil(start * (1 + value/100))`, `selectPolicy` picks the largest (`Max`) or smallest
//! (`Min`) of those limits, `Disabled` freezes) and never above `maxReplicas`; going down the
//! mirror image (`Percent`: `trunc(start * (1 - value/100))`) and never below `minReplicas`.
//! "Replicas at the start of the period" is the current count minus the scale-ups plus the
//! scale-downs recorded within that period.
//!
//! **Without `spec.behavior`**: only the scale-down stabilization (the controller's
//! `--horizontal-pod-autoscaler-downscale-stabilization`, 300 s by default: the highest
//! recommendation in the window wins) and a fixed scale-up limit of `max(2 * current, 4)` per
//! sync, then min/max. No scale events are recorded.

use std::time::Duration;

use super::behavior::{PolicyType, ScalingRules, SelectPolicy};
use super::state::{
    ScaleEvent, TimestampedRecommendation, after_cutoff, before_cutoff, replicas_change_per_period,
    seconds,
};

/// Fixed scale-up factor of the no-behavior path (upstream `scaleUpLimitFactor`).
pub const SCALE_UP_LIMIT_FACTOR: f64 = 2.0;
/// Fixed scale-up floor of the no-behavior path (upstream `scaleUpLimitMinimum`).
pub const SCALE_UP_LIMIT_MINIMUM: f64 = 4.0;

/// A normalized count with the condition reason and message that explain it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Normalized {
    pub replicas: i32,
    pub reason: &'static str,
    pub message: &'static str,
}

const WITHIN_RANGE: Normalized = Normalized {
    replicas: 0,
    reason: "DesiredWithinRange",
    message: "the desired count is within the acceptable range",
};

fn limited(replicas: i32, reason: &'static str, message: &'static str) -> Normalized {
    Normalized {
        replicas,
        reason,
        message,
    }
}

/// upstream `stabilizeRecommendation` (no behavior): records the proposal (reusing the slot
/// of the last sample older than the window) and returns the highest recommendation within
/// the window.
pub fn stabilize_recommendation(
    history: &mut Vec<TimestampedRecommendation>,
    now: Duration,
    window: Duration,
    prenormalized: i32,
) -> i32 {
    let mut max_recommendation = prenormalized;
    let mut old_sample = None;
    for (i, rec) in history.iter().enumerate() {
        if before_cutoff(rec.timestamp, now, window) {
            old_sample = Some(i);
        } else if rec.recommendation > max_recommendation {
            max_recommendation = rec.recommendation;
        }
    }
    let new = TimestampedRecommendation {
        recommendation: prenormalized,
        timestamp: now,
    };
    match old_sample {
        Some(i) => history[i] = new,
        None => history.push(new),
    }
    max_recommendation
}

/// upstream `calculateScaleUpLimit`: `max(2 * current, 4)`.
pub fn calculate_scale_up_limit(current_replicas: i32) -> i32 {
    (SCALE_UP_LIMIT_FACTOR * current_replicas as f64).max(SCALE_UP_LIMIT_MINIMUM) as i32
}

/// upstream `convertDesiredReplicasWithRules` (no behavior).
pub fn convert_desired_replicas_with_rules(
    current_replicas: i32,
    desired_replicas: i32,
    min_replicas: i32,
    max_replicas: i32,
) -> Normalized {
    let scale_up_limit = calculate_scale_up_limit(current_replicas);
    let (maximum, reason, message) = if max_replicas > scale_up_limit {
        (
            scale_up_limit,
            "ScaleUpLimit",
            "the desired replica count is increasing faster than the maximum scale rate",
        )
    } else {
        (
            max_replicas,
            "TooManyReplicas",
            "the desired replica count is more than the maximum replica count",
        )
    };
    if desired_replicas < min_replicas {
        limited(
            min_replicas,
            "TooFewReplicas",
            "the desired replica count is less than the minimum replica count",
        )
    } else if desired_replicas > maximum {
        limited(maximum, reason, message)
    } else {
        Normalized {
            replicas: desired_replicas,
            ..WITHIN_RANGE
        }
    }
}

/// upstream `NormalizationArg`: the inputs of the behavior path. `scale_down` must have its
/// stabilization window filled (the controller does so from its flag).
#[derive(Debug, Clone, PartialEq)]
pub struct NormalizationArg {
    pub scale_up: ScalingRules,
    pub scale_down: ScalingRules,
    pub min_replicas: i32,
    pub max_replicas: i32,
    pub current_replicas: i32,
    pub desired_replicas: i32,
}

/// upstream `stabilizeRecommendationWithBehaviors`: records the unstabilized proposal and
/// returns the current count clamped to `[min of the up window, max of the down window]`,
/// with the `AbleToScale` reason/message upstream would use if it differs from the proposal.
pub fn stabilize_recommendation_with_behaviors(
    history: &mut Vec<TimestampedRecommendation>,
    now: Duration,
    args: &NormalizationArg,
) -> Normalized {
    let up_window = seconds(args.scale_up.stabilization_window_seconds.unwrap_or(0));
    let down_window = seconds(args.scale_down.stabilization_window_seconds.unwrap_or(0));
    let mut up_recommendation = args.desired_replicas;
    let mut down_recommendation = args.desired_replicas;
    let mut old_sample = None;
    for (i, rec) in history.iter().enumerate() {
        if after_cutoff(rec.timestamp, now, up_window) {
            up_recommendation = up_recommendation.min(rec.recommendation);
        }
        if after_cutoff(rec.timestamp, now, down_window) {
            down_recommendation = down_recommendation.max(rec.recommendation);
        }
        if before_cutoff(rec.timestamp, now, up_window)
            && before_cutoff(rec.timestamp, now, down_window)
        {
            old_sample = Some(i);
        }
    }
    let recommendation = args
        .current_replicas
        .max(up_recommendation)
        .min(down_recommendation);
    let new = TimestampedRecommendation {
        recommendation: args.desired_replicas,
        timestamp: now,
    };
    match old_sample {
        Some(i) => history[i] = new,
        None => history.push(new),
    }
    if args.desired_replicas >= args.current_replicas {
        limited(
            recommendation,
            "ScaleUpStabilized",
            "recent recommendations were lower than current one, applying the lowest recent recommendation",
        )
    } else {
        limited(
            recommendation,
            "ScaleDownStabilized",
            "recent recommendations were higher than current one, applying the highest recent recommendation",
        )
    }
}

/// upstream `convertDesiredReplicasWithBehaviorRate`: applies the rate policies and min/max.
pub fn convert_desired_replicas_with_behavior_rate(
    args: &NormalizationArg,
    scale_up_events: &[ScaleEvent],
    scale_down_events: &[ScaleEvent],
    now: Duration,
) -> Normalized {
    if args.desired_replicas > args.current_replicas {
        let scale_up_limit = calculate_scale_up_limit_with_scaling_rules(
            args.current_replicas,
            scale_up_events,
            scale_down_events,
            &args.scale_up,
            now,
        )
        // No further scale-up until the recorded events age out.
        .max(args.current_replicas);
        let (maximum, reason, message) = if args.max_replicas > scale_up_limit {
            (
                scale_up_limit,
                "ScaleUpLimit",
                "the desired replica count is increasing faster than the maximum scale rate",
            )
        } else {
            (
                args.max_replicas,
                "TooManyReplicas",
                "the desired replica count is more than the maximum replica count",
            )
        };
        if args.desired_replicas > maximum {
            return limited(maximum, reason, message);
        }
    } else if args.desired_replicas < args.current_replicas {
        let scale_down_limit = calculate_scale_down_limit_with_behaviors(
            args.current_replicas,
            scale_up_events,
            scale_down_events,
            &args.scale_down,
            now,
        )
        .min(args.current_replicas);
        let (minimum, reason, message) = if args.min_replicas < scale_down_limit {
            (
                scale_down_limit,
                "ScaleDownLimit",
                "the desired replica count is decreasing faster than the maximum scale rate",
            )
        } else {
            (
                args.min_replicas,
                "TooFewReplicas",
                "the desired replica count is less than the minimum replica count",
            )
        };
        if args.desired_replicas < minimum {
            return limited(minimum, reason, message);
        }
    }
    Normalized {
        replicas: args.desired_replicas,
        ..WITHIN_RANGE
    }
}

/// Replicas at the start of a policy's period: current minus recent scale-ups plus recent
/// scale-downs.
fn period_start_replicas(
    current_replicas: i32,
    period_seconds: i32,
    scale_up_events: &[ScaleEvent],
    scale_down_events: &[ScaleEvent],
    now: Duration,
) -> i32 {
    current_replicas - replicas_change_per_period(period_seconds, scale_up_events, now)
        + replicas_change_per_period(period_seconds, scale_down_events, now)
}

/// upstream `calculateScaleUpLimitWithScalingRules`: the highest count the scale-up policies
/// allow now (may be below `current` right after big scale-ups; the caller clamps).
pub fn calculate_scale_up_limit_with_scaling_rules(
    current_replicas: i32,
    scale_up_events: &[ScaleEvent],
    scale_down_events: &[ScaleEvent],
    rules: &ScalingRules,
    now: Duration,
) -> i32 {
    let (mut result, pick): (i32, fn(i32, i32) -> i32) = match rules.select() {
        SelectPolicy::Disabled => return current_replicas,
        // For scaling up, the smallest change gives the smallest limit.
        SelectPolicy::Min => (i32::MAX, i32::min),
        SelectPolicy::Max => (i32::MIN, i32::max),
    };
    for policy in rules.policy_list() {
        let start = period_start_replicas(
            current_replicas,
            policy.period_seconds,
            scale_up_events,
            scale_down_events,
            now,
        );
        let proposed = match policy.policy_type {
            PolicyType::Pods => start + policy.value,
            // Rounded up so that a small percentage still adds a pod.
            PolicyType::Percent => {
                (start as f64 * (1.0 + policy.value as f64 / 100.0)).ceil() as i32
            }
        };
        result = pick(result, proposed);
    }
    result
}

/// upstream `calculateScaleDownLimitWithBehaviors`: the lowest count the scale-down policies
/// allow now (may be above `current` right after big scale-downs; the caller clamps).
pub fn calculate_scale_down_limit_with_behaviors(
    current_replicas: i32,
    scale_up_events: &[ScaleEvent],
    scale_down_events: &[ScaleEvent],
    rules: &ScalingRules,
    now: Duration,
) -> i32 {
    let (mut result, pick): (i32, fn(i32, i32) -> i32) = match rules.select() {
        SelectPolicy::Disabled => return current_replicas,
        // For scaling down, the smallest change gives the largest limit.
        SelectPolicy::Min => (i32::MIN, i32::max),
        SelectPolicy::Max => (i32::MAX, i32::min),
    };
    for policy in rules.policy_list() {
        let start = period_start_replicas(
            current_replicas,
            policy.period_seconds,
            scale_up_events,
            scale_down_events,
            now,
        );
        let proposed = match policy.policy_type {
            PolicyType::Pods => start - policy.value,
            // Truncated toward zero, as Go's float-to-int conversion.
            PolicyType::Percent => (start as f64 * (1.0 - policy.value as f64 / 100.0)) as i32,
        };
        result = pick(result, proposed);
    }
    result
}

// Ported from kubernetes/kubernetes v1.34 (release-1.34 line; horizontal.go read from a stored
// copy of the v1.32 line; these parts are unchanged through v1.34).
// pkg/controller/podautoscaler/horizontal.go (timestampedRecommendation, timestampedScaleEvent,
// recordInitialRecommendation, storeScaleEvent, markScaleEventsOutdated,
// getReplicasChangePerPeriod, setCondition) and the HPA status conditions of
// k8s.io/api/autoscaling/v2.
//! What the controller remembers about one HPA between syncs, as explicit state: the
//! recommendation history used for stabilization, the scale-up and scale-down events used by
//! the rate policies, and the status it last wrote (conditions, desired replicas, last scale
//! time). Upstream keeps the first two in memory only: a controller-manager restart (or a
//! leader change) forgets them, which a caller models with a fresh [`HpaState`].
//!
//! Time is a [`Duration`] since an epoch the caller picks (a scenario's start, say); every
//! function takes `now` explicitly. A window reaching back before the epoch simply covers
//! everything since it.

use std::time::Duration;

use serde::Serialize;

use super::behavior::Behavior;

/// `timestampedRecommendation`: an unstabilized recommendation and when it was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TimestampedRecommendation {
    pub recommendation: i32,
    pub timestamp: Duration,
}

/// `timestampedScaleEvent`: a rescale by `replica_change` pods (always non-negative; the
/// direction is the list it is kept in). `outdated` marks an event older than the direction's
/// longest policy period, whose slot the next event may reuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScaleEvent {
    pub replica_change: i32,
    pub timestamp: Duration,
    pub outdated: bool,
}

impl ScaleEvent {
    pub const fn new(replica_change: i32, timestamp: Duration) -> Self {
        ScaleEvent {
            replica_change,
            timestamp,
            outdated: false,
        }
    }
}

/// `HorizontalPodAutoscalerConditionType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ConditionType {
    AbleToScale,
    ScalingActive,
    ScalingLimited,
}

/// One status condition (`status` is `True`/`False`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Condition {
    #[serde(rename = "type")]
    pub condition_type: ConditionType,
    pub status: bool,
    pub reason: String,
    pub message: String,
}

/// Everything the controller carries from one sync of an HPA to the next.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HpaState {
    /// Recent unstabilized recommendations (slots are reused, so order is not by time).
    pub recommendations: Vec<TimestampedRecommendation>,
    pub scale_up_events: Vec<ScaleEvent>,
    pub scale_down_events: Vec<ScaleEvent>,
    /// `status.conditions`, in the order they were first set.
    pub conditions: Vec<Condition>,
    /// `status.desiredReplicas` as last written.
    pub desired_replicas: Option<i32>,
    /// `status.lastScaleTime`.
    pub last_scale_time: Option<Duration>,
    /// Whether the history exists (upstream: the map entry is non-nil). A fresh state has
    /// none, so the first sync seeds it with the current count; set it with an empty history
    /// to mimic upstream tests that start from an empty, non-nil slice.
    pub history_started: bool,
}

impl HpaState {
    pub fn new() -> Self {
        HpaState::default()
    }

    /// The condition of a type, if set.
    pub fn condition(&self, condition_type: ConditionType) -> Option<&Condition> {
        self.conditions
            .iter()
            .find(|c| c.condition_type == condition_type)
    }

    /// upstream `setCondition`: replaces the condition of that type, or appends it.
    pub fn set_condition(
        &mut self,
        condition_type: ConditionType,
        status: bool,
        reason: &str,
        message: impl Into<String>,
    ) {
        let new = Condition {
            condition_type,
            status,
            reason: reason.to_owned(),
            message: message.into(),
        };
        match self
            .conditions
            .iter_mut()
            .find(|c| c.condition_type == condition_type)
        {
            Some(existing) => *existing = new,
            None => self.conditions.push(new),
        }
    }

    /// upstream `recordInitialRecommendation`: the first sync of an HPA seeds the history
    /// with the current replica count, which then takes part in stabilization.
    pub fn record_initial_recommendation(&mut self, current_replicas: i32, now: Duration) {
        if !self.history_started {
            if self.recommendations.is_empty() {
                self.recommendations.push(TimestampedRecommendation {
                    recommendation: current_replicas,
                    timestamp: now,
                });
            }
            self.history_started = true;
        }
    }

    /// upstream `storeScaleEvent`: records a rescale from `prev` to `new` replicas, reusing the
    /// slot of an event older than the direction's longest policy period. Nothing is stored
    /// for an HPA without `spec.behavior`.
    pub fn store_scale_event(
        &mut self,
        behavior: Option<&Behavior>,
        prev_replicas: i32,
        new_replicas: i32,
        now: Duration,
    ) {
        let Some(behavior) = behavior else { return };
        let (events, longest, change) = if new_replicas > prev_replicas {
            (
                &mut self.scale_up_events,
                behavior.scale_up_rules().longest_policy_period(),
                new_replicas - prev_replicas,
            )
        } else {
            (
                &mut self.scale_down_events,
                behavior.scale_down_rules().longest_policy_period(),
                prev_replicas - new_replicas,
            )
        };
        mark_scale_events_outdated(events, longest, now);
        let event = ScaleEvent::new(change, now);
        // The last outdated slot is the one reused.
        match events.iter().rposition(|e| e.outdated) {
            Some(i) => events[i] = event,
            None => events.push(event),
        }
    }
}

/// `time.Now().Add(-window)` compared with `timestamp.After`: is `timestamp` strictly later
/// than `now - window`? A cutoff before the epoch admits every timestamp.
pub fn after_cutoff(timestamp: Duration, now: Duration, window: Duration) -> bool {
    match now.checked_sub(window) {
        Some(cutoff) => timestamp > cutoff,
        None => true,
    }
}

/// `timestamp.Before(now - window)`; nothing is before a cutoff earlier than the epoch.
pub fn before_cutoff(timestamp: Duration, now: Duration, window: Duration) -> bool {
    match now.checked_sub(window) {
        Some(cutoff) => timestamp < cutoff,
        None => false,
    }
}

/// Seconds from the API's `int32` fields (negative values read as zero).
pub fn seconds(value: i32) -> Duration {
    Duration::from_secs(u64::try_from(value).unwrap_or(0))
}

/// upstream `markScaleEventsOutdated`: flags events older than the longest policy period.
pub fn mark_scale_events_outdated(events: &mut [ScaleEvent], longest_period: i32, now: Duration) {
    let period = seconds(longest_period);
    for event in events.iter_mut() {
        if before_cutoff(event.timestamp, now, period) {
            event.outdated = true;
        }
    }
}

/// upstream `getReplicasChangePerPeriod`: the pods changed by events within the last
/// `period_seconds`.
pub fn replicas_change_per_period(
    period_seconds: i32,
    events: &[ScaleEvent],
    now: Duration,
) -> i32 {
    let period = seconds(period_seconds);
    events
        .iter()
        .filter(|e| after_cutoff(e.timestamp, now, period))
        .map(|e| e.replica_change)
        .fold(0i32, i32::wrapping_add)
}

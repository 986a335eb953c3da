//! Cases from upstream's own unit tests of the HPA controller's normalization, translated to
//! the model: pkg/controller/podautoscaler/horizontal_test.go (release line read: a stored
//! copy of the v1.3x line whose scale events are non-negative and whose limits read both
//! event lists, as in v1.34).
//! Upstream builds timestamps from `time.Now()`; here they are offsets from a fixed `NOW`.

use std::time::Duration;

use super::Behavior;
use super::behavior::{
    ScalingPolicy, ScalingRules, SelectPolicy, generate_scale_down_rules, generate_scale_up_rules,
};
use super::normalize::{
    NormalizationArg, calculate_scale_down_limit_with_behaviors, calculate_scale_up_limit,
    calculate_scale_up_limit_with_scaling_rules, convert_desired_replicas_with_behavior_rate,
    convert_desired_replicas_with_rules, stabilize_recommendation,
    stabilize_recommendation_with_behaviors,
};
use super::state::{HpaState, ScaleEvent, TimestampedRecommendation, replicas_change_per_period};

const NOW: Duration = Duration::from_secs(100_000);

fn ago(secs: u64) -> Duration {
    NOW - Duration::from_secs(secs)
}

fn rec(recommendation: i32, secs_ago: u64) -> TimestampedRecommendation {
    TimestampedRecommendation {
        recommendation,
        timestamp: ago(secs_ago),
    }
}

/// upstream `generateScalingRules`.
fn rules(
    pods: i32,
    pods_period: i32,
    percent: i32,
    percent_period: i32,
    window: i32,
) -> ScalingRules {
    let mut policies = Vec::new();
    if pods != 0 {
        policies.push(ScalingPolicy::pods(pods, pods_period));
    }
    if percent != 0 {
        policies.push(ScalingPolicy::percent(percent, percent_period));
    }
    ScalingRules::new(window, SelectPolicy::Max, policies)
}

/// upstream `generateEventsUniformDistribution`: events centred in equal segments of the last
/// `period` seconds (Go truncates the float seconds to a whole number before scaling).
fn uniform(raw: &[i32], period: i32) -> Vec<ScaleEvent> {
    let segment = f64::from(period) / raw.len() as f64;
    raw.iter()
        .enumerate()
        .map(|(i, change)| {
            let back = f64::from(period) - segment * (i as f64 + 1.0) + segment / 2.0;
            ScaleEvent::new(*change, ago(back as u64))
        })
        .collect()
}

// horizontal_test.go TestCalculateScaleUpLimitWithScalingRules.
#[test]
fn calculate_scale_up_limit_with_min_select() {
    let r = ScalingRules::new(
        300,
        SelectPolicy::Min,
        vec![ScalingPolicy::pods(2, 60), ScalingPolicy::percent(50, 60)],
    );
    assert_eq!(
        calculate_scale_up_limit_with_scaling_rules(1, &[], &[], &r, NOW),
        2
    );
}

// horizontal_test.go TestCalculateScaleDownLimitWithBehaviors.
#[test]
fn calculate_scale_down_limit_with_min_select() {
    let r = ScalingRules::new(
        300,
        SelectPolicy::Min,
        vec![ScalingPolicy::pods(2, 60), ScalingPolicy::percent(50, 60)],
    );
    assert_eq!(
        calculate_scale_down_limit_with_behaviors(5, &[], &[], &r, NOW),
        3
    );
}

// horizontal_test.go TestConvertDesiredReplicasWithRules (the last case's expectation is
// calculateScaleUpLimit(3) itself; upstream's test init raises the factor to 8, production
// uses 2, so here it is 6).
#[test]
fn convert_desired_replicas_with_rules_cases() {
    let cases = [
        (5, 7, 3, 8, 7, "DesiredWithinRange"),
        (3, 1, 2, 8, 2, "TooFewReplicas"),
        (1, 0, 0, 10, 0, "DesiredWithinRange"),
        (20, 1000, 1, 10, 10, "TooManyReplicas"),
        (
            3,
            1000,
            1,
            2000,
            calculate_scale_up_limit(3),
            "ScaleUpLimit",
        ),
    ];
    for (current, desired, min, max, want, reason) in cases {
        let got = convert_desired_replicas_with_rules(current, desired, min, max);
        assert_eq!(
            (got.replicas, got.reason),
            (want, reason),
            "{current}->{desired}"
        );
    }
    assert_eq!(calculate_scale_up_limit(3), 6);
    assert_eq!(calculate_scale_up_limit(1), 4);
}

// horizontal_test.go TestNormalizeDesiredReplicas (no behavior, 5 min downscale window).
#[test]
fn normalize_desired_replicas_without_behavior() {
    let cases: Vec<(&str, Vec<TimestampedRecommendation>, i32, i32, usize)> = vec![
        ("empty log", vec![], 5, 5, 1),
        ("stabilize", vec![rec(4, 120), rec(5, 60)], 3, 5, 3),
        ("no stabilize", vec![rec(1, 120), rec(2, 60)], 3, 3, 3),
        (
            "no stabilize - old recommendations",
            vec![rec(10, 600), rec(9, 540)],
            3,
            3,
            2,
        ),
        (
            "stabilize - old recommendations",
            vec![rec(10, 600), rec(4, 60), rec(5, 120), rec(9, 540)],
            3,
            5,
            4,
        ),
    ];
    for (name, mut history, desired, want, want_len) in cases {
        let got = stabilize_recommendation(&mut history, NOW, Duration::from_secs(300), desired);
        assert_eq!(got, want, "{name}");
        assert_eq!(history.len(), want_len, "{name}");
    }
}

// horizontal_test.go TestNormalizeDesiredReplicasWithBehavior.
#[test]
#[rustfmt::skip]
fn normalize_desired_replicas_with_behavior_stabilization() {
    struct Case {
        name: &'static str,
        history: Vec<TimestampedRecommendation>,
        current: i32,
        desired: i32,
        want: i32,
        want_history: Option<Vec<i32>>,
        up_window: i32,
        down_window: i32,
    }
    let case = |name, history, current, desired, want, want_history, up_window, down_window| Case {
        name,
        history,
        current,
        desired,
        want,
        want_history,
        up_window,
        down_window,
    };
    let cases = vec![
        case("empty recommendations for scaling down", vec![], 100, 5, 5, Some(vec![5]), 0, 0),
        case("simple scale down stabilization", vec![rec(4, 120), rec(5, 60)], 100, 3, 5, Some(vec![4, 5, 3]), 0, 180),
        case("simple scale up stabilization", vec![rec(4, 120), rec(5, 60)], 1, 7, 4, Some(vec![4, 5, 7]), 300, 0),
        case("no scale down stabilization", vec![rec(1, 120), rec(2, 60)], 100, 3, 3, Some(vec![1, 2, 3]), 300, 0),
        case("no scale up stabilization", vec![rec(4, 120), rec(5, 60)], 1, 3, 3, Some(vec![4, 5, 3]), 0, 300),
        case("no scale down stabilization, reuse recommendation element", vec![rec(10, 600), rec(9, 540)], 100, 3, 3, Some(vec![10, 3]), 0, 0),
        case("no scale up stabilization, reuse recommendation element", vec![rec(10, 600), rec(9, 540)], 1, 100, 100, Some(vec![10, 100]), 0, 0),
        case(
            "scale down stabilization, reuse one of obsolete recommendation element",
            vec![rec(10, 600), rec(4, 60), rec(5, 120), rec(9, 540)],
            100, 3, 5, Some(vec![10, 4, 5, 3]), 0, 180,
        ),
        case(
            "scale up stabilization, reuse one of obsolete recommendation element",
            vec![rec(10, 6000), rec(6, 60), rec(5, 120), rec(9, 180)],
            1, 100, 5, Some(vec![100, 6, 5, 9]), 300, 0,
        ),
        case(
            "scale up and down stabilization, do not scale up when prenormalized rec goes down",
            vec![rec(2, 6000), rec(3, 180)], 2, 1, 2, None, 300, 300,
        ),
        case(
            "scale up and down stabilization, do not scale down when prenormalized rec goes up",
            vec![rec(2, 6000), rec(1, 180)], 2, 3, 2, None, 300, 300,
        ),
    ];
    for mut c in cases {
        let args = NormalizationArg {
            scale_up: ScalingRules {
                stabilization_window_seconds: Some(c.up_window),
                ..ScalingRules::default()
            },
            scale_down: ScalingRules {
                stabilization_window_seconds: Some(c.down_window),
                ..ScalingRules::default()
            },
            min_replicas: 0,
            max_replicas: 0,
            current_replicas: c.current,
            desired_replicas: c.desired,
        };
        let got = stabilize_recommendation_with_behaviors(&mut c.history, NOW, &args);
        assert_eq!(got.replicas, c.want, "{}", c.name);
        if let Some(want) = c.want_history {
            let stored: Vec<i32> = c.history.iter().map(|r| r.recommendation).collect();
            assert_eq!(stored, want, "{}", c.name);
        }
    }
}

// horizontal_test.go TestScalingWithRules (all cases, including the one upstream marks
// `testThis` and skips).
#[test]
#[rustfmt::skip]
fn scaling_with_rules() {
    type Case = (&'static str, Vec<ScaleEvent>, Vec<ScaleEvent>, i32, i32, Option<ScalingRules>, Option<ScalingRules>, i32, i32, i32, &'static str);
    let e = Vec::new;
    let u = |r: &[i32]| uniform(r, 120);
    let cases: Vec<Case> = vec![
        ("prenormalized desired replicas within range", e(), e(), 3, 8, None, None, 5, 7, 7, "DesiredWithinRange"),
        ("prenormalized desired replicas < minReplicas", e(), e(), 2, 8, None, None, 3, 1, 2, "TooFewReplicas"),
        ("within range when minReplicas is 0", e(), e(), 0, 10, None, None, 1, 0, 0, "DesiredWithinRange"),
        ("maxReplicas is the limit because maxReplicas < scaleUpLimit", e(), e(), 1, 10, None, None, 20, 1000, 10, "TooManyReplicas"),
        ("desired replica count is more than the maximum replica count", e(), e(), 100, 150, None, None, 100, 1000, 150, "TooManyReplicas"),
        ("scaleUpLimit < maxReplicas with user policies", e(), e(), 1, 2000, Some(rules(0, 0, 1, 60, 0)), None, 3, 1000, 4, "ScaleUpLimit"),
        ("scaleDownLimit > minReplicas with user defined policies (testThis)", e(), e(), 3, 2000, None, Some(rules(20, 60, 0, 0, 0)), 1000, 3, 980, "ScaleDownLimit"),
        ("scaleUp with default behavior", e(), e(), 1, 1000, None, None, 10, 50, 20, "ScaleUpLimit"),
        ("scaleUp with pods policy larger than percent policy", e(), e(), 1, 1000, Some(rules(100, 60, 100, 60, 0)), None, 10, 500, 110, "ScaleUpLimit"),
        ("scaleUp with percent policy larger than pods policy", e(), e(), 1, 1000, Some(rules(2, 60, 100, 60, 0)), None, 10, 500, 20, "ScaleUpLimit"),
        ("scaleUp with spec MaxReplicas limitation with large pod policy", e(), e(), 1, 1000, Some(rules(100, 60, 0, 0, 0)), None, 10, 50, 50, "DesiredWithinRange"),
        ("scaleUp with spec MaxReplicas limitation with large percent policy", e(), e(), 1, 1000, Some(rules(10000, 60, 0, 0, 0)), None, 10, 50, 50, "DesiredWithinRange"),
        ("scaleUp with pod policy limitation", e(), e(), 1, 1000, Some(rules(30, 60, 0, 0, 0)), None, 10, 50, 40, "ScaleUpLimit"),
        ("scaleUp with percent policy limitation", e(), e(), 1, 1000, Some(rules(0, 0, 200, 60, 0)), None, 10, 50, 30, "ScaleUpLimit"),
        ("scaleDown with percent policy larger than pod policy", e(), e(), 1, 1000, None, Some(rules(20, 60, 1, 60, 300)), 100, 2, 80, "ScaleDownLimit"),
        ("scaleDown with pod policy larger than percent policy", e(), e(), 1, 1000, None, Some(rules(2, 60, 1, 60, 300)), 100, 2, 98, "ScaleDownLimit"),
        ("scaleDown with spec MinReplicas=nil limitation with large pod policy", e(), e(), 1, 1000, None, Some(rules(100, 60, 0, 0, 300)), 10, 0, 1, "TooFewReplicas"),
        ("scaleDown with spec MinReplicas limitation with large percent policy", e(), e(), 5, 1000, None, Some(rules(0, 0, 100, 60, 300)), 10, 2, 5, "TooFewReplicas"),
        ("scaleDown with pod policy limitation", e(), e(), 1, 1000, None, Some(rules(5, 60, 0, 0, 300)), 10, 2, 5, "ScaleDownLimit"),
        ("scaleDown with percent policy limitation", e(), e(), 1, 1000, None, Some(rules(0, 0, 50, 60, 300)), 10, 5, 5, "DesiredWithinRange"),
        ("scaleUp MaxReplicas limitation, large pod policy and events", u(&[1, 5, 9]), e(), 1, 200, Some(rules(300, 60, 0, 0, 0)), None, 100, 500, 200, "TooManyReplicas"),
        ("scaleUp MaxReplicas limitation, large percent policy and events", u(&[1, 5, 9]), e(), 1, 200, Some(rules(0, 0, 10000, 60, 0)), None, 100, 500, 200, "TooManyReplicas"),
        ("scaleUp currentReplicas limitation with many recent scale up events", u(&[1, 5, 9]), e(), 1, 1000, Some(rules(5, 120, 0, 0, 0)), None, 100, 500, 100, "ScaleUpLimit"),
        ("scaleUp with pod policy and previous scale up events", u(&[1, 5, 9]), e(), 1, 1000, Some(rules(150, 120, 0, 0, 0)), None, 100, 500, 235, "ScaleUpLimit"),
        ("scaleUp with percent policy and previous scale up events", u(&[1, 5, 9]), e(), 1, 1000, Some(rules(0, 0, 200, 120, 0)), None, 100, 500, 255, "ScaleUpLimit"),
        ("scaleUp with percent policy and previous scale up and down events", u(&[4]), u(&[2]), 1, 1000, Some(rules(0, 0, 300, 300, 0)), None, 6, 24, 16, "ScaleUpLimit"),
        ("scaleDown with default policy and previous events", e(), u(&[1, 5, 9]), 1, 1000, None, None, 10, 5, 5, "DesiredWithinRange"),
        ("scaleDown MinReplicas=nil limitation, large pod policy and events", e(), u(&[1, 5, 9]), 1, 1000, None, Some(rules(115, 120, 0, 0, 300)), 100, 0, 1, "TooFewReplicas"),
        ("scaleDown MinReplicas limitation, large pod policy and events", e(), u(&[1, 5, 9]), 5, 1000, None, Some(rules(130, 120, 0, 0, 300)), 100, 0, 5, "TooFewReplicas"),
        ("scaleDown MinReplicas limitation, large percent policy and events", e(), u(&[1, 5, 9]), 5, 1000, None, Some(rules(0, 0, 100, 120, 300)), 100, 2, 5, "TooFewReplicas"),
        ("scaleDown with pod policy limitation and previous events", e(), u(&[1, 5, 9]), 1, 1000, None, Some(rules(5, 120, 0, 0, 300)), 100, 2, 100, "ScaleDownLimit"),
        ("scaleDown with percent policy limitation and previous events", e(), u(&[2, 4, 6]), 1, 1000, None, Some(rules(0, 0, 50, 120, 300)), 100, 0, 56, "ScaleDownLimit"),
        ("scaleDown with percent policy and previous scale up and down events", u(&[2]), u(&[4]), 1, 1000, None, Some(rules(0, 0, 50, 180, 0)), 10, 1, 6, "ScaleDownLimit"),
        ("scaleDown with previous events preventing further scale down", e(), u(&[10, 10, 10]), 1, 1000, None, Some(rules(0, 0, 10, 120, 300)), 100, 0, 100, "ScaleDownLimit"),
        ("scaleDown with previous events still allowing more scale down", e(), u(&[10, 10, 10]), 1, 1000, None, Some(rules(0, 0, 1000, 120, 300)), 10, 5, 5, "DesiredWithinRange"),
        ("'outdated' flag for events for one behavior for up", u(&[8, 12, 9, 11]), e(), 1, 1000, Some(rules(1000, 60, 0, 0, 0)), None, 100, 200, 200, "DesiredWithinRange"),
        ("events not marked 'outdated' for two policies, up", u(&[8, 12, 9, 11]), e(), 1, 1000, Some(rules(1000, 120, 100, 60, 0)), None, 100, 200, 200, "DesiredWithinRange"),
        ("events marked 'outdated' for two policies, up", u(&[8, 12, 9, 11]), e(), 1, 1000, Some(rules(1000, 30, 100, 60, 0)), None, 100, 200, 200, "DesiredWithinRange"),
        ("'outdated' flag for events for one behavior for down", e(), u(&[8, 12, 9, 11]), 1, 1000, None, Some(rules(1000, 60, 0, 0, 300)), 100, 5, 5, "DesiredWithinRange"),
        ("events not marked 'outdated' for two policies, down", e(), u(&[8, 12, 9, 11]), 1, 1000, None, Some(rules(1000, 120, 100, 60, 300)), 100, 5, 5, "DesiredWithinRange"),
        ("events marked 'outdated' for two policies, down", e(), u(&[8, 12, 9, 11]), 1, 1000, None, Some(rules(1000, 30, 100, 60, 300)), 100, 5, 5, "DesiredWithinRange"),
    ];
    for (name, up_events, down_events, min, max, up, down, current, desired, want, reason) in cases {
        let args = NormalizationArg {
            scale_up: generate_scale_up_rules(up.as_ref()),
            scale_down: generate_scale_down_rules(down.as_ref()),
            min_replicas: min,
            max_replicas: max,
            current_replicas: current,
            desired_replicas: desired,
        };
        let got = convert_desired_replicas_with_behavior_rate(&args, &up_events, &down_events, NOW);
        assert_eq!((got.replicas, got.reason), (want, reason), "{name}");
    }
}

// horizontal_test.go TestStoreScaleEvents: history before (change, seconds ago), the rules,
// the change over the last 60 s before storing, and the events after storing a change of 5
// (change, outdated); checked for both directions.
#[test]
#[rustfmt::skip]
fn store_scale_events() {
    type Case = (&'static str, Vec<(i32, u64)>, Option<ScalingRules>, i32, Vec<(i32, bool)>);
    let cases: Vec<Case> = vec![
        ("empty entries with default behavior", vec![], None, 0, vec![]),
        ("empty entries with two-policy-behavior", vec![], Some(rules(10, 60, 100, 60, 0)), 0, vec![(5, false)]),
        ("one outdated entry to be kept untouched without behavior", vec![(7, 61)], None, 0, vec![(7, false)]),
        ("one outdated entry to be replaced with behavior", vec![(7, 61)], Some(rules(10, 60, 100, 60, 0)), 0, vec![(5, false)]),
        ("one actual entry to be not touched with behavior", vec![(7, 58)], Some(rules(10, 60, 100, 60, 0)), 7, vec![(7, false), (5, false)]),
        ("two entries, one of them to be replaced", vec![(7, 61), (6, 59)], Some(rules(10, 60, 0, 0, 0)), 6, vec![(5, false), (6, false)]),
        (
            "replace one entry, use policies with different periods",
            vec![(8, 29), (6, 59), (7, 61), (9, 61)],
            Some(rules(10, 60, 100, 30, 0)),
            14,
            vec![(8, false), (6, false), (7, true), (5, false)],
        ),
        ("two entries, both actual", vec![(7, 58), (6, 59)], Some(rules(10, 120, 100, 30, 0)), 13, vec![(7, false), (6, false), (5, false)]),
    ];
    for (name, prev, scaling, want_change, want) in cases {
        let prev: Vec<ScaleEvent> = prev.iter().map(|(c, s)| ScaleEvent::new(*c, ago(*s))).collect();
        for up in [true, false] {
            let behavior = scaling.clone().map(|r| {
                if up {
                    Behavior { scale_up: Some(r), scale_down: None }
                } else {
                    Behavior { scale_up: None, scale_down: Some(r) }
                }
            });
            let mut state = HpaState::new();
            let new = if up {
                state.scale_up_events = prev.clone();
                15
            } else {
                state.scale_down_events = prev.clone();
                5
            };
            assert_eq!(replicas_change_per_period(60, &prev, NOW), want_change, "{name}");
            state.store_scale_event(behavior.as_ref(), 10, new, NOW);
            let events = if up { &state.scale_up_events } else { &state.scale_down_events };
            let got: Vec<(i32, bool)> = events.iter().map(|e| (e.replica_change, e.outdated)).collect();
            assert_eq!(got, want, "{name} (up: {up})");
        }
    }
}

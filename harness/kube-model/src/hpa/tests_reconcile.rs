//! Cases from upstream's own unit tests of the HPA controller's sync, run through
//! [`reconcile`]: pkg/controller/podautoscaler/horizontal_test.go (the custom-metric cases
//! TestScaleUpCM…, TestScaleDownCM…, …FromZero…, …ToZero…; a stored copy of the v1.3x line)
//! and pkg/apis/autoscaling/v2/defaults_test.go @e0a566e71f69. Levels and targets are written
//! in milli-units upstream; the model takes metric units, so 15000m reads as 15.0.

use std::time::Duration;

use super::behavior::{
    ScalingPolicy, ScalingRules, SelectPolicy, generate_scale_down_rules, generate_scale_up_rules,
};
use super::{
    ConditionType, HpaSpec, HpaState, MetricSpec, MetricTarget, Observation, PodMetric, PodPhase,
    reconcile_default,
};

fn pods(levels: &[i64]) -> Vec<PodMetric> {
    levels
        .iter()
        .enumerate()
        .map(|(i, v)| PodMetric::new(format!("test-pod-{i}")).with_value_milli(*v))
        .collect()
}

fn bare_pods(n: i32) -> Vec<PodMetric> {
    (0..n)
        .map(|i| PodMetric::new(format!("test-pod-{i}")))
        .collect()
}

fn sync(spec: &HpaSpec, state: &mut HpaState, obs: &Observation) -> i32 {
    reconcile_default(spec, state, Duration::from_secs(1_000), obs).desired_replicas
}

/// upstream tests pass `recommendations: []timestampedRecommendation{}` for scale-downs: an
/// existing, empty history (so the current count is not seeded into the window).
fn empty_history() -> HpaState {
    HpaState {
        history_started: true,
        ..HpaState::default()
    }
}

fn object(target: MetricTarget) -> MetricSpec {
    MetricSpec::object("qps", "Deployment", target)
}

// TestScaleUpCM, TestScaleUpCMUnreadyAndHotCpuNoLessScale, TestScaleUpCMUnreadyandCpuHot
#[test]
fn controller_scale_up_pods_metric() {
    let spec = HpaSpec::new(2, 6, MetricSpec::pods("qps", 15.0));
    let d = reconcile_default(
        &spec,
        &mut HpaState::new(),
        Duration::ZERO,
        &Observation::pods(3, pods(&[20000, 10000, 30000])),
    );
    assert_eq!((d.desired_replicas, d.rescaled), (4, true));
    assert_eq!(d.reason, "pods metric qps above target");
    let reasons: Vec<(&str, bool)> = d
        .conditions
        .iter()
        .map(|c| (c.reason.as_str(), c.status))
        .collect();
    assert_eq!(
        reasons,
        [
            ("SucceededRescale", true),
            ("ValidMetricFound", true),
            ("DesiredWithinRange", false)
        ]
    );
    assert_eq!(
        d.events[0].message,
        "New size: 4; reason: pods metric qps above target"
    );

    let mut ps = pods(&[50000, 10000, 30000]);
    ps[2].ready = false;
    assert_eq!(
        sync(&spec, &mut HpaState::new(), &Observation::pods(3, ps)),
        6
    );

    let mut ps = pods(&[50000, 15000, 30000]);
    ps[0].ready = false;
    ps[2].ready = false;
    let mut state = HpaState::new();
    let d = reconcile_default(&spec, &mut state, Duration::ZERO, &Observation::pods(3, ps));
    assert_eq!((d.metric_replicas, d.desired_replicas), (Some(7), 6));
    let limited = state.condition(ConditionType::ScalingLimited).unwrap();
    assert_eq!(
        (limited.status, limited.reason.as_str()),
        (true, "TooManyReplicas")
    );
}

// TestScaleUpCMObject, TestScaleUpFromZeroCMObject, TestScaleUpFromZeroIgnoresToleranceCMObject,
// TestScaleUpPerPodCMObject, TestScaleUpCMExternal, TestScaleUpPerPodCMExternal
#[test]
fn controller_scale_up_object_and_external() {
    let cases = [
        (
            "object value",
            2,
            object(MetricTarget::Value(15.0)),
            3,
            20.0,
            4,
        ),
        (
            "object value from zero",
            0,
            object(MetricTarget::Value(15.0)),
            0,
            20.0,
            2,
        ),
        (
            "from zero ignores tolerance",
            0,
            object(MetricTarget::Value(1.0)),
            0,
            1.0,
            1,
        ),
        (
            "object average",
            2,
            object(MetricTarget::AverageValue(10.0)),
            3,
            40.0,
            4,
        ),
        (
            "external value",
            2,
            MetricSpec::external("qps", MetricTarget::Value(6.666)),
            3,
            8.6,
            4,
        ),
        (
            "external average",
            2,
            MetricSpec::external("qps", MetricTarget::AverageValue(2.222)),
            3,
            8.6,
            4,
        ),
    ];
    for (name, min, metric, current, value, want) in cases {
        let spec = HpaSpec::new(min, 6, metric);
        let obs = Observation::total(current, value, bare_pods(current));
        assert_eq!(sync(&spec, &mut HpaState::new(), &obs), want, "{name}");
    }
}

// TestScaleDownCM, TestScaleDownCMObject, TestScaleDownToZeroCMObject, TestScaleDownPerPodCMObject,
// TestScaleDownCMExternal, TestScaleDownToZeroCMExternal, TestScaleDownPerPodCMExternal
#[test]
fn controller_scale_down() {
    let spec = HpaSpec::new(2, 6, MetricSpec::pods("qps", 20.0));
    assert_eq!(
        sync(
            &spec,
            &mut empty_history(),
            &Observation::pods(5, pods(&[12000; 5]))
        ),
        3
    );
    // With a fresh history the current count (5) is in the 5-minute window: no scale-down
    // (TestScaleDownStabilizeInitialSize, there with CPU).
    let d = reconcile_default(
        &spec,
        &mut HpaState::new(),
        Duration::ZERO,
        &Observation::pods(5, pods(&[12000; 5])),
    );
    assert_eq!((d.desired_replicas, d.metric_replicas), (5, Some(3)));

    let cases = [
        (
            "object value",
            2,
            object(MetricTarget::Value(20.0)),
            12.0,
            3,
        ),
        (
            "object value to zero",
            0,
            object(MetricTarget::Value(20.0)),
            0.0,
            0,
        ),
        (
            "object average",
            2,
            object(MetricTarget::AverageValue(20.0)),
            60.0,
            3,
        ),
        (
            "external value",
            2,
            MetricSpec::external("qps", MetricTarget::Value(14.4)),
            8.6,
            3,
        ),
        (
            "external value to zero",
            0,
            MetricSpec::external("qps", MetricTarget::Value(14.4)),
            0.0,
            0,
        ),
        (
            "external average",
            2,
            MetricSpec::external("qps", MetricTarget::AverageValue(3.0)),
            8.6,
            3,
        ),
    ];
    for (name, min, metric, value, want) in cases {
        let spec = HpaSpec::new(min, 6, metric);
        let obs = Observation::total(5, value, bare_pods(5));
        assert_eq!(sync(&spec, &mut empty_history(), &obs), want, "{name}");
    }
}

// reconcileAutoscaler's guards: a target at 0 disables scaling; counts outside [min, max] are
// corrected without metrics; a metrics failure leaves the count and reports the error.
#[test]
fn controller_guards_and_errors() {
    let spec = HpaSpec::new(2, 6, MetricSpec::pods("qps", 15.0));
    let d = reconcile_default(
        &spec,
        &mut HpaState::new(),
        Duration::ZERO,
        &Observation::pods(0, vec![]),
    );
    assert_eq!((d.desired_replicas, d.rescaled), (0, false));
    assert!(
        d.conditions
            .iter()
            .any(|c| c.reason == "ScalingDisabled" && !c.status)
    );
    let d = reconcile_default(
        &spec,
        &mut HpaState::new(),
        Duration::ZERO,
        &Observation::pods(9, vec![]),
    );
    assert_eq!(
        (d.desired_replicas, d.reason.as_str()),
        (6, "Current number of replicas above Spec.MaxReplicas")
    );
    let d = reconcile_default(
        &spec,
        &mut HpaState::new(),
        Duration::ZERO,
        &Observation::pods(1, vec![]),
    );
    assert_eq!(
        (d.desired_replicas, d.reason.as_str()),
        (2, "Current number of replicas below Spec.MinReplicas")
    );

    let no_samples = vec![
        PodMetric::new("a"),
        PodMetric::new("b"),
        PodMetric::new("c"),
    ];
    let d = reconcile_default(
        &spec,
        &mut HpaState::new(),
        Duration::ZERO,
        &Observation::pods(3, no_samples),
    );
    assert_eq!((d.desired_replicas, d.rescaled), (3, false));
    let active = d
        .conditions
        .iter()
        .find(|c| c.condition_type == ConditionType::ScalingActive)
        .unwrap();
    assert_eq!(
        (active.status, active.reason.as_str()),
        (false, "FailedGetPodsMetric")
    );
    assert_eq!(
        d.events[1].message,
        "invalid metrics (1 invalid out of 1), first error is: failed to get pods metric value: \
         unable to get metric qps: no metrics returned from custom metrics API"
    );
    // Only pending pods have samples: nothing is left to average.
    let pending = vec![PodMetric::ready("a", 5.0).with_phase(PodPhase::Pending)];
    let d = reconcile_default(
        &spec,
        &mut HpaState::new(),
        Duration::ZERO,
        &Observation::pods(2, pending),
    );
    assert!(
        d.error
            .unwrap()
            .ends_with("did not receive metrics for targeted pods (pods might be unready)")
    );
}

// defaults_test.go TestGenerateScaleUpRules / TestGenerateScaleDownRules ("Default values"
// and "Pod policy is specified" / "Percent policy is specified").
#[test]
fn generate_scaling_rules_defaults() {
    let up = generate_scale_up_rules(None);
    assert_eq!(
        up.policies,
        Some(vec![
            ScalingPolicy::pods(4, 15),
            ScalingPolicy::percent(100, 15)
        ])
    );
    assert_eq!(up.stabilization_window_seconds, Some(0));
    assert_eq!(up.select_policy, Some(SelectPolicy::Max));
    let down = generate_scale_down_rules(None);
    assert_eq!(down.policies, Some(vec![ScalingPolicy::percent(100, 15)]));
    assert_eq!(down.stabilization_window_seconds, None);
    assert_eq!(down.select_policy, Some(SelectPolicy::Max));

    let given = ScalingRules {
        select_policy: Some(SelectPolicy::Min),
        policies: Some(vec![ScalingPolicy::pods(1, 2)]),
        ..ScalingRules::default()
    };
    let up = generate_scale_up_rules(Some(&given));
    assert_eq!(up.policies, Some(vec![ScalingPolicy::pods(1, 2)]));
    assert_eq!(
        (up.stabilization_window_seconds, up.select_policy),
        (Some(0), Some(SelectPolicy::Min))
    );
    let given = ScalingRules {
        policies: Some(vec![ScalingPolicy::percent(1, 2)]),
        select_policy: Some(SelectPolicy::Min),
        ..ScalingRules::default()
    };
    let down = generate_scale_down_rules(Some(&given));
    assert_eq!(down.policies, Some(vec![ScalingPolicy::percent(1, 2)]));
    assert_eq!(
        (down.stabilization_window_seconds, down.select_policy),
        (None, Some(SelectPolicy::Min))
    );
}

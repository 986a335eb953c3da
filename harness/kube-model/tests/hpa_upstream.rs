//! Cases from upstream's own HPA unit tests, translated to the model, plus incident 3
//! ("autoscaler watching the wrong side").
//!
//! Sources (kubernetes/kubernetes, release-1.34 line; the stored copies read are of the v1.3x
//! line and carry the same case data as v1.34 unless noted):
//! - pkg/controller/podautoscaler/replica_calculator_test.go: the custom-metric cases
//!   (Pods, Object, External; `Value` and `AverageValue`; tolerance, configurable tolerance,
//!   missing metrics, rolling update with surge, overflow) and the non-CPU TestGroupPods cases;
//! - pkg/controller/podautoscaler/horizontal_test.go: the custom-metric controller cases
//!   (TestScaleUpCM…, TestScaleDownCM…, …FromZero…, …ToZero…), run through `reconcile`.
//!
//! Upstream writes metric levels and targets in milli-units; so do these tests.

use std::time::Duration;

use kube_model::hpa::calculator::{
    external_metric_replicas, external_per_pod_metric_replicas, object_metric_replicas,
    object_per_pod_metric_replicas, pod_metric_replicas,
};
use kube_model::hpa::pods::group_pods;
use kube_model::hpa::{
    Behavior, ConditionType, ControllerOptions, HpaSpec, HpaState, MetricSpec, MetricTarget,
    Observation, PodMetric, PodPhase, Tolerances, reconcile, reconcile_default,
};

const T: Tolerances = Tolerances::uniform(0.1);
/// The configurable-tolerance cases: default down, 1% up.
const T_UP_1: Tolerances = Tolerances {
    scale_down: 0.1,
    scale_up: 0.01,
};

/// `test-pod-<i>`, running and ready, reporting `levels[i]` milli-units.
fn pods(levels: &[i64]) -> Vec<PodMetric> {
    levels
        .iter()
        .enumerate()
        .map(|(i, v)| PodMetric::new(format!("test-pod-{i}")).with_value_milli(*v))
        .collect()
}

/// `n` running pods with the given readiness and no samples (Object/External cases).
fn bare_pods(ready: &[bool]) -> Vec<PodMetric> {
    ready
        .iter()
        .enumerate()
        .map(|(i, r)| PodMetric::new(format!("test-pod-{i}")).with_ready(*r))
        .collect()
}

// --- replica_calculator_test.go: Pods metrics ------------------------------------------------

// TestReplicaCalcScaleUpCM
#[test]
fn pods_scale_up() {
    let p = pod_metric_replicas("qps", 3, 15000, &pods(&[20000, 10000, 30000]), T).unwrap();
    assert_eq!((p.replicas, p.usage_milli), (4, 20000));
}

// TestReplicaCalcScaleUpCMUnreadyHotCpuNoLessScale: readiness does not matter for a Pods metric.
#[test]
fn pods_scale_up_unready_pod_still_counts() {
    let mut ps = pods(&[50000, 10000, 30000]);
    ps[2].ready = false;
    let p = pod_metric_replicas("qps", 3, 15000, &ps, T).unwrap();
    assert_eq!((p.replicas, p.usage_milli), (6, 30000));
}

// TestReplicaCalcScaleUpCMUnreadyHotCpuScaleWouldScaleDown
#[test]
fn pods_scale_up_two_unready_pods_still_count() {
    let mut ps = pods(&[50000, 15000, 30000]);
    ps[0].ready = false;
    ps[2].ready = false;
    let p = pod_metric_replicas("qps", 3, 15000, &ps, T).unwrap();
    assert_eq!((p.replicas, p.usage_milli), (7, 31666));
}

// TestReplicaCalcScaleDownCM
#[test]
fn pods_scale_down() {
    let p = pod_metric_replicas("qps", 5, 20000, &pods(&[12000; 5]), T).unwrap();
    assert_eq!((p.replicas, p.usage_milli), (3, 12000));
}

// TestReplicaCalcToleranceCM and TestReplicaCalcConfigurableToleranceCM
#[test]
fn pods_tolerance() {
    let ps = pods(&[20000, 21000, 21000]);
    let p = pod_metric_replicas("qps", 3, 20000, &ps, T).unwrap();
    assert_eq!((p.replicas, p.usage_milli), (3, 20666));
    let p = pod_metric_replicas("qps", 3, 20000, &ps, T_UP_1).unwrap();
    assert_eq!((p.replicas, p.usage_milli), (4, 20666));
}

// TestPlainMetricReplicaCalcMissingMetricsNoChangeEq: 5 pods, 2 without samples, ratio 1.
#[test]
fn pods_missing_metrics_no_change_at_ratio_one() {
    let mut ps = pods(&[20000, 19000, 21000]);
    ps.push(PodMetric::new("test-pod-3"));
    ps.push(PodMetric::new("test-pod-4"));
    let p = pod_metric_replicas("qps", 5, 20000, &ps, T).unwrap();
    assert_eq!((p.replicas, p.usage_milli), (5, 20000));
}

// TestReplicaCalcDuringRollingUpdateWithMaxSurgeCM: a surge pod without samples is filled with
// the target on a scale-down; the result would exceed the current count, so nothing changes.
#[test]
fn pods_rolling_update_with_max_surge() {
    let mut ps = pods(&[10000, 10000]);
    ps.push(PodMetric::new("test-pod-2"));
    let p = pod_metric_replicas("qps", 2, 17000, &ps, T).unwrap();
    assert_eq!((p.replicas, p.usage_milli), (2, 10000));
}

// Missing pods on a scale-up count as 0 (the fill-in rule of calcPlainMetricReplicas), and
// pending pods are dropped then counted as 0.
#[test]
fn pods_missing_and_pending_on_scale_up() {
    let mut ps = pods(&[30000, 30000]);
    ps.push(PodMetric::new("test-pod-2"));
    // ratio 2.0 over the 2 samples; with the missing pod at 0: 20000/10000 = 2 → ceil(2*3) = 6.
    let p = pod_metric_replicas("qps", 3, 10000, &ps, T).unwrap();
    assert_eq!((p.replicas, p.usage_milli), (6, 30000));
    let mut ps = pods(&[30000, 30000]);
    ps.push(PodMetric::new("test-pod-2").with_phase(PodPhase::Pending));
    let p = pod_metric_replicas("qps", 3, 10000, &ps, T).unwrap();
    assert_eq!(p.replicas, 6);
}

// TestGroupPods, the cases that do not depend on CPU readiness rules.
#[test]
fn group_pods_non_cpu() {
    let g = group_pods(&[PodMetric::new("bentham")
        .with_phase(PodPhase::Succeeded)
        .with_value_milli(1)]);
    assert_eq!(g.ready_count, 1, "count in a ready pod - memory");
    let g = group_pods(&[PodMetric::new("epicurus").with_phase(PodPhase::Succeeded)]);
    assert!(
        g.missing.contains("epicurus") && g.ready_count == 0,
        "a missing pod"
    );
    let g = group_pods(&[PodMetric::new("unscheduled").with_phase(PodPhase::Pending)]);
    assert!(
        g.unready.contains("unscheduled"),
        "pending pods are unreadied"
    );
    let g = group_pods(&[PodMetric::new("deleted")
        .with_phase(PodPhase::Pending)
        .with_value_milli(1)
        .deleting()]);
    assert!(
        g.ignored.contains("deleted") && g.unready.is_empty(),
        "deleted pods"
    );
    let g = group_pods(&[PodMetric::new("failed")
        .with_phase(PodPhase::Failed)
        .with_value_milli(1)]);
    assert!(
        g.ignored.contains("failed"),
        "ignore pods in a failed state"
    );
}

// --- replica_calculator_test.go: Object metrics ----------------------------------------------

// TestReplicaCalcScaleUpCMObject, …ObjectIgnoresUnreadyPods, TestReplicaCalcScaleDownCMObject,
// TestReplicaCalcToleranceCMObject, TestReplicaCalcConfigurableToleranceCMObject
#[test]
fn object_value() {
    let cases = [
        ("scale up", 3, 20000, 15000, vec![true; 3], T, 4),
        (
            "ignores unready pods (15 otherwise)",
            3,
            50000,
            10000,
            vec![false, true, false],
            T,
            5,
        ),
        ("scale down", 5, 12000, 20000, vec![true; 5], T, 3),
        ("tolerance", 3, 20666, 20000, vec![true; 3], T, 3),
        (
            "configurable tolerance",
            3,
            20666,
            20000,
            vec![true; 3],
            T_UP_1,
            4,
        ),
    ];
    for (name, current, value, target, ready, tol, want) in cases {
        let p = object_metric_replicas(current, target, value, &bare_pods(&ready), tol).unwrap();
        assert_eq!((p.replicas, p.usage_milli), (want, value), "{name}");
    }
}

// TestReplicaCalcScaleUpCMPerPodObject, TestReplicaCalcScaleDownPerPodCMObject,
// TestReplicaCalcTolerancePerPodCMObject, TestReplicaCalcConfigurableTolerancePerPodCMObject
#[test]
fn object_average_value() {
    let cases = [
        ("scale up", 3, 20000, 5000, T, 4, 6667),
        ("scale down", 5, 6000, 2000, T, 3, 1200),
        ("tolerance", 4, 20166, 5000, T, 4, 5042),
        ("configurable tolerance", 4, 20208, 5000, T_UP_1, 5, 5052),
    ];
    for (name, status, value, target, tol, want, usage) in cases {
        let p = object_per_pod_metric_replicas(status, target, value, tol);
        assert_eq!((p.replicas, p.usage_milli), (want, usage), "{name}");
    }
}

// --- replica_calculator_test.go: External metrics --------------------------------------------

// TestReplicaCalcScaleUpCMExternalIgnoresUnreadyPods, TestReplicaCalcScaleDownCMExternal,
// TestReplicaCalcToleranceCMExternal, TestReplicaCalcConfigurableToleranceCMExternal
#[test]
fn external_value() {
    let cases = [
        (
            "ignores unready pods (6 otherwise)",
            3,
            8600,
            4400,
            vec![false, true, false],
            T,
            2,
        ),
        ("scale down", 5, 8600, 14334, vec![true; 5], T, 3),
        ("tolerance", 3, 8600, 8888, vec![true; 3], T, 3),
        (
            "configurable tolerance",
            3,
            8900,
            8800,
            vec![true; 3],
            T_UP_1,
            4,
        ),
    ];
    for (name, current, value, target, ready, tol, want) in cases {
        let p = external_metric_replicas("qps", current, target, &[value], &bare_pods(&ready), tol)
            .unwrap();
        assert_eq!((p.replicas, p.usage_milli), (want, value), "{name}");
    }
}

// TestReplicaCalcScaleUpPerPodCMExternal, TestReplicaCalcScaleDownPerPodCMExternal,
// TestReplicaCalcTolerancePerPodCMExternal, TestReplicaCalcConfigurableTolerancePerPodCMExternal,
// TestExternalPerPodMetricReplicaOverflow, TestExternalPerPodMetricUsageOverflow (PR #127050,
// in v1.34)
#[test]
fn external_average_value() {
    let cases = [
        ("scale up", 3, 8600, 2150, T, 4, 2867),
        ("scale down", 5, 8600, 2867, T, 3, 1720),
        ("tolerance", 3, 8600, 2900, T, 3, 2867),
        ("configurable tolerance", 3, 8600, 2800, T_UP_1, 4, 2867),
        ("replica overflow", 1, i64::MAX, 1, T, i32::MAX, i64::MAX),
        ("usage overflow", 1, i64::MAX, i64::MAX, T, 1, i64::MAX),
    ];
    for (name, status, value, target, tol, want, usage) in cases {
        let p = external_per_pod_metric_replicas("qps", status, target, &[value], tol).unwrap();
        assert_eq!((p.replicas, p.usage_milli), (want, usage), "{name}");
    }
}

// TestReplicaCalcScaleUpOverflow (added in v1.35 with PR #126979; v1.34 Go converts the
// overflowing float unclamped, the model saturates, which is what v1.35 asserts).
#[test]
fn object_value_overflow_saturates() {
    let p = object_metric_replicas(3, 1, i64::MAX, &bare_pods(&[true; 3]), T).unwrap();
    assert_eq!((p.replicas, p.usage_milli), (i32::MAX, i64::MAX));
}

fn sync(spec: &HpaSpec, state: &mut HpaState, obs: &Observation) -> i32 {
    reconcile_default(spec, state, Duration::from_secs(1_000), obs).desired_replicas
}

// --- incident 3: the autoscaler watching the destination side --------------------------------

/// 8 pods serving one Service, HPA target 10 requests per second per pod, default behavior.
/// Under the surge 6 pods fail readiness: they stay `Running` but leave the endpoints and
/// process nothing; the 2 that remain process 16 rps each (32 rps at the destination) while
/// callers send 612 rps (the write-up's numbers).
fn surge_pods(unready_report: Option<f64>) -> Vec<PodMetric> {
    (0..8)
        .map(|i| {
            let name = format!("flagsvc-{i}");
            if i < 2 {
                PodMetric::ready(name, 16.0)
            } else {
                let pod = PodMetric::new(name).with_ready(false);
                match unready_report {
                    Some(v) => pod.with_value(v),
                    None => pod,
                }
            }
        })
        .collect()
}

#[test]
fn incident_destination_metric_does_not_scale_up_source_metric_does() {
    let behavior = Some(Behavior::default());
    let destination = HpaSpec {
        behavior: behavior.clone(),
        ..HpaSpec::new(8, 100, MetricSpec::pods("istio_requests_destination", 10.0))
    };
    let source = HpaSpec {
        behavior,
        ..HpaSpec::new(
            8,
            100,
            MetricSpec::external("istio_requests_source", MetricTarget::AverageValue(10.0)),
        )
    };
    let period = Duration::from_secs(15);

    // Destination side, unready pods reporting 0 rps: the average is 32/8 = 4 rps, ratio 0.4;
    // the proposal is a scale-down to 4, held at 8 by minReplicas (and the 300 s window).
    // Destination side, unready pods not scraped at all: the 2 samples say 1.6, but the
    // missing pods count as 0 on a scale-up, the ratio flips below 1 and nothing changes.
    for (case, report) in [("reporting 0", Some(0.0)), ("not reporting", None)] {
        let mut state = HpaState::new();
        let mut replicas = 8;
        for step in 0..20u32 {
            let obs = Observation::pods(replicas, surge_pods(report));
            let d = reconcile(
                &ControllerOptions::default(),
                &destination,
                &mut state,
                period * step,
                &obs,
            );
            replicas = d.desired_replicas;
            assert!(!d.rescaled, "{case}: step {step}");
            if step == 0 {
                let want = if report.is_some() {
                    (Some(4), Some(0.4))
                } else {
                    (Some(8), Some(1.6))
                };
                assert_eq!((d.metric_replicas, d.usage_ratio), want, "{case}");
            }
        }
        assert_eq!(replicas, 8, "{case}: the HPA never scales up");
    }

    // Source side: the same demand, 612 rps, as an External AverageValue metric: ceil(612/10)
    // = 62 replicas wanted; the default scale-up policies (max of +4 pods and +100% per 15 s)
    // get there in three syncs: 8 → 16 → 32 → 62.
    let mut state = HpaState::new();
    let mut replicas = 8;
    let mut seen = vec![replicas];
    for step in 0..4u32 {
        let pods = (0..replicas)
            .map(|i| PodMetric::new(format!("flagsvc-{i}")))
            .collect();
        let obs = Observation::total(replicas, 612.0, pods);
        let d = reconcile(
            &ControllerOptions::default(),
            &source,
            &mut state,
            period * step,
            &obs,
        );
        assert_eq!(d.metric_replicas, Some(62), "step {step}");
        replicas = d.desired_replicas;
        seen.push(replicas);
    }
    assert_eq!(seen, [8, 16, 32, 62, 62]);
    assert_eq!(
        state
            .condition(ConditionType::ScalingActive)
            .unwrap()
            .message,
        "the HPA was able to successfully calculate a replica count from external metric istio_requests_source(<nil>)"
    );
}

// Before the surge both sides see the same load and agree: 8 pods at 12 rps each against a
// 10 rps target → ceil(1.2 * 8) = 10 from either metric.
#[test]
fn incident_healthy_both_sides_agree() {
    let destination =
        HpaSpec::new(2, 100, MetricSpec::pods("rps", 10.0)).with_behavior(Behavior::default());
    let source = HpaSpec::new(
        2,
        100,
        MetricSpec::external("rps", MetricTarget::AverageValue(10.0)),
    )
    .with_behavior(Behavior::default());
    let healthy: Vec<PodMetric> = (0..8)
        .map(|i| PodMetric::ready(format!("p{i}"), 12.0))
        .collect();
    let d = sync(
        &destination,
        &mut HpaState::new(),
        &Observation::pods(8, healthy.clone()),
    );
    let s = sync(
        &source,
        &mut HpaState::new(),
        &Observation::total(8, 96.0, healthy),
    );
    assert_eq!((d, s), (10, 10));
}

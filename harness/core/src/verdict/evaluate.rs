//! Checks each expectation against the run's data: picks the measurement, computes it over the
//! expectation's window, compares with the bounds. Nothing measured is a failure, never a pass.
//! The scenario's windows and control-plane durations are Kubernetes time; the data is on the
//! wall clock, so both are brought to it with the run's [`TimeScale`].

use crate::clock::TimeScale;
use crate::measure::{self, Measured, RunData, Window};
use crate::report::{self, ExpectationResult, WindowSummary};
use crate::scenario::model::{Expectation, Metric, Threshold, ZoneSlice};

/// Measures `metric` over `window`.
pub fn measure_metric(metric: Metric, run: &RunData, window: Window) -> Measured {
    match metric {
        Metric::ErrorRate => measure::error_rate(run, window),
        Metric::Http5xxRate => measure::http_5xx_rate(run, window),
        Metric::TransportErrorRate => measure::transport_error_rate(run, window),
        Metric::TimeoutRate => measure::timeout_rate(run, window),
        Metric::SkewMaxMean => measure::skew_max_mean(run, window),
        Metric::SkewCv => measure::skew_cv(run, window),
        Metric::StarvedPods => measure::starved_pods(run, window),
        Metric::LatencyP99 => measure::latency_p99(run, window),
        Metric::HintFlaps => measure::hint_flaps(run, window),
        Metric::MaxSaturation => measure::max_saturation(run, window),
        Metric::RejectedRate => measure::rejected_rate(run, window),
        Metric::TerminationErrorRate => measure::termination_error_rate(run, window),
        Metric::RequestsAfterRemoval => measure::requests_after_removal(run, window),
        Metric::RolloutDuration => measure::rollout_duration(run, window),
        Metric::TimeToScaleUp => measure::time_to_scale_up(run, window),
        Metric::MaxReplicas => measure::max_replicas(run, window),
        Metric::MinReplicas => measure::min_replicas(run, window),
        Metric::PositionRankCorrelation => measure::position_rank_correlation(run, window),
        Metric::FirstPositionsShare => measure::first_positions_share(run, window),
        Metric::ReadinessFlips => measure::readiness_flips(run, window),
        Metric::IngressRestarts => measure::ingress_restarts(run, window),
        Metric::PodLatencyP90 => measure::pod_latency_p90_max(run, window),
        Metric::MinRoutableTargets => measure::min_routable_targets(run, window),
        Metric::CrossZoneShare => measure::cross_zone_share(run, window, &ZoneSlice::default()),
    }
}

/// Measures `metric` over `window`, restricted to the callers in `zones.origin` and the
/// answers of pods in `zones.destination` (the scenario allows a slice only on the metrics
/// that have one: `scenario::decode::expect`).
pub fn measure_sliced(
    metric: Metric,
    run: &RunData,
    window: Window,
    zones: &ZoneSlice,
) -> Measured {
    match (metric, &zones.origin, &zones.destination) {
        (Metric::CrossZoneShare, _, _) => measure::cross_zone_share(run, window, zones),
        (_, None, None) => measure_metric(metric, run, window),
        (Metric::ErrorRate, _, Some(_)) => measure::error_rate_by_destination(run, window, zones),
        (Metric::LatencyP99, _, Some(_)) => measure::latency_p99_by_destination(run, zones),
        (_, Some(origin), None) => {
            let mut m = measure_metric(metric, &measure::with_origin(run, origin), window);
            m.evidence = format!("callers in {origin}: {}", m.evidence);
            m
        }
        (_, _, Some(zone)) => Measured {
            value: None,
            evidence: format!(
                "{} is not measured by destination zone ({zone})",
                metric.as_str()
            ),
        },
    }
}

/// Evaluates one expectation of a run at `scale`. A window that extends past what ran (a
/// partial run) is cut to it for the measurement, and the expectation is incomplete: it
/// neither holds nor fails.
pub fn evaluate(expectation: &Expectation, run: &RunData, scale: TimeScale) -> ExpectationResult {
    let planned_to = scale.wall(expectation.window.to).as_secs_f64();
    let window = Window {
        from_s: scale.wall(expectation.window.from).as_secs_f64(),
        to_s: planned_to.min(run.duration_s),
    };
    let mut measured = measure_sliced(expectation.metric, run, window, &expectation.zones);
    if in_kubernetes_time(expectation.metric) && !scale.is_real() {
        if let Some(wall) = measured.value {
            measured.evidence = format!(
                "{} ({:.3}s on the wall clock at time scale {scale}, reported in Kubernetes time as the scenario states it)",
                measured.evidence, wall
            );
        }
        measured.value = measured.value.map(|wall| scale.kubernetes_secs(wall));
    }
    let bound = |t: Threshold| t.as_f64();
    let min = expectation.min.map(bound);
    let max = expectation.max.map(bound);
    // A millisecond of slack: the measured length of a complete run is its planned length.
    let incomplete = (planned_to > run.duration_s + 1e-3).then(|| {
        format!(
            "the run stopped after {:.1}s, before the end of this window at {:.1}s: not evaluated",
            run.duration_s, planned_to
        )
    });
    let passed = incomplete.is_none()
        && measured
            .value
            .is_some_and(|v| min.is_none_or(|m| v >= m) && max.is_none_or(|m| v <= m));
    let evidence = if measured.value.is_none() {
        format!(
            "nothing could be measured in this window: {}",
            measured.evidence
        )
    } else {
        measured.evidence
    };
    ExpectationResult {
        name: expectation.name.clone(),
        metric: expectation.metric.as_str().to_string(),
        window: WindowSummary {
            text: expectation.window.label.clone(),
            from_s: window.from_s,
            to_s: window.to_s,
        },
        observed: measured.value,
        threshold: report::Threshold { min, max },
        passed,
        evidence,
        incomplete,
        origin_zone: expectation.zones.origin.clone(),
        destination_zone: expectation.zones.destination.clone(),
    }
}

/// The control plane's durations (`rolloutDuration`, `timeToScaleUp`) are the scenario's in
/// Kubernetes time: measured on the wall clock, they are reported (and compared with their
/// bound, the file's own number) in Kubernetes time. A request latency is the data plane's and
/// never scaled.
fn in_kubernetes_time(metric: Metric) -> bool {
    matches!(metric, Metric::RolloutDuration | Metric::TimeToScaleUp)
}

/// One sentence for a failed expectation, its numbers in the metric's unit (or, for one the
/// run stopped before, why it was not evaluated).
pub fn explain_failure(result: &ExpectationResult) -> String {
    if let Some(why) = &result.incomplete {
        return format!(
            "`{}` not evaluated: {why} ({} over {})",
            result.name, result.metric, result.window.text
        );
    }
    let f = |v: f64| report::text::format_value(&result.metric, v);
    let observed = result.observed.map(f).unwrap_or_else(|| "nothing".into());
    let bound = match (result.threshold.min, result.threshold.max) {
        (Some(min), Some(max)) => format!("outside {}..{}", f(min), f(max)),
        (Some(min), None) => format!("below the minimum {}", f(min)),
        (None, Some(max)) => format!("above the maximum {}", f(max)),
        (None, None) => "with no bound".into(),
    };
    format!(
        "`{}` failed: {} = {} is {} over {} ({:.1}s–{:.1}s); {}",
        result.name,
        result.metric,
        observed,
        bound,
        result.window.text,
        result.window.from_s,
        result.window.to_s,
        result.evidence
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{EventKind, RecordedEvent, RolloutStage};
    use crate::testing::one_node_scenario;

    const SERVICE: &[&str] = &["replicas: 2", "serviceTime: { fixed: 20ms }"];
    const REST: &str = r#"load:
  duration: 10m
  requestTimeout: 5s
  generators: [{ name: g, zone: z, rate: 10 }]
timeline:
  - { at: 2m, name: roll, rollout: { restart: true } }
expect:
  - { metric: rolloutDuration, max: 5m, window: { from: roll } }
  - { metric: latencyP99, max: 500ms }
"#;

    /// A run of the scenario at scale 0.1: the rollout (at 2 min of Kubernetes time, so 12 s
    /// of wall time) took 8 s of wall time (80 s of Kubernetes time).
    fn run() -> RunData {
        let event = |t_s, stage| RecordedEvent {
            t_s,
            kind: EventKind::Rollout { revision: 1, stage },
        };
        RunData {
            duration_s: 60.0,
            events: vec![
                event(12.0, RolloutStage::Started),
                event(20.0, RolloutStage::Complete),
            ],
            ..RunData::default()
        }
    }

    /// A user's report at time scale 0.1 said "rolloutDuration 758 ms ≤ 9 s" while the file
    /// said 90 s: the control plane's durations are the scenario's, in Kubernetes time, and are
    /// reported so (the wall clock in the evidence); the windows are mapped to the wall clock.
    #[test]
    fn windows_go_to_the_wall_clock_and_control_plane_durations_stay_in_kubernetes_time() {
        let scenario = one_node_scenario(SERVICE, REST);
        let scale = TimeScale::new(0.1).unwrap();
        let rollout = evaluate(&scenario.expectations[0], &run(), scale);
        assert_eq!((rollout.window.from_s, rollout.window.to_s), (12.0, 60.0));
        assert_eq!(
            rollout.threshold.max,
            Some(300.0),
            "5 min, as the file says"
        );
        assert_eq!(rollout.observed, Some(80.0), "8 s of wall time at 0.1");
        assert!(
            rollout
                .evidence
                .contains("8.000s on the wall clock at time scale 0.1"),
            "{}",
            rollout.evidence
        );
        assert!(rollout.passed);
        let latency = evaluate(&scenario.expectations[1], &run(), scale);
        assert_eq!(
            latency.threshold.max,
            Some(0.5),
            "the data plane is not scaled"
        );
        assert_eq!((latency.window.from_s, latency.window.to_s), (0.0, 60.0));

        // At Kubernetes' own timings the same data misses the action's window.
        let real = evaluate(&scenario.expectations[0], &run(), TimeScale::REAL);
        assert_eq!(real.window.from_s, 120.0);
        assert_eq!(real.observed, None);
        assert!(!real.passed);
    }
}

//! Checks each expectation against the run's data: picks the measurement, computes it over the
//! expectation's window, compares with the bounds. Nothing measured is a failure, never a pass.

use crate::measure::{self, Measured, RunData, Window};
use crate::report::{ExpectationResult, Threshold as ReportThreshold, WindowSummary};
use crate::scenario::model::{Expectation, Metric};

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
    }
}

/// Evaluates one expectation. A window that extends past what ran (a partial run) is cut to it.
pub fn evaluate(expectation: &Expectation, run: &RunData) -> ExpectationResult {
    let window = Window {
        from_s: expectation.window.from.as_secs_f64(),
        to_s: expectation.window.to.as_secs_f64().min(run.duration_s),
    };
    let measured = measure_metric(expectation.metric, run, window);
    let min = expectation.min.map(|t| t.as_f64());
    let max = expectation.max.map(|t| t.as_f64());
    let passed = measured
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
        threshold: ReportThreshold { min, max },
        passed,
        evidence,
    }
}

/// One sentence for a failed expectation.
pub fn explain_failure(result: &ExpectationResult) -> String {
    let observed = result
        .observed
        .map(|v| format!("{v:.4}"))
        .unwrap_or_else(|| "nothing".into());
    let bound = match (result.threshold.min, result.threshold.max) {
        (Some(min), Some(max)) => format!("outside {min}..{max}"),
        (Some(min), None) => format!("below the minimum {min}"),
        (None, Some(max)) => format!("above the maximum {max}"),
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

//! Wording both reports share: numbers in their metric's unit, thresholds, the verdict, the
//! story lines of the explanation, and the sentences that spell out a pod's two sides when
//! they disagree.

use super::reconcile::{PodRow, SWALLOW_MIN, rejected_text, totals};
use super::{ExpectationResult, Summary, Verdict};
use crate::scenario::model::{Metric, MetricKind};
use crate::text::thousands;

/// The key the load generators use for responses no pod was named for (no `x-pod`): a load
/// balancer's own 502/503/504, a proxy's error page.
pub const NO_POD: &str = "unknown";

/// How a pod key reads in a report: the responses without a pod get words.
pub fn pod_label(name: &str) -> &str {
    if name == NO_POD {
        "no pod named (e.g. a load balancer's own 502)"
    } else {
        name
    }
}

/// A value of `metric` (its name as in the scenario) in the metric's unit: rates as
/// percentages (`2.78%`), latencies and other spans of time in ms or s (`27.8 ms`, `4.25 s`),
/// counts as whole numbers, ratios with two decimals. A metric this build does not know is
/// shown as a plain number.
pub fn format_value(metric: &str, v: f64) -> String {
    let kind = serde_json::from_value::<Metric>(serde_json::Value::String(metric.to_owned()))
        .ok()
        .map(Metric::kind);
    match kind {
        Some(MetricKind::Fraction) => format!("{}%", trim(v * 100.0, 2)),
        Some(MetricKind::Ratio | MetricKind::Correlation) => trim(v, 2),
        Some(MetricKind::Count) => format!("{v:.0}"),
        Some(MetricKind::Latency) => format_seconds(v),
        None => format_number(v),
    }
}

/// Seconds in the unit a reader expects: `27.8 ms`, `200 ms`, `4.25 s`, `3 min 5 s`.
pub fn format_seconds(s: f64) -> String {
    if s.abs() < 1.0 {
        format!("{} ms", trim(s * 1000.0, 1))
    } else if s.abs() < 60.0 {
        format!("{} s", trim(s, 2))
    } else {
        let whole = s.round() as u64;
        match whole % 60 {
            0 => format!("{} min", whole / 60),
            rest => format!("{} min {rest} s", whole / 60),
        }
    }
}

/// `v` with at most `decimals` decimals, trailing zeros dropped (`1.50` → `1.5`, `2.00` → `2`).
fn trim(v: f64, decimals: usize) -> String {
    let text = format!("{v:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    }
}

/// Whole numbers without decimals, others with four.
pub fn format_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e12 {
        format!("{v:.0}")
    } else {
        format!("{v:.4}")
    }
}

/// `≤ 1%`, `≥ 4`, `2 ≤ x ≤ 8`, `≤ 200 ms`, or `—`, in the metric's unit.
pub fn threshold_text(e: &ExpectationResult) -> String {
    let f = |v: f64| format_value(&e.metric, v);
    match (e.threshold.min, e.threshold.max) {
        (Some(min), Some(max)) => format!("{} ≤ x ≤ {}", f(min), f(max)),
        (Some(min), None) => format!("≥ {}", f(min)),
        (None, Some(max)) => format!("≤ {}", f(max)),
        (None, None) => "—".into(),
    }
}

/// The observed value in the metric's unit, or `—` when nothing was measured.
pub fn observed_text(e: &ExpectationResult) -> String {
    e.observed
        .map(|v| format_value(&e.metric, v))
        .unwrap_or_else(|| "—".into())
}

/// `PASS`, `FAIL`, with `(partial run)` when cut short.
pub fn verdict_text(summary: &Summary) -> &'static str {
    if summary.audit.as_ref().is_some_and(|a| !a.held) {
        return "UNTRUSTED (self-audit violated)";
    }
    match (summary.verdict, summary.partial) {
        (Verdict::Pass, false) => "PASS",
        (Verdict::Fail, false) => "FAIL",
        (Verdict::Pass, true) => "PASS (partial run)",
        (Verdict::Fail, true) => "FAIL (partial run)",
    }
}

/// The explanation lines that are not about a failed expectation (those are shown with their
/// expectation): what the control plane did, rollouts, autoscaling, starvation.
pub fn story(summary: &Summary) -> Vec<&str> {
    let failed: Vec<String> = summary
        .expectations
        .iter()
        .filter(|e| !e.passed)
        .map(|e| format!("`{}` failed:", e.name))
        .collect();
    summary
        .explanation
        .iter()
        .map(String::as_str)
        .filter(|line| !failed.iter().any(|f| line.starts_with(f.as_str())))
        .filter(|line| !line.starts_with("the run was cut short"))
        .collect()
}

/// `: 200 waited in its queue until their callers gave up, 55 timed out …` — where a pod's
/// unanswered requests went.
fn unanswered_text(row: &PodRow<'_>) -> String {
    let parts: Vec<String> = row
        .unanswered_parts()
        .into_iter()
        .map(|(n, what)| format!("{} {what}", thousands(n)))
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" — {}", parts.join("; "))
    }
}

/// Sentences setting the sides against each other where they disagree: one per pod whose
/// requests arrived but were not answered, one for the sidecars' rejections, one for what the
/// load balancer failed.
pub fn disagreements(rows: &[PodRow<'_>]) -> Vec<String> {
    let mut out = Vec::new();
    for row in rows.iter().filter(|r| r.swallows) {
        let (Some(d), Some(s)) = (row.destination, row.source) else {
            continue;
        };
        let mut sentence = format!(
            "{}: {} requests reached its sidecar and {} got a concurrency slot",
            row.pod.name,
            thousands(d.arrived),
            thousands(d.admitted)
        );
        if s.streams_opened > 0 {
            sentence.push_str(&format!(
                " ({} of them SSE streams, which hold their slot for as long as they stay open)",
                thousands(s.streams_opened)
            ));
        }
        let rejected: u64 = d.rejected.values().sum();
        if rejected > 0 {
            sentence.push_str(&format!("; rejected: {}", rejected_text(&d.rejected)));
        }
        sentence.push_str(&format!(
            ". Callers got {} responses from it",
            thousands(s.answered())
        ));
        if let (Some(u), Some(f)) = (row.unanswered, row.unanswered_fraction()) {
            sentence.push_str(&format!(
                ": {} requests ({:.0}% of those that reached it) were never answered{}",
                thousands(u),
                f * 100.0,
                unanswered_text(row)
            ));
        }
        sentence.push('.');
        out.push(sentence);
    }
    for row in rows.iter().filter(|r| !r.swallows) {
        let Some(u) = row.unanswered.filter(|u| *u >= SWALLOW_MIN) else {
            continue;
        };
        out.push(format!(
            "{}: {} requests that reached it were never answered{}.",
            row.pod.name,
            thousands(u),
            unanswered_text(row)
        ));
    }
    let t = totals(rows);
    let rejected: u64 = t.destination.rejected.values().sum();
    if rejected > 0 {
        out.push(format!(
            "The sidecars rejected {} requests ({}), answered at once with 503: {}.",
            thousands(rejected),
            rejected_text(&t.destination.rejected),
            most(rows, |r| r
                .destination
                .map_or(0, |d| d.rejected.values().sum()))
        ));
    }
    if t.load_balancer.failed > 0 {
        out.push(format!(
            "The load balancer failed {} of the {} requests it sent to pods: {}.",
            thousands(t.load_balancer.failed),
            thousands(t.load_balancer.sent),
            most(rows, |r| r.load_balancer.map_or(0, |l| l.failed))
        ));
    }
    out
}

/// `"pod-4 295, pod-2 97, …"`: the pods with the largest non-zero `count`, at most five.
fn most(rows: &[PodRow<'_>], count: impl Fn(&PodRow<'_>) -> u64) -> String {
    let mut counted: Vec<(&str, u64)> = rows
        .iter()
        .map(|r| (r.pod.name.as_str(), count(r)))
        .filter(|(_, n)| *n > 0)
        .collect();
    counted.sort_by_key(|c| std::cmp::Reverse(c.1));
    let more = counted.len().saturating_sub(5);
    let mut parts: Vec<String> = counted
        .iter()
        .take(5)
        .map(|(pod, n)| format!("{pod} {}", thousands(*n)))
        .collect();
    if more > 0 {
        parts.push(format!("{more} more"));
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::failing_summary;
    use crate::report::reconcile::pod_rows;

    #[test]
    fn a_swallowing_pod_gets_a_sentence_with_both_sides() {
        let summary = failing_summary();
        let rows = pod_rows(&summary);
        let lines = disagreements(&rows);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert_eq!(
            lines[0],
            "pod-2: 120 requests reached its sidecar and 2 got a concurrency slot. Callers got 1 \
             responses from it: 119 requests (99% of those that reached it) were never answered \
             — 118 waited in its queue until their callers gave up; 1 got a slot but no answer \
             reached a caller: still in service when the load stopped, or answered after the \
             caller had given up."
        );
    }

    #[test]
    fn rejections_and_load_balancer_failures_are_summed_with_the_worst_pods() {
        let mut summary = failing_summary();
        for (i, pod) in summary.pods.iter_mut().enumerate() {
            pod.destination
                .as_mut()
                .unwrap()
                .rejected
                .insert("queue_timeout".into(), 10 * (i as u64 + 1));
            pod.load_balancer = Some(crate::report::PodLoadBalancer {
                sent: 50,
                failed: i as u64,
            });
        }
        let lines = disagreements(&pod_rows(&summary));
        assert!(lines.contains(&"The sidecars rejected 30 requests (30 timeout), answered at once with 503: pod-2 20, pod-1 10.".to_string()), "{lines:?}");
        assert!(
            lines.contains(
                &"The load balancer failed 1 of the 100 requests it sent to pods: pod-2 1."
                    .to_string()
            ),
            "{lines:?}"
        );
    }

    #[test]
    fn values_read_in_their_metric_unit() {
        assert_eq!(format_value("latencyP99", 0.0278), "27.8 ms");
        assert_eq!(format_value("latencyP99", 0.2), "200 ms");
        assert_eq!(format_value("rolloutDuration", 4.2507), "4.25 s");
        assert_eq!(format_value("timeToScaleUp", 185.0), "3 min 5 s");
        assert_eq!(format_value("starvedPods", 2.0), "2");
        assert_eq!(format_value("errorRate", 0.0123), "1.23%");
        assert_eq!(format_value("errorRate", 0.0), "0%");
        assert_eq!(format_value("skewMaxMean", 1.5), "1.5");
        assert_eq!(format_value("ingressFutureMetric", 0.25), "0.2500");
        let mut e = failing_summary().expectations[0].clone();
        e.metric = "latencyP99".into();
        e.threshold.max = Some(0.2);
        e.observed = Some(0.0278);
        assert_eq!(
            (observed_text(&e), threshold_text(&e)),
            ("27.8 ms".into(), "≤ 200 ms".into())
        );
    }

    #[test]
    fn story_leaves_out_the_failed_expectations() {
        let mut summary = failing_summary();
        summary.explanation = vec![
            "`no starved pods` failed: starvedPods = 1".into(),
            "12.0s: hints off".into(),
        ];
        assert_eq!(story(&summary), vec!["12.0s: hints off"]);
    }
}

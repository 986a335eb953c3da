//! Wording both reports share: numbers, thresholds, the verdict, the story lines of the
//! explanation, and the sentences that spell out a pod's two sides when they disagree.

use super::reconcile::{PodRow, rejected_text, thousands};
use super::{ExpectationResult, Summary, Verdict};

/// Whole numbers without decimals, others with four.
pub fn format_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e12 {
        format!("{v:.0}")
    } else {
        format!("{v:.4}")
    }
}

/// `≤ 0.01`, `≥ 4`, `2 ≤ x ≤ 8`, or `—`.
pub fn threshold_text(e: &ExpectationResult) -> String {
    match (e.threshold.min, e.threshold.max) {
        (Some(min), Some(max)) => {
            format!("{} ≤ x ≤ {}", format_number(min), format_number(max))
        }
        (Some(min), None) => format!("≥ {}", format_number(min)),
        (None, Some(max)) => format!("≤ {}", format_number(max)),
        (None, None) => "—".into(),
    }
}

/// `PASS`, `FAIL`, with `(partial run)` when cut short.
pub fn verdict_text(summary: &Summary) -> &'static str {
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

/// For each pod whose requests arrived but were not answered, or that rejected requests, a
/// sentence setting its sidecar's counts against what its callers got back.
pub fn disagreements(rows: &[PodRow<'_>]) -> Vec<String> {
    let mut out = Vec::new();
    for row in rows {
        let (Some(d), Some(s)) = (row.destination, row.source) else {
            continue;
        };
        let rejected: u64 = d.rejected.values().sum();
        if !row.swallows && rejected == 0 {
            continue;
        }
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
        if rejected > 0 {
            sentence.push_str(&format!("; rejected: {}", rejected_text(&d.rejected)));
        }
        if d.abandoned > 0 {
            sentence.push_str(&format!(
                "; {} waited in its queue until their callers gave up",
                thousands(d.abandoned)
            ));
        }
        sentence.push_str(&format!(
            ". Callers got {} responses from it",
            thousands(s.answered())
        ));
        if let (Some(u), Some(f)) = (row.unanswered, row.unanswered_fraction())
            && row.swallows
        {
            sentence.push_str(&format!(
                ": {} requests ({:.0}% of those that reached it) were never answered",
                thousands(u),
                f * 100.0
            ));
        }
        sentence.push('.');
        out.push(sentence);
    }
    out
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
            "pod-2: 120 requests reached its sidecar and 2 got a concurrency slot; 118 waited in \
             its queue until their callers gave up. Callers got 1 responses from it: 119 \
             requests (99% of those that reached it) were never answered."
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

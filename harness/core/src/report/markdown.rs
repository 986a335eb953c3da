//! `report.md`: a short report for a CI step summary — verdict, explanation, the expectations
//! table, per-pod distribution and hint events.

use std::fmt::Write;

use super::{Summary, Verdict};

/// Renders the Markdown report for `summary`.
pub fn render_markdown(summary: &Summary) -> String {
    let mut md = String::new();
    let verdict = match (summary.verdict, summary.partial) {
        (Verdict::Pass, false) => "PASS",
        (Verdict::Fail, false) => "FAIL",
        (Verdict::Pass, true) => "PASS (partial run)",
        (Verdict::Fail, true) => "FAIL (partial run)",
    };
    let variant = summary
        .variant
        .as_deref()
        .map(|v| format!(" — variant `{v}`"))
        .unwrap_or_default();
    let _ = writeln!(md, "# {} {}{}\n", verdict, summary.scenario, variant);
    let _ = writeln!(
        md,
        "Target `{}`, run `{}`, seed {}, {:.1}s of load, time scale {:?}.\n",
        summary.target, summary.run_id, summary.seed, summary.duration_s, summary.time_scale
    );
    if let Some(reason) = &summary.partial_reason {
        let _ = writeln!(md, "> Partial run: {reason}\n");
    }
    for line in &summary.explanation {
        let _ = writeln!(md, "- {line}");
    }
    md.push_str("\n| | expectation | window | observed | threshold |\n|---|---|---|---|---|\n");
    for e in &summary.expectations {
        let mark = if e.passed { "✅" } else { "❌" };
        let observed = e.observed.map(format_number).unwrap_or_else(|| "—".into());
        let threshold = match (e.threshold.min, e.threshold.max) {
            (Some(min), Some(max)) => {
                format!("{} ≤ x ≤ {}", format_number(min), format_number(max))
            }
            (Some(min), None) => format!("≥ {}", format_number(min)),
            (None, Some(max)) => format!("≤ {}", format_number(max)),
            (None, None) => "—".into(),
        };
        let _ = writeln!(
            md,
            "| {mark} | {} (`{}`) | {} | {observed} | {threshold} |",
            e.name, e.metric, e.window.text
        );
    }
    if !summary.pods.is_empty() {
        md.push_str("\n| pod | zone | requests | share | max in flight / limit | rejected |\n|---|---|---|---|---|---|\n");
        for p in &summary.pods {
            let rejected: u64 = p.rejected.values().sum();
            let starved = if p.starved { " (starved)" } else { "" };
            let _ = writeln!(
                md,
                "| {}{starved} | {} | {} | {:.1}% | {} / {} | {} |",
                p.name,
                p.zone,
                p.requests,
                p.share * 100.0,
                p.max_in_flight,
                p.max_concurrency,
                rejected
            );
        }
    }
    if !summary.hints.events.is_empty() {
        let _ = writeln!(md, "\nHint events ({} flaps):\n", summary.hints.flaps);
        let before = summary.hints.events.iter().filter(|e| e.t_s < 0.0).count();
        if before > 0 {
            let _ = writeln!(
                md,
                "- {before} events while the pods were deployed (see summary.json)"
            );
        }
        for ev in summary.hints.events.iter().filter(|e| e.t_s >= 0.0) {
            let _ = writeln!(md, "- {:.1}s {}: {}", ev.t_s, ev.reason, ev.message);
        }
    }
    md
}

fn format_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e12 {
        format!("{v:.0}")
    } else {
        format!("{v:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::failing_summary;

    #[test]
    fn shows_verdict_explanation_and_expectation_rows() {
        let md = render_markdown(&failing_summary());
        assert!(md.starts_with("# FAIL topology-skew — variant `incident`"));
        assert!(md.contains("- starvedPods = 1 > 0"));
        assert!(md.contains("| ❌ | no starved pods (`starvedPods`) | whole run | 1 | ≤ 0 |"));
        assert!(md.contains("- 1.5s TopologyAwareHintsEnabled"));
        assert!(md.contains("- 1 events while the pods were deployed"));
        assert!(
            !md.contains("Insufficient number"),
            "deploy-time events are only counted"
        );
    }
}

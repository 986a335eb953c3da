//! `junit.xml`: one testsuite per run, one testcase per expectation; a failed expectation is a
//! `<failure>` carrying the evidence. A partial run never passes: an expectation whose window
//! the run did not complete is an `<error>` (not evaluated), the suite gets one more testcase,
//! `the run completed`, that is an error, and a `<system-err>` note says why it stopped. A run
//! with a self-audit gets the testcase `the run's numbers reconcile (self-audit)`: an error
//! naming the violated invariants when one was violated (the measurement is broken, so the
//! verdict cannot be trusted either way).
//!
//! Written by hand rather than with `quick-junit` (0.8): that crate always writes `skipped`
//! between `tests` and `failures` and indents by four spaces, so it cannot write this
//! document (`tests="2" failures="1"`, two-space indentation), which the tests read.

use super::{Summary, escape};

/// Renders the JUnit XML document for `summary`.
pub fn render_junit(summary: &Summary) -> String {
    let suite = match &summary.variant {
        Some(v) => format!("{}[{}]", summary.scenario, v),
        None => summary.scenario.clone(),
    };
    let failures = summary
        .expectations
        .iter()
        .filter(|e| !e.passed && e.incomplete.is_none())
        .count();
    let incomplete = summary
        .expectations
        .iter()
        .filter(|e| e.incomplete.is_some())
        .count();
    let audit_violated = summary.audit.as_ref().is_some_and(|a| !a.held);
    let tests = summary.expectations.len()
        + usize::from(summary.partial)
        + usize::from(summary.audit.is_some());
    let errors = incomplete + usize::from(summary.partial) + usize::from(audit_violated);
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    xml.push_str(&format!(
        "<testsuites name=\"harness\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\">\n"
    ));
    xml.push_str(&format!(
        "  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{:.3}\">\n",
        escape(&suite),
        summary.duration_s
    ));
    xml.push_str(&format!(
        "    <properties><property name=\"target\" value=\"{}\"/><property name=\"runId\" value=\"{}\"/><property name=\"partial\" value=\"{}\"/></properties>\n",
        escape(&summary.target),
        escape(&summary.run_id),
        summary.partial
    ));
    for e in &summary.expectations {
        let observed = e
            .observed
            .map(|v| super::text::format_value(&e.metric, v))
            .unwrap_or_else(|| "none".into());
        xml.push_str(&format!(
            "    <testcase classname=\"{}\" name=\"{}\">\n",
            escape(&suite),
            escape(&e.name)
        ));
        if let Some(why) = &e.incomplete {
            xml.push_str(&format!(
                "      <error type=\"incomplete\" message=\"{} not evaluated ({})\">{}</error>\n",
                escape(&e.metric),
                escape(&e.window.text),
                escape(why)
            ));
        } else if !e.passed {
            xml.push_str(&format!(
                "      <failure message=\"{} observed {} ({})\">{}</failure>\n",
                escape(&e.metric),
                escape(&observed),
                escape(&e.window.text),
                escape(&e.evidence)
            ));
        }
        xml.push_str("    </testcase>\n");
    }
    if let Some(audit) = &summary.audit {
        audit_testcase(&mut xml, &suite, audit);
    }
    if summary.partial {
        let reason = summary.partial_reason.as_deref().unwrap_or("cut short");
        xml.push_str(&format!(
            "    <testcase classname=\"{}\" name=\"the run completed\">\n      <error type=\"partial\" message=\"the run did not complete: {}\">the numbers cover {:.1}s of load; expectations whose windows it did not reach were not evaluated</error>\n    </testcase>\n",
            escape(&suite),
            escape(reason),
            summary.duration_s
        ));
        xml.push_str(&format!(
            "    <system-err>partial run: {}</system-err>\n",
            escape(reason)
        ));
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

/// The self-audit as one testcase: an error listing every violated invariant with its numbers.
fn audit_testcase(xml: &mut String, suite: &str, audit: &crate::audit::Audit) {
    xml.push_str(&format!(
        "    <testcase classname=\"{}\" name=\"the run's numbers reconcile (self-audit)\">\n",
        escape(suite)
    ));
    if !audit.held {
        let details: Vec<String> = audit
            .violations()
            .map(|c| format!("{} {}: {}", c.subject, c.invariant, c.statement))
            .collect();
        xml.push_str(&format!(
            "      <error type=\"audit\" message=\"{} of {} accounting checks violated: the measurement is broken, not the system under test\">{}</error>\n",
            audit.violated,
            audit.checked,
            escape(&details.join("\n"))
        ));
    }
    xml.push_str("    </testcase>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::{audit, failing_summary};

    #[test]
    fn one_testcase_per_expectation_with_failures_counted() {
        let mut summary = failing_summary();
        let mut passing = summary.expectations[0].clone();
        passing.name = "error rate".into();
        passing.passed = true;
        summary.expectations.push(passing);
        let xml = render_junit(&summary);
        assert_eq!(xml.matches("<testcase ").count(), 2);
        assert_eq!(xml.matches("<failure ").count(), 1);
        assert!(xml.contains("tests=\"2\" failures=\"1\""));
        assert!(xml.contains("name=\"topology-skew[incident]\""));
        assert!(xml.contains("starvedPods observed 1 "), "{xml}");
    }

    /// A user's run interrupted 10 s in: every testcase passed and `failures="0"`, so CI was
    /// green.
    #[test]
    fn an_interrupted_run_never_passes_in_junit() {
        let mut summary = failing_summary();
        let mut reached = summary.expectations[0].clone();
        reached.name = "early window".into();
        reached.passed = true;
        let mut cut = summary.expectations[0].clone();
        cut.name = "late window".into();
        cut.passed = false;
        cut.incomplete = Some("the run stopped after 10.0s".into());
        summary.expectations = vec![reached, cut];
        summary.partial = true;
        summary.partial_reason = Some("interrupted by the user".into());
        let xml = render_junit(&summary);
        assert!(
            xml.contains("tests=\"3\" failures=\"0\" errors=\"2\""),
            "{xml}"
        );
        assert_eq!(xml.matches("<error ").count(), 2, "{xml}");
        assert!(xml.contains("name=\"the run completed\""));
        assert!(xml.contains("the run did not complete: interrupted by the user"));
        assert!(xml.contains("<error type=\"incomplete\""));
        assert_eq!(xml.matches("<failure ").count(), 0);
    }

    #[test]
    fn partial_runs_are_marked_and_text_is_escaped() {
        let mut summary = failing_summary();
        summary.partial = true;
        summary.partial_reason = Some("interrupted <Ctrl-C>".into());
        let xml = render_junit(&summary);
        assert!(xml.contains("<system-err>partial run: interrupted &lt;Ctrl-C&gt;</system-err>"));
        assert!(xml.contains("name=\"partial\" value=\"true\""));
    }

    /// A violated self-audit is an error in JUnit (the numbers cannot be trusted), whatever the
    /// expectations say; a held one is one more passing testcase.
    #[test]
    fn the_self_audit_is_a_testcase_and_a_violation_an_error() {
        use crate::audit::AuditStatus;
        let mut summary = failing_summary();
        summary.expectations[0].passed = true;
        summary.audit = Some(audit(AuditStatus::Held));
        let xml = render_junit(&summary);
        assert!(
            xml.contains("tests=\"2\" failures=\"0\" errors=\"0\""),
            "{xml}"
        );
        assert!(xml.contains("name=\"the run's numbers reconcile (self-audit)\""));

        summary.audit = Some(audit(AuditStatus::Violated));
        let xml = render_junit(&summary);
        assert!(
            xml.contains("tests=\"2\" failures=\"0\" errors=\"1\""),
            "{xml}"
        );
        assert!(xml.contains("1 of 2 accounting checks violated"), "{xml}");
        assert!(
            xml.contains("pod-3 answersWithinArrivals: answered 488 + streams 0 ≤ arrived 475"),
            "{xml}"
        );
        assert!(!xml.contains("pod-1 answersWithinArrivals"), "{xml}");
    }
}

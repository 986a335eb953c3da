//! `junit.xml`: one testsuite per run, one testcase per expectation; a failed expectation is a
//! `<failure>` carrying the evidence, a partial run adds a `<system-err>` note.
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
    let failures = summary.expectations.iter().filter(|e| !e.passed).count();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    xml.push_str(&format!(
        "<testsuites name=\"harness\" tests=\"{}\" failures=\"{}\">\n",
        summary.expectations.len(),
        failures
    ));
    xml.push_str(&format!(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" time=\"{:.3}\">\n",
        escape(&suite),
        summary.expectations.len(),
        failures,
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
        if !e.passed {
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
    if summary.partial {
        let reason = summary.partial_reason.as_deref().unwrap_or("cut short");
        xml.push_str(&format!(
            "    <system-err>partial run: {}</system-err>\n",
            escape(reason)
        ));
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::failing_summary;

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

    #[test]
    fn partial_runs_are_marked_and_text_is_escaped() {
        let mut summary = failing_summary();
        summary.partial = true;
        summary.partial_reason = Some("interrupted <Ctrl-C>".into());
        let xml = render_junit(&summary);
        assert!(xml.contains("<system-err>partial run: interrupted &lt;Ctrl-C&gt;</system-err>"));
        assert!(xml.contains("name=\"partial\" value=\"true\""));
    }
}

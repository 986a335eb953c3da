//! `report.html`: one self-contained page (inline CSS and SVG; no scripts, fonts or anything
//! fetched) built from the summary: a verdict banner, the explanation as prose with its
//! evidence, the expectations table, the reconciled per-pod table, the traffic matrix as a heat
//! map, the charts (values on hover), the self-audit of the numbers and the run's facts.

mod audit;
mod charts;
mod pods;
mod sections;

use std::fmt::Write;

use super::{Summary, escape};

const STYLE: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#1f2328;background:#fff}\
main{max-width:1180px;margin:0 auto;padding:0 24px 48px}\
h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #d0d7de;padding-bottom:4px}\
p,li{font-size:14px;line-height:1.5}\
.banner{padding:18px 24px;color:#fff}.banner h1{margin:0;font-size:26px}\
.banner p{margin:4px 0 0;font-size:14px;opacity:.95}\
.banner.pass{background:#1a7f37}.banner.fail{background:#cf222e}\
table{border-collapse:collapse;margin:8px 0;font-size:13px}\
th,td{border:1px solid #d0d7de;padding:4px 8px;vertical-align:top}\
th{background:#f6f8fa;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}\
tr.pass td.result{color:#1a7f37;font-weight:600}tr.fail td.result{color:#cf222e;font-weight:600}\
tr.fail{background:#fff5f5}tr.incomplete td.result{color:#9a6700;font-weight:600}tr.swallows{background:#fff8c5}\
th.dest{background:#ddf4ff}th.src{background:#fbefff}th.lb{background:#fff1e5}\
tr.total td{font-weight:600;background:#f6f8fa}tr.unattributed td{color:#57606a;font-style:italic}\
.mark{font-weight:700}.warn{color:#9a6700;font-weight:600}\
.evidence{color:#57606a;font-size:13px}\
figure{margin:20px 0}figure h3{font-size:15px;margin:0 0 4px}\
table.pods td,table.heat td{white-space:nowrap}figcaption{font-size:13px;color:#57606a;max-width:1100px}\
svg.chart{max-width:100%;height:auto;font-family:inherit}\
svg .hover rect:hover{fill:rgba(31,35,40,.07)}\
.heat td.cell{text-align:right;min-width:56px}\
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px;font-size:14px}\
dl.facts dt{font-weight:600}dl.facts dd{margin:0}\
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12.5px;background:#f6f8fa;padding:1px 4px;border-radius:4px}";

/// Renders the HTML report for `summary`.
pub fn render_html(summary: &Summary) -> String {
    let mut page = String::from("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">");
    let _ = write!(
        page,
        "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>{}</title><style>{STYLE}</style></head><body>",
        escape(&sections::title(summary))
    );
    sections::banner(&mut page, summary);
    page.push_str("<main>");
    sections::explanation(&mut page, summary);
    sections::expectations(&mut page, summary);
    pods::pod_table(&mut page, summary);
    pods::heat_map(&mut page, summary);
    charts::charts(&mut page, summary);
    sections::ingress(&mut page, summary);
    sections::hint_events(&mut page, summary);
    audit::audit(&mut page, summary);
    sections::facts(&mut page, summary);
    page.push_str("</main></body></html>\n");
    page
}

/// `<section id=..><h2>..</h2>`.
fn open_section(page: &mut String, id: &str, heading: &str) {
    let _ = write!(page, "<section id=\"{id}\"><h2>{}</h2>", escape(heading));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::failing_summary;

    #[test]
    fn page_is_self_contained() {
        let html = render_html(&failing_summary());
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(!html.contains("<script"), "no scripts");
        assert!(!html.contains("src="), "nothing loaded");
        assert!(!html.contains("href=\"http"), "no external links needed");
        assert!(
            !html.contains("@import") && !html.contains("url("),
            "no fetched CSS"
        );
        assert!(
            html.contains("&lt;starved&gt; &amp; idle"),
            "text is escaped"
        );
    }

    #[test]
    fn has_every_section() {
        let html = render_html(&failing_summary());
        for id in [
            "explanation",
            "expectations",
            "pods",
            "traffic-matrix",
            "charts",
            "hint-events",
            "facts",
        ] {
            assert!(html.contains(&format!("<section id=\"{id}\">")), "{id}");
        }
        assert!(html.contains("class=\"banner fail\""));
    }

    /// The self-audit has its section; a violation turns the banner red and lists the
    /// violated invariant with its numbers, even when every expectation held.
    #[test]
    fn the_self_audit_is_shown_and_a_violation_turns_the_page_red() {
        use crate::audit::AuditStatus;
        use crate::report::fixture::audit;
        let mut summary = failing_summary();
        summary.verdict = crate::report::Verdict::Pass;
        for e in &mut summary.expectations {
            e.passed = true;
        }
        summary.audit = Some(audit(AuditStatus::Held));
        let html = render_html(&summary);
        assert!(html.contains("<section id=\"audit\">"));
        assert!(html.contains("audit: all 2 checks held"), "{html}");
        assert!(html.contains("class=\"banner pass\""));

        summary.audit = Some(audit(AuditStatus::Violated));
        let html = render_html(&summary);
        assert!(html.contains("class=\"banner fail\""));
        assert!(html.contains("UNTRUSTED (self-audit violated)"));
        assert!(html.contains("1 of 2 checks VIOLATED"), "{html}");
        assert!(html.contains("<td>pod-3</td><td><code>answersWithinArrivals</code></td><td>answered 488 + streams 0 ≤ arrived 475</td><td class=\"result\">VIOLATED</td>"));
        let md = crate::report::render_markdown(&summary);
        assert!(
            md.contains("# UNTRUSTED (self-audit violated) topology-skew"),
            "{md}"
        );
        assert!(
            md.contains(
                "| pod-3 | `answersWithinArrivals` | answered 488 + streams 0 ≤ arrived 475 |"
            ),
            "{md}"
        );
    }

    /// The same hint event recorded three times at one instant is one row marked ×3 in
    /// report.html and one line in report.md; summary.json keeps all three.
    #[test]
    fn identical_events_at_one_instant_are_listed_once_with_a_count() {
        let mut summary = failing_summary();
        let disabled = crate::report::HintEventSummary {
            t_s: 12.0,
            kind: "Warning".into(),
            reason: "TopologyAwareHintsDisabled".into(),
            message: "Unable to allocate minimum required endpoints".into(),
        };
        summary
            .hints
            .events
            .extend([disabled.clone(), disabled.clone(), disabled]);
        let html = render_html(&summary);
        assert_eq!(html.matches("<tr class=\"event\">").count(), 3, "{html}");
        assert!(html.contains("<td class=\"n\">12.0s</td><td>Warning</td><td>TopologyAwareHintsDisabled<span class=\"repeat\" data-times=\"3\" title=\"recorded 3 times in a row at this instant\"> ×3</span></td><td>Unable to allocate minimum required endpoints</td>"), "{html}");
        let md = crate::report::render_markdown(&summary);
        assert_eq!(
            md.matches("- 12.0s TopologyAwareHintsDisabled ×3: Unable to allocate minimum required endpoints\n").count(),
            1,
            "{md}"
        );
        assert_eq!(md.matches("TopologyAwareHintsDisabled").count(), 1, "{md}");
        let json = serde_json::to_string(&summary).unwrap();
        assert_eq!(json.matches("Unable to allocate minimum").count(), 3);
    }

    /// Every character of the page is one text fonts carry (no ✔/✘/⚠, no emoji): the marks
    /// are inline SVG, so a server without symbol or emoji fonts shows them.
    #[test]
    fn the_page_needs_no_emoji_or_symbol_font() {
        use crate::audit::AuditStatus;
        use crate::report::fixture::audit;
        let mut summary = failing_summary();
        summary.partial = true;
        summary.partial_reason = Some("interrupted".into());
        summary.audit = Some(audit(AuditStatus::Violated));
        let html = render_html(&summary);
        assert_eq!(crate::report::icons::font_safe(&html), Ok(()));
        summary.audit = Some(audit(AuditStatus::Held));
        summary.partial = false;
        assert_eq!(
            crate::report::icons::font_safe(&render_html(&summary)),
            Ok(())
        );
    }
}

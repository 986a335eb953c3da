//! `report.html`: one self-contained page (inline CSS and SVG, no scripts or external assets)
//! with the verdict, the expectations, per-pod numbers and three charts: requests per pod over
//! time, error rate over time with action markers, and the hints timeline.

use std::fmt::Write;

use super::svg::{Line, line_chart, on_off_band};
use super::{Summary, Verdict, escape, render_markdown};

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:820px;margin:2em auto;color:#222}\
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px}\
.pass{color:#1a7f37}.fail{color:#cf222e}figure{margin:1em 0}figcaption{font-size:13px;color:#555}";

/// Renders the HTML report for `summary`.
pub fn render_html(summary: &Summary) -> String {
    let mut page = String::from("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">");
    let title = format!(
        "{} {}",
        summary.scenario,
        summary.variant.as_deref().unwrap_or("")
    );
    let _ = write!(
        page,
        "<title>{}</title><style>{STYLE}</style></head><body>",
        escape(title.trim())
    );
    let (class, word) = match summary.verdict {
        Verdict::Pass => ("pass", "PASS"),
        Verdict::Fail => ("fail", "FAIL"),
    };
    let _ = write!(
        page,
        "<h1><span class=\"{class}\">{word}</span> {}</h1>",
        escape(title.trim())
    );
    // The Markdown body carries the tables; show it preformatted rather than re-rendering.
    let _ = write!(
        page,
        "<pre style=\"white-space:pre-wrap;font-size:13px\">{}</pre>",
        escape(&render_markdown(summary))
    );

    let pods: Vec<Line<'_>> = summary
        .series
        .requests_per_pod
        .iter()
        .map(|(pod, counts)| Line {
            label: pod,
            values: counts.iter().map(|c| *c as f64).collect(),
        })
        .collect();
    figure(
        &mut page,
        &line_chart("Requests per pod", "req/s", &pods, &summary.series.markers),
        "Responses per second attributed to each pod (x-pod), with timeline actions.",
    );
    let errors = [Line {
        label: "error rate",
        values: summary.series.error_rate.clone(),
    }];
    figure(
        &mut page,
        &line_chart(
            "Error rate",
            "errors/attempts",
            &errors,
            &summary.series.markers,
        ),
        "Non-2xx responses plus transport errors over attempts, per second.",
    );
    let scaled = summary.series.replicas.windows(2).any(|w| w[0] != w[1]);
    if scaled {
        let demand = [
            Line {
                label: "attempted (source)",
                values: summary.series.attempted.iter().map(|v| *v as f64).collect(),
            },
            Line {
                label: "admitted (destination)",
                values: summary.series.destination_rps.clone(),
            },
        ];
        figure(
            &mut page,
            &line_chart(
                "Demand and processed rate",
                "req/s",
                &demand,
                &summary.series.markers,
            ),
            "Requests the load generators attempted (what a source-side metric sees) and requests the sidecars admitted (what a destination-side metric sees), per second.",
        );
        let replicas = [Line {
            label: "replicas",
            values: summary
                .series
                .replicas
                .iter()
                .map(|v| f64::from(*v))
                .collect(),
        }];
        figure(
            &mut page,
            &line_chart("Replicas", "pods", &replicas, &summary.series.markers),
            "Pods not terminating, at the end of each second.",
        );
    }
    if summary.series.hints_enabled.iter().any(|on| *on) || !summary.hints.events.is_empty() {
        figure(
            &mut page,
            &on_off_band(
                "Topology hints",
                "hints on",
                &summary.series.hints_enabled,
                &summary.series.markers,
            ),
            "Seconds during which the EndpointSlice carried topology hints.",
        );
    }
    page.push_str("</body></html>\n");
    page
}

fn figure(page: &mut String, svg: &str, caption: &str) {
    let _ = write!(
        page,
        "<figure>{svg}<figcaption>{}</figcaption></figure>",
        escape(caption)
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::failing_summary;

    #[test]
    fn scaling_runs_get_demand_and_replica_charts() {
        let mut summary = failing_summary();
        summary.series.replicas = vec![2, 4, 4];
        let html = render_html(&summary);
        assert_eq!(html.matches("<svg").count(), 5);
        assert!(html.contains("admitted (destination)"));
    }

    #[test]
    fn page_is_self_contained_with_three_charts() {
        let html = render_html(&failing_summary());
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert_eq!(html.matches("<svg").count(), 3);
        assert!(!html.contains("<script"), "no scripts");
        assert!(!html.contains("src=\"http"), "no external assets");
        assert!(html.contains("class=\"fail\">FAIL"));
        assert!(
            html.contains("&lt;starved&gt; &amp; idle"),
            "text is escaped"
        );
    }
}

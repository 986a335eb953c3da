//! The page's text sections: the verdict banner, the explanation in prose with its evidence,
//! the expectations table, the ingress replicas, the hint events and the run's facts.

use std::fmt::Write;

use super::open_section;
use crate::report::reconcile::pod_rows;
use crate::report::text::{
    disagreements, format_value, observed_text, story, threshold_text, verdict_text,
};
use crate::report::{Summary, Verdict, escape};

/// `topology-skew — incident`.
pub fn title(summary: &Summary) -> String {
    match &summary.variant {
        Some(v) => format!("{} — {v}", summary.scenario),
        None => summary.scenario.clone(),
    }
}

pub fn banner(page: &mut String, s: &Summary) {
    let audit_violated = s.audit.as_ref().is_some_and(|a| !a.held);
    let (class, mark) = match s.verdict {
        Verdict::Pass if !audit_violated => ("pass", crate::report::icons::check(22, "pass")),
        _ => ("fail", crate::report::icons::cross(22, "fail")),
    };
    let held = s.expectations.iter().filter(|e| e.passed).count();
    let _ = write!(
        page,
        "<header class=\"banner {class}\" data-verdict=\"{class}\"><h1><span class=\"mark\">{mark}</span> {} · {}</h1><p>{held} of {} expectations held · target {} · {:.1}s of load · seed {} · time scale {}</p></header>",
        escape(verdict_text(s)),
        escape(&title(s)),
        s.expectations.len(),
        escape(&s.target),
        s.duration_s,
        s.seed,
        s.time_scale
    );
}

pub fn explanation(page: &mut String, s: &Summary) {
    open_section(page, "explanation", "What happened");
    if let Some(reason) = &s.partial_reason {
        let _ = write!(
            page,
            "<p class=\"warn\">{} Partial run: {}. The numbers cover what ran.</p>",
            crate::report::icons::warning(14, "warning"),
            escape(reason)
        );
    }
    let failed: Vec<_> = s
        .expectations
        .iter()
        .filter(|e| !e.passed && e.incomplete.is_none())
        .collect();
    let not_evaluated: Vec<_> = s
        .expectations
        .iter()
        .filter_map(|e| e.incomplete.as_ref().map(|why| (e, why)))
        .collect();
    for (e, why) in &not_evaluated {
        let _ = write!(
            page,
            "<p class=\"warn\">Not evaluated: <strong>{}</strong> — {}.</p>",
            escape(&e.name),
            escape(why)
        );
    }
    if failed.is_empty() && not_evaluated.is_empty() {
        let _ = write!(
            page,
            "<p>Every expectation held ({} of {}).</p>",
            s.expectations.len(),
            s.expectations.len()
        );
    }
    for e in failed {
        let observed = e
            .observed
            .map(|v| format_value(&e.metric, v))
            .unwrap_or_else(|| "nothing measurable".into());
        let _ = write!(
            page,
            "<p><strong>{}</strong> did not hold: <code>{}</code> was {} over {} ({:.1}s–{:.1}s), against {}. <span class=\"evidence\">Evidence: {}.</span></p>",
            escape(&e.name),
            escape(&e.metric),
            escape(&observed),
            escape(&e.window.text),
            e.window.from_s,
            e.window.to_s,
            escape(&threshold_text(e)),
            escape(e.evidence.trim_end_matches('.'))
        );
    }
    let rows = pod_rows(s);
    let both_sides = disagreements(&rows);
    if !both_sides.is_empty() {
        page.push_str("<p>Where the sides disagree:</p><ul>");
        for line in both_sides {
            let _ = write!(page, "<li>{}</li>", escape(&line));
        }
        page.push_str("</ul>");
    }
    let story = story(s);
    if !story.is_empty() {
        page.push_str("<p>What the control plane did:</p><ul>");
        for line in story {
            let _ = write!(page, "<li>{}</li>", escape(line));
        }
        page.push_str("</ul>");
    }
    page.push_str("</section>");
}

pub fn expectations(page: &mut String, s: &Summary) {
    open_section(page, "expectations", "Expectations");
    page.push_str(
        "<table class=\"expectations\"><thead><tr><th>expectation</th><th>metric</th><th>window</th><th>observed</th><th>threshold</th><th>result</th></tr></thead><tbody>",
    );
    for e in &s.expectations {
        let (class, mark) = match e.outcome() {
            "held" => (
                "pass",
                format!("{} pass", crate::report::icons::check(14, "pass")),
            ),
            "not completed" => ("incomplete", "– not evaluated".to_owned()),
            _ => (
                "fail",
                format!("{} FAIL", crate::report::icons::cross(14, "fail")),
            ),
        };
        let observed = observed_text(e);
        let _ = write!(
            page,
            "<tr class=\"{class}\" title=\"{}\"><td>{}</td><td><code>{}</code></td><td>{} <span class=\"evidence\">({:.1}s–{:.1}s)</span></td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"result\">{mark}</td></tr>",
            escape(&e.evidence),
            escape(&e.name),
            escape(&e.metric),
            escape(&e.window.text),
            e.window.from_s,
            e.window.to_s,
            escape(&observed),
            escape(&threshold_text(e))
        );
    }
    page.push_str("</tbody></table></section>");
}

pub fn hint_events(page: &mut String, s: &Summary) {
    open_section(page, "hint-events", "Topology hint events");
    if s.hints.events.is_empty() {
        page.push_str(
            "<p>The EndpointSlice controller recorded no topology hint events.</p></section>",
        );
        return;
    }
    let before = s.hints.events.iter().filter(|e| e.t_s < 0.0).count();
    let _ = write!(
        page,
        "<p>{} flaps (hints switching on or off) during the load; {before} events while the pods were deployed.</p><table><thead><tr><th>time</th><th>type</th><th>reason</th><th>message</th></tr></thead><tbody>",
        s.hints.flaps
    );
    // Identical events recorded in a row at one instant: one row, `×3` (summary.json keeps
    // them all).
    for row in crate::report::events::event_rows(&s.hints.events) {
        let repeat = if row.times > 1 {
            format!(
                "<span class=\"repeat\" data-times=\"{}\" title=\"recorded {} times in a row at this instant\">{}</span>",
                row.times,
                row.times,
                row.repeat()
            )
        } else {
            String::new()
        };
        let _ = write!(
            page,
            "<tr class=\"event\"><td class=\"n\">{}</td><td>{}</td><td>{}{repeat}</td><td>{}</td></tr>",
            row.time,
            escape(row.kind),
            escape(row.reason),
            escape(row.message)
        );
    }
    page.push_str("</tbody></table></section>");
}

pub fn facts(page: &mut String, s: &Summary) {
    open_section(page, "facts", "Run facts");
    let mut rows: Vec<(&str, String)> = vec![
        ("scenario", s.scenario.clone()),
        (
            "variant",
            s.variant.clone().unwrap_or_else(|| "base".into()),
        ),
        ("target", s.target.clone()),
    ];
    if let Some(k) = &s.kubernetes {
        rows.push(("kubernetes", k.label()));
        if let Some(image) = &k.node_image {
            rows.push(("node image", image.clone()));
        }
    }
    rows.extend([
        ("seed", s.seed.to_string()),
        (
            "time scale",
            format!(
                "{} (control-plane periods and delays × {}; charts, windows and events are on that clock; rolloutDuration, timeToScaleUp and the control plane's instants in the explanation are in Kubernetes time, as the scenario states them, with the wall clock alongside)",
                s.time_scale, s.time_scale
            ),
        ),
        ("load started", s.started_at.clone()),
        ("load duration", format!("{:.1}s", s.duration_s)),
        ("run id", s.run_id.clone()),
        ("summary schema", s.schema.clone()),
    ]);
    if let Some(inv) = &s.invocation {
        rows.push(("harness", inv.harness_version.clone()));
        for (bin, version) in &inv.workloads {
            rows.push(("workload", format!("{bin}: {version}")));
        }
        rows.push(("scenario file", inv.scenario_file.clone()));
    }
    page.push_str("<dl class=\"facts\">");
    for (k, v) in rows {
        let _ = write!(page, "<dt>{}</dt><dd>{}</dd>", escape(k), escape(&v));
    }
    if let Some(inv) = &s.invocation {
        let _ = write!(
            page,
            "<dt>to reproduce</dt><dd><code>{}</code></dd>",
            escape(&inv.command)
        );
    }
    page.push_str("</dl></section>");
}

/// The ingress replicas: how requests split by list position, reloads and restarts per
/// replica, and per pod its position, readiness failures and latency.
pub fn ingress(page: &mut String, s: &Summary) {
    use crate::report::ingress_tables;
    let Some(ingress) = &s.ingress else { return };
    open_section(page, "ingress", "Ingress replicas");
    let _ = write!(
        page,
        "<p>{}</p>",
        escape(&ingress_tables::headline(ingress))
    );
    for table in [
        ingress_tables::positions(ingress),
        ingress_tables::replicas(ingress),
        ingress_tables::pods(ingress),
    ] {
        page.push_str("<table><thead><tr>");
        for h in &table.header {
            let _ = write!(page, "<th>{}</th>", escape(h));
        }
        page.push_str("</tr></thead><tbody>");
        for row in &table.rows {
            page.push_str("<tr>");
            for (i, cell) in row.iter().enumerate() {
                let class = if i == 0 { "" } else { " class=\"n\"" };
                let _ = write!(page, "<td{class}>{}</td>", escape(cell));
            }
            page.push_str("</tr>");
        }
        page.push_str("</tbody></table>");
    }
    page.push_str("</section>");
}

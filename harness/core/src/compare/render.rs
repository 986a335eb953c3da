//! `compare.md` (a CI step summary) and `compare.html` (one self-contained page, no scripts):
//! the verdict with its reason or regressions, each run's target and Kubernetes version and
//! the notes on what else differs, then the metrics, the expectations and the
//! per-pod shares of both runs with their deltas.

use std::fmt::Write;

use super::{Better, CompareVerdict, Comparison, shown, trim};
use crate::report::escape;

fn headline(c: &Comparison) -> String {
    match c.verdict {
        CompareVerdict::Ok => "OK: no bound exceeded".to_owned(),
        CompareVerdict::Regression => {
            format!("REGRESSION: {} bound(s) exceeded", c.regressions.len())
        }
        CompareVerdict::Incomparable => format!(
            "INCOMPARABLE: {}",
            c.reason.as_deref().unwrap_or("the runs differ")
        ),
    }
}

fn who(r: &super::RunRef) -> String {
    let on = match (r.target.as_str(), &r.kubernetes) {
        ("", _) => String::new(),
        (target, Some(k)) => format!(" on {target}, Kubernetes {k}"),
        (target, None) => format!(" on {target}"),
    };
    let variant = r
        .variant
        .as_deref()
        .map_or_else(|| "base document".to_owned(), |v| format!("variant {v}"));
    format!(
        "{} ({variant}){on} ({}, {:?})",
        r.scenario, r.dir, r.verdict
    )
}

fn direction(b: Better) -> &'static str {
    match b {
        Better::Lower => "lower is better",
        Better::Higher => "higher is better",
        Better::Neither => "",
    }
}

fn delta_text(d: Option<f64>) -> String {
    match d {
        Some(d) if d > 0.0 => format!("+{}", trim(d)),
        Some(d) => trim(d),
        None => "–".into(),
    }
}

fn mark(passed: bool) -> &'static str {
    if passed { "✅" } else { "❌" }
}

/// The HTML page's mark: an inline SVG and a word, no font needed.
fn html_mark(passed: bool) -> String {
    use crate::report::icons::{check, cross};
    if passed {
        format!("<span class=\"pass\">{} pass</span>", check(13, "pass"))
    } else {
        format!("<span class=\"fail\">{} FAIL</span>", cross(13, "fail"))
    }
}

/// The Markdown page.
pub fn render_compare_markdown(c: &Comparison) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# Comparison — {}\n", headline(c));
    let _ = writeln!(md, "- base: {}", who(&c.base));
    let _ = writeln!(md, "- candidate: {}", who(&c.candidate));
    for note in &c.notes {
        let _ = writeln!(md, "- {note}");
    }
    if let Some(z) = &c.cross_zone {
        let _ = writeln!(md, "- {}", z.text);
    }
    for r in &c.regressions {
        let _ = writeln!(md, "- ❌ {r}");
    }
    md.push_str("\n| metric | base | candidate | delta | bound | |\n|---|---|---|---|---|---|\n");
    for m in &c.metrics {
        let _ = writeln!(
            md,
            "| `{}` | {} | {} | {} | {} | {}{} |",
            m.name,
            shown(m.base),
            shown(m.candidate),
            delta_text(m.delta),
            m.max_regression
                .map_or_else(String::new, |b| format!("≤ {}", trim(b))),
            if m.regressed { "❌ " } else { "" },
            direction(m.better)
        );
    }
    md.push_str("\n| expectation | metric | base | candidate |\n|---|---|---|---|\n");
    for e in &c.expectations {
        let _ = writeln!(
            md,
            "| {} | `{}` | {} {} | {} {} |",
            e.name.replace('|', "\\|"),
            e.metric,
            mark(e.base_passed),
            shown(e.base_observed),
            mark(e.candidate_passed),
            shown(e.candidate_observed)
        );
    }
    md.push_str("\n| pod | base share | candidate share | delta |\n|---|---|---|---|\n");
    for p in &c.pods {
        let _ = writeln!(
            md,
            "| {} | {:.1}% | {:.1}% | {:+.1} pp |",
            p.pod,
            p.base * 100.0,
            p.candidate * 100.0,
            p.delta * 100.0
        );
    }
    md
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:24px;color:#1f2328}\
header{padding:12px 16px;border-radius:6px;margin-bottom:16px}\
header.ok{background:#dafbe1}header.regression{background:#ffebe9}header.incomparable{background:#fff8c5}\
table{border-collapse:collapse;margin:12px 0}td,th{border:1px solid #d0d7de;padding:4px 8px;text-align:left}\
td.n{text-align:right}tr.regressed{background:#ffebe9}.pass{color:#1a7f37}.fail{color:#cf222e}";

/// The HTML page.
pub fn render_compare_html(c: &Comparison) -> String {
    let class = match c.verdict {
        CompareVerdict::Ok => "ok",
        CompareVerdict::Regression => "regression",
        CompareVerdict::Incomparable => "incomparable",
    };
    let mut page = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>comparison</title><style>{STYLE}</style></head><body><header class=\"{class}\" data-verdict=\"{class}\"><h1>{}</h1><p>base: {}<br>candidate: {}</p>{}</header><main>",
        escape(&headline(c)),
        escape(&who(&c.base)),
        escape(&who(&c.candidate)),
        c.notes
            .iter()
            .map(|n| format!("<p class=\"note\">{}</p>", escape(n)))
            .collect::<String>()
    );
    if let Some(z) = &c.cross_zone {
        let _ = write!(page, "<p class=\"cross-zone\">{}</p>", escape(&z.text));
    }
    if !c.regressions.is_empty() {
        page.push_str("<ul>");
        for r in &c.regressions {
            let _ = write!(page, "<li>{}</li>", escape(r));
        }
        page.push_str("</ul>");
    }
    page.push_str("<table class=\"metrics\"><thead><tr><th>metric</th><th>base</th><th>candidate</th><th>delta</th><th>bound</th><th></th></tr></thead><tbody>");
    for m in &c.metrics {
        let _ = write!(
            page,
            "<tr{} data-metric=\"{}\"><td><code>{}</code></td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            if m.regressed {
                " class=\"regressed\""
            } else {
                ""
            },
            escape(&m.name),
            escape(&m.name),
            shown(m.base),
            shown(m.candidate),
            delta_text(m.delta),
            m.max_regression
                .map_or_else(String::new, |b| format!("≤ {}", trim(b))),
            direction(m.better)
        );
    }
    page.push_str("</tbody></table><table class=\"expectations\"><thead><tr><th>expectation</th><th>metric</th><th>base</th><th>candidate</th></tr></thead><tbody>");
    for e in &c.expectations {
        let _ = write!(
            page,
            "<tr><td>{}</td><td><code>{}</code></td><td>{} {}</td><td>{} {}</td></tr>",
            escape(&e.name),
            escape(&e.metric),
            html_mark(e.base_passed),
            shown(e.base_observed),
            html_mark(e.candidate_passed),
            shown(e.candidate_observed)
        );
    }
    page.push_str("</tbody></table><table class=\"pods\"><thead><tr><th>pod</th><th>base share</th><th>candidate share</th><th>delta</th></tr></thead><tbody>");
    for p in &c.pods {
        let _ = write!(
            page,
            "<tr><td>{}</td><td class=\"n\">{:.1}%</td><td class=\"n\">{:.1}%</td><td class=\"n\">{:+.1} pp</td></tr>",
            escape(&p.pod),
            p.base * 100.0,
            p.candidate * 100.0,
            p.delta * 100.0
        );
    }
    page.push_str("</tbody></table></main></body></html>\n");
    page
}

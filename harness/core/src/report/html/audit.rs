//! The self-audit on the report page: its headline, every violated invariant with its numbers,
//! what could not be checked and why, and every check made, folded away.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::open_section;
use crate::audit::{Audit, AuditCheck, AuditStatus};
use crate::report::{Summary, escape};

/// `<section id="audit">`, when the run was audited (summaries written before the audit
/// existed have none).
pub fn audit(page: &mut String, s: &Summary) {
    let Some(audit) = &s.audit else { return };
    open_section(page, "audit", "Self-audit of the numbers");
    let class = if audit.held { "" } else { " class=\"warn\"" };
    let _ = write!(page, "<p{class}>{}</p>", escape(&audit.headline()));
    page.push_str(
        "<p class=\"evidence\">Every count on this page is checked against the others and against what each pod's sidecar, each load generator and the load balancer counted. A violated invariant means the measurement is broken, not the system under test: the run exits 3 and its verdict cannot be trusted.</p>",
    );
    if !audit.held {
        checks_table(page, audit.violations());
    }
    not_checked(page, audit);
    let _ = write!(
        page,
        "<details><summary>every check ({})</summary>",
        audit.checks.len()
    );
    checks_table(page, audit.checks.iter());
    page.push_str("</details></section>");
}

/// The checks that could not be made, counted by invariant and reason.
fn not_checked(page: &mut String, audit: &Audit) {
    let mut by_reason: BTreeMap<(&str, &str), u32> = BTreeMap::new();
    for c in audit
        .checks
        .iter()
        .filter(|c| c.status == AuditStatus::NotChecked)
    {
        *by_reason
            .entry((c.invariant.as_str(), c.note.as_deref().unwrap_or("")))
            .or_default() += 1;
    }
    if by_reason.is_empty() {
        return;
    }
    page.push_str("<p>Not checked:</p><ul>");
    for ((invariant, reason), n) in by_reason {
        let _ = write!(
            page,
            "<li><code>{}</code> × {n}: {}</li>",
            escape(invariant),
            escape(reason)
        );
    }
    page.push_str("</ul>");
}

fn checks_table<'a>(page: &mut String, checks: impl Iterator<Item = &'a AuditCheck>) {
    page.push_str(
        "<table class=\"audit\"><thead><tr><th>subject</th><th>invariant</th><th>numbers</th><th>result</th></tr></thead><tbody>",
    );
    for c in checks {
        let (class, result) = match c.status {
            AuditStatus::Held => ("pass", "held"),
            AuditStatus::Violated => ("fail", "VIOLATED"),
            AuditStatus::NotChecked => ("incomplete", "not checked"),
        };
        let _ = write!(
            page,
            "<tr class=\"{class}\"><td>{}</td><td><code>{}</code></td><td>{}</td><td class=\"result\">{result}</td></tr>",
            escape(&c.subject),
            escape(&c.invariant),
            escape(&c.statement)
        );
    }
    page.push_str("</tbody></table>");
}

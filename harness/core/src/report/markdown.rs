//! `report.md`: a short report for a CI step summary (GitHub-flavoured Markdown) — verdict,
//! explanation, the expectations table (✅/❌ and words), the reconciled per-pod table (the
//! pod's sidecar beside what its callers got back), the hint events and, on a cluster target,
//! where kube-model disagreed with the real EndpointSlice controller.

use std::fmt::Write;

use super::ingress_tables;
use super::reconcile::{Column, Side, columns, pod_rows, totals};
use super::text::{disagreements, observed_text, threshold_text, verdict_text};
use super::{ModelAgreement, Summary};

/// Renders the Markdown report for `summary`.
pub fn render_markdown(summary: &Summary) -> String {
    let mut md = String::new();
    let variant = summary
        .variant
        .as_deref()
        .map(|v| format!(" — variant `{v}`"))
        .unwrap_or_default();
    let _ = writeln!(
        md,
        "# {} {}{}\n",
        verdict_text(summary),
        summary.scenario,
        variant
    );
    let kubernetes = summary
        .kubernetes
        .as_ref()
        .map(|k| format!(" (Kubernetes {})", k.label()))
        .unwrap_or_default();
    let _ = writeln!(
        md,
        "Target `{}`{kubernetes}, run `{}`, seed {}, {:.1}s of load, time scale {:?}.\n",
        summary.target, summary.run_id, summary.seed, summary.duration_s, summary.time_scale
    );
    if let Some(reason) = &summary.partial_reason {
        let _ = writeln!(md, "> Partial run: {reason}\n");
    }
    for line in &summary.explanation {
        let _ = writeln!(md, "- {line}");
    }
    md.push_str(
        "\n| result | expectation | window | observed | threshold |\n|---|---|---|---|---|\n",
    );
    for e in &summary.expectations {
        let mark = match e.outcome() {
            "held" => "✅ pass",
            "not completed" => "– not evaluated",
            _ => "❌ fail",
        };
        let observed = observed_text(e);
        let _ = writeln!(
            md,
            "| {mark} | {} (`{}`) | {} | {observed} | {} |",
            cell(&e.name),
            e.metric,
            cell(&e.window.text),
            threshold_text(e)
        );
    }
    pods_table(&mut md, summary);
    if let Some(c) = &summary.cross_zone {
        let _ = writeln!(
            md,
            "\n**Traffic between zones.** {} (HTTP bytes of requests, answers and streams; both \
             directions are charged).",
            cell(&c.sentence())
        );
    }
    if let Some(ingress) = &summary.ingress {
        ingress_section(&mut md, ingress);
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
        // Identical events recorded in a row at one instant: one line, `×3`.
        let during = summary.hints.events.iter().filter(|e| e.t_s >= 0.0);
        for row in super::events::event_rows(during) {
            let _ = writeln!(
                md,
                "- {} {}{}: {}",
                row.time,
                row.reason,
                row.repeat(),
                row.message
            );
        }
    }
    if let Some(agreement) = &summary.model_agreement {
        model_agreement(&mut md, agreement);
    }
    if let Some(audit) = &summary.audit {
        audit_section(&mut md, audit);
    }
    if let Some(inv) = &summary.invocation {
        let _ = writeln!(md, "\nReproduce: `{}`", inv.command);
    }
    md
}

/// The self-audit: its headline, and every violated invariant with its numbers.
fn audit_section(md: &mut String, audit: &crate::audit::Audit) {
    let _ = writeln!(md, "\n**Self-audit.** {}", cell(&audit.headline()));
    if !audit.held {
        md.push_str("\n| subject | invariant | numbers |\n|---|---|---|\n");
        for c in audit.violations() {
            let _ = writeln!(
                md,
                "| {} | `{}` | {} |",
                cell(&c.subject),
                c.invariant,
                cell(&c.statement)
            );
        }
    }
}

/// How the real EndpointSlice controller's hints compared with kube-model's (cluster targets).
fn model_agreement(md: &mut String, agreement: &ModelAgreement) {
    let _ = writeln!(
        md,
        "\nModel agreement: kube-model agreed with the cluster's EndpointSlice controller at {} of {} EndpointSlice changes.",
        agreement.agreed, agreement.checks
    );
    let per_zone = |counts: &std::collections::BTreeMap<String, u64>| {
        if counts.is_empty() {
            "no hints".to_owned()
        } else {
            counts
                .iter()
                .map(|(zone, n)| format!("{zone}: {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    for check in agreement.changes.iter().filter(|c| !c.agreed) {
        let _ = writeln!(
            md,
            "- {:.1}s: the controller's slices had {}; the model would have {}",
            check.t_s,
            per_zone(&check.real_per_zone),
            per_zone(&check.model_per_zone)
        );
    }
}

fn pods_table(md: &mut String, summary: &Summary) {
    let rows = pod_rows(summary);
    if rows.is_empty() {
        return;
    }
    let columns = columns(&rows);
    let header: Vec<String> = columns
        .iter()
        .map(|c| match c.side() {
            Side::Destination => format!("{} (sidecar)", c.header()),
            Side::LoadBalancer => format!("LB {}", c.header()),
            Side::Source => format!("{} (callers)", c.header()),
            Side::Pod if *c == Column::Zone => "zone".to_string(),
            Side::Pod | Side::Reconciled => c.header().to_string(),
        })
        .collect();
    md.push('\n');
    table_row(md, &header);
    let _ = writeln!(md, "|{}", "---|".repeat(columns.len()));
    for row in &rows {
        let cells: Vec<String> = columns
            .iter()
            .map(|c| match (c, row.flag()) {
                (Column::Pod, Some(flag)) => format!("{} ⚠️ {flag}", row.pod.name),
                _ => cell(&c.cell(row)),
            })
            .collect();
        table_row(md, &cells);
    }
    let t = totals(&rows);
    let cells: Vec<String> = columns
        .iter()
        .map(|c| match c {
            Column::Pod => "**all pods**".to_string(),
            _ => cell(&c.total(&t)),
        })
        .collect();
    table_row(md, &cells);
    if let Some(u) = &summary.unattributed {
        let cells: Vec<String> = columns
            .iter()
            .map(|c| match c {
                Column::Pod => "*no pod named*".to_string(),
                _ => cell(&c.unattributed(u)),
            })
            .collect();
        table_row(md, &cells);
    }
    md.push_str(
        "\n(sidecar): the pod's sidecar; LB: what the load balancer sent it; (callers): what the \
         callers got back from it (by `x-pod`); no answer = arrived − answered − streams. Every \
         side counts the pod's whole life, warm-up and drain included.\n",
    );
    for line in disagreements(&rows) {
        let _ = writeln!(md, "\n- ⚠️ {line}");
    }
}

/// The ingress replicas: requests by list position, reloads and restarts, pods.
fn ingress_section(md: &mut String, ingress: &super::IngressSummary) {
    let _ = writeln!(
        md,
        "\n## Ingress\n\n{}\n",
        ingress_tables::headline(ingress)
    );
    for table in [
        ingress_tables::positions(ingress),
        ingress_tables::replicas(ingress),
        ingress_tables::pods(ingress),
    ] {
        let header: Vec<String> = table.header.iter().map(|h| (*h).to_owned()).collect();
        table_row(md, &header);
        let rule: Vec<String> = table.header.iter().map(|_| "---".to_owned()).collect();
        table_row(md, &rule);
        for row in &table.rows {
            table_row(md, row);
        }
        md.push('\n');
    }
}

/// `| a | | b |`: one table row, empty cells kept narrow.
fn table_row(md: &mut String, cells: &[String]) {
    md.push('|');
    for c in cells {
        if c.is_empty() {
            md.push_str(" |");
        } else {
            let _ = write!(md, " {c} |");
        }
    }
    md.push('\n');
}

/// Text safe inside a table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::AgreementCheck;
    use crate::report::fixture::failing_summary;

    #[test]
    fn the_cross_zone_traffic_and_its_cost_are_told() {
        let md = render_markdown(&failing_summary());
        assert!(
            md.contains(
                "**Traffic between zones.** cross-zone: 100.0% of requests (161 of 161), 53.1 kB \
                 in 3 s, about $0.46/month at this rate and $0.01/GB each way"
            ),
            "{md}"
        );
        let mut none = failing_summary();
        none.cross_zone = None;
        assert!(!render_markdown(&none).contains("Traffic between zones"));
    }

    #[test]
    fn model_agreement_lists_the_disagreements() {
        let mut summary = failing_summary();
        assert!(!render_markdown(&summary).contains("Model agreement"));
        let check = |t_s: f64, agreed: bool, real: u64| AgreementCheck {
            t_s,
            agreed,
            real_hints: real > 0,
            model_hints: true,
            real_per_zone: if real > 0 {
                [("zone-a".to_owned(), real)].into()
            } else {
                Default::default()
            },
            model_per_zone: [("zone-a".to_owned(), 2)].into(),
            ..AgreementCheck::default()
        };
        summary.model_agreement = Some(ModelAgreement {
            checks: 2,
            agreed: 1,
            changes: vec![check(1.0, true, 2), check(12.5, false, 0)],
        });
        let md = render_markdown(&summary);
        assert!(
            md.contains("agreed with the cluster's EndpointSlice controller at 1 of 2"),
            "{md}"
        );
        assert!(
            md.contains(
                "- 12.5s: the controller's slices had no hints; the model would have zone-a: 2"
            ),
            "{md}"
        );
        assert!(!md.contains("- 1.0s:"), "agreements are only counted");
    }

    #[test]
    fn shows_verdict_explanation_and_expectation_rows() {
        let md = render_markdown(&failing_summary());
        assert!(md.starts_with("# FAIL topology-skew — variant `incident`"));
        assert!(md.contains("- starvedPods = 1 > 0"));
        assert!(md.contains("| ❌ fail | no starved pods (`starvedPods`) | whole run | 1 | ≤ 0 |"));
        assert!(md.contains("- 1.5s TopologyAwareHintsEnabled"));
        assert!(md.contains("- 1 events while the pods were deployed"));
        assert!(
            !md.contains("Insufficient number"),
            "deploy-time events are only counted"
        );
    }

    #[test]
    fn the_pod_table_reconciles_both_sides() {
        let md = render_markdown(&failing_summary());
        assert!(md.contains(
            "| pod-2 ⚠️ swallows requests | zone-b | 42.1% | 120 | 2 | 0 | 118 | 20 / 20 | 118 | 1× 200 | 0 | 0 | 119 (99%) |"
        ), "{md}");
        assert!(
            md.contains("| **all pods** | | | 285 | 167 | 0 | 118 | | | 161× 200 | 0 | 0 | 124 |"),
            "{md}"
        );
        assert!(md.contains("| pod | zone | share | arrived (sidecar) |"));
        assert!(md.contains("- ⚠️ pod-2: 120 requests reached its sidecar"));
        // Every row of the table has the header's 13 cells.
        let table: Vec<&str> = md
            .lines()
            .skip_while(|l| !l.starts_with("| pod |"))
            .take_while(|l| l.starts_with('|'))
            .collect();
        assert_eq!(table.len(), 5, "header, rule, 2 pods, total");
        for line in table {
            assert_eq!(line.matches('|').count(), 14, "{line}");
        }
    }
}

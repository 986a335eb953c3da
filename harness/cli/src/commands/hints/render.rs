//! Text rendering of the `harness hints` report: readable tables for a terminal.

use std::fmt::Write;

use super::report::{EndpointRow, Report};

/// Renders the report as aligned text tables.
pub fn report_text(r: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Service {}  (hints from {})", r.service, r.mode);
    out.push('\n');
    out.push_str("Zone CPU ratios (allocatable CPU of ready, non-control-plane nodes):\n");
    match &r.zone_cpu_ratios {
        None if !r.ratios_missing_because.is_empty() => {
            let _ = writeln!(out, "  unavailable: {}", r.ratios_missing_because.join("; "));
        }
        None => out.push_str("  unavailable (fewer than two zones, or a node without zone label or allocatable CPU)\n"),
        Some(ratios) => {
            for (zone, ratio) in ratios {
                let _ = writeln!(out, "  {zone:<24} {ratio:.4}");
            }
        }
    }
    out.push('\n');
    let _ = writeln!(
        out,
        "Hints: {}",
        if r.hints_enabled {
            "enabled"
        } else {
            "disabled"
        }
    );
    if r.events.is_empty() {
        out.push_str("Events: none\n");
    } else {
        out.push_str("Events:\n");
        for e in &r.events {
            let _ = writeln!(
                out,
                "  {:<8} {:<28} {}",
                e.event_type.to_string(),
                e.reason,
                e.message
            );
        }
    }
    out.push('\n');
    out.push_str("Endpoints after the reconcile:\n");
    if r.endpoints.is_empty() {
        out.push_str("  none\n");
    } else {
        endpoints_table(&mut out, &r.endpoints);
    }
    if let Some(why) = &r.no_endpoints {
        let _ = writeln!(out, "  {why}");
    }
    out.push('\n');
    out.push_str(
        "kube-proxy: addresses a client reaches, per zone (node hosting no endpoint), of the ready endpoints:\n",
    );
    let ready = ready_endpoints(&r.endpoints);
    for (zone, addrs) in &r.reachable_from {
        let _ = writeln!(
            out,
            "  {zone:<24} {} of {ready}: {}",
            addrs.len(),
            join_or_dash(addrs)
        );
    }
    out.push_str("kube-proxy: addresses a client reaches, per node:\n");
    for (node, addrs) in &r.reachable_from_nodes {
        let _ = writeln!(out, "  {node:<24} {}", join_or_dash(addrs));
    }
    out.push('\n');
    out.push_str("Assumptions:\n");
    for a in &r.assumptions {
        let _ = writeln!(out, "  - {a}");
    }
    out
}

/// The endpoints as a table: address, zone, node, ready, hints.
pub fn endpoints_table(out: &mut String, endpoints: &[EndpointRow]) {
    let rows: Vec<[String; 6]> = endpoints
        .iter()
        .map(|e| {
            [
                e.address.clone(),
                e.zone.clone().unwrap_or_else(|| "-".into()),
                e.node.clone().unwrap_or_else(|| "-".into()),
                e.ready.map_or("unset".into(), |b| b.to_string()),
                join_or_dash(&e.for_zones),
                join_or_dash(&e.for_nodes),
            ]
        })
        .collect();
    table(
        out,
        ["ADDRESS", "ZONE", "NODE", "READY", "FOR-ZONES", "FOR-NODES"],
        &rows,
    );
}

/// Endpoints kube-proxy counts as ready: `ready` true or unset (a terminating endpoint has
/// `ready: false`).
pub fn ready_endpoints(endpoints: &[EndpointRow]) -> usize {
    endpoints.iter().filter(|e| e.ready != Some(false)).count()
}

fn join_or_dash(items: &[String]) -> String {
    if items.is_empty() {
        "-".into()
    } else {
        items.join(",")
    }
}

/// Writes a table with columns padded to their widest cell.
pub fn table<const N: usize>(out: &mut String, header: [&str; N], rows: &[[String; N]]) {
    let mut widths = header.map(str::len);
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.len());
        }
    }
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        format!("  {}\n", padded.join("  ").trim_end())
    };
    out.push_str(&line(header.to_vec()));
    for row in rows {
        out.push_str(&line(row.iter().map(String::as_str).collect()));
    }
}

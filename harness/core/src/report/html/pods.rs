//! The per-pod sections: the reconciled table (the pod's sidecar beside what its callers got
//! back, with the requests that were never answered) and the traffic matrix as a heat map.

use std::collections::BTreeSet;
use std::fmt::Write;

use super::open_section;
use crate::report::reconcile::{PodRow, counts_text, pod_rows, rejected_text, thousands, totals};
use crate::report::{PodSource, Summary, escape};

const WINDOW_NOTE: &str = "Both sides count each pod's whole life, warm-up and drain \
included, so they can be set against each other (the expectations use the load window). \
Destination: the pod's sidecar counters. Source: responses the load generators attributed \
to the pod by its x-pod header, errors on connections it had answered on, SSE streams it \
served. No answer = arrived − answered − streams: requests that reached the pod and whose \
caller never got a response from it.";

pub fn pod_table(page: &mut String, s: &Summary) {
    open_section(page, "pods", "Pods: both sides");
    let rows = pod_rows(s);
    if rows.is_empty() {
        page.push_str("<p>No pods ran.</p></section>");
        return;
    }
    page.push_str(
        "<table class=\"pods\"><thead><tr><th rowspan=\"2\">pod</th><th rowspan=\"2\">zone / node</th><th rowspan=\"2\">share</th>\
         <th colspan=\"6\" class=\"dest\">destination: the pod's sidecar</th>\
         <th colspan=\"3\" class=\"src\">source: what callers got back</th><th rowspan=\"2\">no answer</th></tr>\
         <tr><th class=\"dest\">arrived</th><th class=\"dest\">admitted</th><th class=\"dest\">rejected</th><th class=\"dest\">abandoned in queue</th><th class=\"dest\">peak in flight / limit</th><th class=\"dest\">peak queue</th>\
         <th class=\"src\">answered</th><th class=\"src\">SSE streams</th><th class=\"src\">transport errors</th></tr></thead><tbody>",
    );
    for row in &rows {
        pod_row(page, row);
    }
    let (d, src, unanswered) = totals(&rows);
    let _ = write!(
        page,
        "</tbody><tfoot><tr class=\"total\"><td>all pods</td><td></td><td></td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td><td></td><td></td><td>{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td></tr>",
        thousands(d.arrived),
        thousands(d.admitted),
        escape(&rejected_text(&d.rejected)),
        thousands(d.abandoned),
        escape(&counts_text(&src.responses)),
        thousands(src.streams_opened),
        escape(&counts_text(&src.transport_errors)),
        thousands(unanswered)
    );
    if let Some(u) = &s.unattributed {
        unattributed_row(page, u);
    }
    let _ = write!(
        page,
        "</tfoot></table><p class=\"evidence\">{}</p></section>",
        escape(WINDOW_NOTE)
    );
}

fn pod_row(page: &mut String, row: &PodRow<'_>) {
    let p = row.pod;
    let dash = || "—".to_string();
    let mark = if row.swallows {
        "<br><span class=\"warn\">⚠ swallows requests</span>"
    } else if p.starved {
        "<br><span class=\"warn\">⚠ starved</span>"
    } else {
        ""
    };
    let class = if row.swallows {
        " class=\"swallows\""
    } else {
        ""
    };
    let (arrived, admitted, rejected, abandoned) = match row.destination {
        Some(d) => (
            thousands(d.arrived),
            thousands(d.admitted),
            rejected_text(&d.rejected),
            thousands(d.abandoned),
        ),
        None => (dash(), dash(), dash(), dash()),
    };
    let (answered, streams, transport) = match row.source {
        Some(s) => (
            counts_text(&s.responses),
            thousands(s.streams_opened),
            counts_text(&s.transport_errors),
        ),
        None => (dash(), dash(), dash()),
    };
    let no_answer = match (row.unanswered, row.unanswered_fraction()) {
        (Some(u), Some(f)) => format!("{} ({:.0}%)", thousands(u), f * 100.0),
        (Some(u), None) => thousands(u),
        _ => dash(),
    };
    let limit = if p.max_concurrency > 0 {
        format!("{} / {}", p.max_in_flight, p.max_concurrency)
    } else {
        dash()
    };
    let _ = write!(
        page,
        "<tr{class} data-pod=\"{}\"><td>{}{mark}</td><td>{}<br><span class=\"evidence\">{}</span></td><td class=\"n\">{:.1}%</td><td class=\"n\">{arrived}</td><td class=\"n\">{admitted}</td><td>{}</td><td class=\"n\">{abandoned}</td><td class=\"n\">{limit}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{streams}</td><td>{}</td><td class=\"n\">{}</td></tr>",
        escape(&p.name),
        escape(&p.name),
        escape(&p.zone),
        escape(&p.node),
        row.share * 100.0,
        escape(&rejected),
        p.max_queue_depth,
        escape(&answered),
        escape(&transport),
        escape(&no_answer)
    );
}

fn unattributed_row(page: &mut String, u: &PodSource) {
    let _ = write!(
        page,
        "<tr class=\"unattributed\"><td colspan=\"9\">callers' outcomes no pod could be named for (no x-pod: e.g. timeouts on fresh connections)</td><td>{}</td><td class=\"n\">{}</td><td>{}</td><td></td></tr>",
        escape(&counts_text(&u.responses)),
        thousands(u.streams_opened),
        escape(&counts_text(&u.transport_errors))
    );
}

pub fn heat_map(page: &mut String, s: &Summary) {
    open_section(page, "traffic-matrix", "Traffic matrix: origin zone × pod");
    let pods: BTreeSet<&str> = s
        .traffic_matrix
        .values()
        .flat_map(|m| m.keys().map(String::as_str))
        .chain(s.pods.iter().map(|p| p.name.as_str()))
        .collect();
    if s.traffic_matrix.is_empty() {
        page.push_str("<p>No responses were attributed to a pod.</p></section>");
        return;
    }
    let max = s
        .traffic_matrix
        .values()
        .flat_map(|m| m.values().copied())
        .max()
        .unwrap_or(0)
        .max(1);
    page.push_str("<table class=\"heat\"><thead><tr><th>origin zone ↓ / pod →</th>");
    for pod in &pods {
        let zone = s
            .pods
            .iter()
            .find(|p| p.name == *pod)
            .map(|p| format!("<br><span class=\"evidence\">{}</span>", escape(&p.zone)))
            .unwrap_or_default();
        let _ = write!(page, "<th>{}{zone}</th>", escape(pod));
    }
    page.push_str("<th>total</th></tr></thead><tbody>");
    for (zone, row) in &s.traffic_matrix {
        let total: u64 = row.values().sum();
        let _ = write!(page, "<tr><th>{}</th>", escape(zone));
        for pod in &pods {
            let n = row.get(*pod).copied().unwrap_or(0);
            let alpha = n as f64 / max as f64;
            let ink = if alpha > 0.55 { "#fff" } else { "#1f2328" };
            let share = if total > 0 {
                n as f64 * 100.0 / total as f64
            } else {
                0.0
            };
            let _ = write!(
                page,
                "<td class=\"cell n\" data-count=\"{n}\" style=\"background:rgba(9,105,218,{alpha:.3});color:{ink}\" title=\"{} → {}: {} responses ({share:.1}% of the zone's)\">{}</td>",
                escape(zone),
                escape(pod),
                thousands(n),
                thousands(n)
            );
        }
        let _ = write!(page, "<td class=\"n\">{}</td></tr>", thousands(total));
    }
    page.push_str(
        "</tbody></table><p class=\"evidence\">Responses each origin zone's callers got from each pod during the load (source side, by x-pod); the darker the cell, the more.</p></section>",
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::failing_summary;

    #[test]
    fn the_swallowing_pod_stands_out_with_both_sides() {
        let mut page = String::new();
        pod_table(&mut page, &failing_summary());
        assert_eq!(page.matches("<tr data-pod=").count(), 1);
        let row = page
            .split("<tr class=\"swallows\" data-pod=\"pod-2\">")
            .nth(1)
            .expect("pod-2 is flagged");
        let row = &row[..row.find("</tr>").unwrap()];
        assert!(row.contains("⚠ swallows requests"));
        assert!(row.contains(">120<") && row.contains(">118<"), "{row}");
        assert!(row.contains("1× 200") && row.contains("119 (99%)"), "{row}");
    }

    #[test]
    fn heat_map_cells_carry_counts_and_shade_by_the_largest() {
        let mut page = String::new();
        heat_map(&mut page, &failing_summary());
        assert!(page.contains("data-count=\"160\" style=\"background:rgba(9,105,218,1.000)"));
        assert!(page.contains("data-count=\"1\" style=\"background:rgba(9,105,218,0.006)"));
        assert!(page.contains("zone-a → pod-2: 1 responses (0.6% of the zone's)"));
    }
}

//! The per-pod sections: the reconciled table (the pod's sidecar beside what its callers got
//! back, with the requests that were never answered) and the traffic matrix as a heat map.

use std::fmt::Write;

use super::open_section;
use crate::report::reconcile::{Column, Side, columns, pod_rows, totals};
use crate::report::text::pod_label;
use crate::report::{Summary, escape};
use crate::text::{natural_key, thousands};

const WINDOW_NOTE: &str = "Every side counts each pod's whole life, warm-up and drain \
included, so they can be set against each other (the expectations use the load window). \
Destination: the pod's sidecar counters. Load balancer: requests it sent the pod, and the \
failed ones. Source: responses the load generators attributed to the pod by its x-pod \
header, errors on connections it had answered on, SSE streams it served. No answer = \
arrived − answered − streams: requests that reached the pod and whose caller never got a \
response from it. The last row holds the callers' outcomes no pod could be named for.";

pub fn pod_table(page: &mut String, s: &Summary) {
    open_section(page, "pods", "Pods: both sides");
    let rows = pod_rows(s);
    if rows.is_empty() {
        page.push_str("<p>No pods ran.</p></section>");
        return;
    }
    let columns = columns(&rows);
    page.push_str("<table class=\"pods\"><thead><tr>");
    // First header row: one cell per side, spanning its columns; pod columns span both rows.
    let mut i = 0;
    while i < columns.len() {
        let side = columns[i].side();
        let span = columns[i..].iter().take_while(|c| c.side() == side).count();
        if side.heading().is_empty() {
            for c in &columns[i..i + span] {
                let _ = write!(page, "<th rowspan=\"2\">{}</th>", escape(c.header()));
            }
        } else {
            let _ = write!(
                page,
                "<th colspan=\"{span}\" class=\"{}\">{}</th>",
                side_class(side),
                escape(side.heading())
            );
        }
        i += span;
    }
    page.push_str("</tr><tr>");
    for c in columns.iter().filter(|c| !c.side().heading().is_empty()) {
        let _ = write!(
            page,
            "<th class=\"{}\">{}</th>",
            side_class(c.side()),
            escape(c.header())
        );
    }
    page.push_str("</tr></thead><tbody>");
    for row in &rows {
        let class = if row.swallows {
            " class=\"swallows\""
        } else {
            ""
        };
        let _ = write!(page, "<tr{class} data-pod=\"{}\">", escape(&row.pod.name));
        for c in &columns {
            let text = escape(&c.cell(row));
            let content = match c {
                Column::Pod => match row.flag() {
                    Some(flag) => format!(
                        "{text}<br><span class=\"warn\">{} {flag}</span>",
                        crate::report::icons::warning(12, "warning")
                    ),
                    None => text,
                },
                Column::Zone => format!(
                    "{text}<br><span class=\"evidence\">{}</span>",
                    escape(&row.pod.node)
                ),
                _ => text,
            };
            cell(page, *c, &content);
        }
        page.push_str("</tr>");
    }
    page.push_str("</tbody><tfoot><tr class=\"total\">");
    let t = totals(&rows);
    for c in &columns {
        cell(page, *c, &escape(&c.total(&t)));
    }
    page.push_str("</tr>");
    if let Some(u) = &s.unattributed {
        page.push_str("<tr class=\"unattributed\" title=\"callers' outcomes no pod could be named for (no x-pod: e.g. timeouts on fresh connections, or the load balancer's own errors)\">");
        for c in &columns {
            cell(page, *c, &escape(&c.unattributed(u)));
        }
        page.push_str("</tr>");
    }
    let _ = write!(
        page,
        "</tfoot></table><p class=\"evidence\">{}</p></section>",
        escape(WINDOW_NOTE)
    );
}

fn side_class(side: Side) -> &'static str {
    match side {
        Side::Destination => "dest",
        Side::LoadBalancer => "lb",
        Side::Source => "src",
        Side::Pod | Side::Reconciled => "",
    }
}

fn cell(page: &mut String, c: Column, content: &str) {
    let class = if c.numeric() { " class=\"n\"" } else { "" };
    let _ = write!(page, "<td{class}>{content}</td>");
}

/// Pods as columns, or as rows when there are more than this many.
const HEAT_MAP_MAX_COLUMNS: usize = 10;

pub fn heat_map(page: &mut String, s: &Summary) {
    open_section(page, "traffic-matrix", "Traffic matrix: origin zone × pod");
    if s.traffic_matrix.is_empty() {
        page.push_str("<p>No responses were attributed to a pod.</p>");
        cross_zone_line(page, s);
        page.push_str("</section>");
        return;
    }
    let mut pods: Vec<&str> = s
        .traffic_matrix
        .values()
        .flat_map(|m| m.keys().map(String::as_str))
        .chain(s.pods.iter().map(|p| p.name.as_str()))
        .collect();
    pods.sort_by(|a, b| natural_key(a).cmp(&natural_key(b)));
    pods.dedup();
    let zones: Vec<&str> = s.traffic_matrix.keys().map(String::as_str).collect();
    let count = |zone: &str, pod: &str| {
        s.traffic_matrix
            .get(zone)
            .and_then(|m| m.get(pod))
            .copied()
            .unwrap_or(0)
    };
    let zone_total = |zone: &str| {
        s.traffic_matrix
            .get(zone)
            .map_or(0, |m| m.values().sum::<u64>())
    };
    let max = s
        .traffic_matrix
        .values()
        .flat_map(|m| m.values().copied())
        .max()
        .unwrap_or(0)
        .max(1);
    let pod_label = |pod: &str| {
        let zone = s
            .pods
            .iter()
            .find(|p| p.name == pod)
            .map(|p| format!("<br><span class=\"evidence\">{}</span>", escape(&p.zone)))
            .unwrap_or_default();
        format!("{}{zone}", escape(pod_label(pod)))
    };
    let heat_cell = |page: &mut String, zone: &str, pod: &str| {
        let n = count(zone, pod);
        let alpha = n as f64 / max as f64;
        let ink = if alpha > 0.55 { "#fff" } else { "#1f2328" };
        let total = zone_total(zone);
        let share = if total > 0 {
            n as f64 * 100.0 / total as f64
        } else {
            0.0
        };
        let bytes = s
            .traffic_bytes
            .get(zone)
            .and_then(|m| m.get(pod))
            .map_or(0, |b| b.total());
        let bytes_text = if bytes > 0 {
            format!(", {} both ways", crate::measure::bytes_text(bytes))
        } else {
            String::new()
        };
        let _ = write!(
            page,
            "<td class=\"cell n\" data-count=\"{n}\" data-bytes=\"{bytes}\" style=\"background:rgba(9,105,218,{alpha:.3});color:{ink}\" title=\"{} → {}: {} responses ({share:.1}% of the zone's){bytes_text}\">{}</td>",
            escape(zone),
            escape(pod),
            thousands(n),
            thousands(n)
        );
    };
    page.push_str("<table class=\"heat\">");
    if pods.len() <= HEAT_MAP_MAX_COLUMNS {
        page.push_str("<thead><tr><th>origin zone ↓ / pod →</th>");
        for pod in &pods {
            let _ = write!(page, "<th>{}</th>", pod_label(pod));
        }
        page.push_str("<th>total</th></tr></thead><tbody>");
        for zone in &zones {
            let _ = write!(page, "<tr><th>{}</th>", escape(zone));
            for pod in &pods {
                heat_cell(page, zone, pod);
            }
            let _ = write!(
                page,
                "<td class=\"n\">{}</td></tr>",
                thousands(zone_total(zone))
            );
        }
    } else {
        page.push_str("<thead><tr><th>pod ↓ / origin zone →</th>");
        for zone in &zones {
            let _ = write!(page, "<th>{}</th>", escape(zone));
        }
        page.push_str("</tr></thead><tbody>");
        for pod in &pods {
            let _ = write!(page, "<tr><th>{}</th>", pod_label(pod));
            for zone in &zones {
                heat_cell(page, zone, pod);
            }
            page.push_str("</tr>");
        }
        page.push_str("<tr class=\"total\"><th>total</th>");
        for zone in &zones {
            let _ = write!(page, "<td class=\"n\">{}</td>", thousands(zone_total(zone)));
        }
        page.push_str("</tr>");
    }
    page.push_str(
        "</tbody></table><p class=\"evidence\">Responses each origin zone's callers got from each pod during the load (source side, by x-pod); the darker the cell, the more.</p>",
    );
    cross_zone_line(page, s);
    page.push_str("</section>");
}

/// The cross-zone share, bytes and their estimated monthly cost, under the traffic matrix.
fn cross_zone_line(page: &mut String, s: &Summary) {
    let Some(c) = &s.cross_zone else {
        return;
    };
    let _ = write!(
        page,
        "<p class=\"cross-zone\" data-cross-zone-requests=\"{}\" data-cross-zone-bytes=\"{}\">{}</p><p class=\"evidence\">Cross-zone: answered by a pod in another zone than the caller's. Bytes are HTTP bytes (requests, answers, SSE streams) in both directions, each charged; the cost extrapolates this run's rate over 30 days at the scenario's <code>cost.pricePerGb</code> (US dollars per 10<sup>9</sup> bytes).</p>",
        c.requests,
        c.bytes,
        escape(&capitalized(&c.sentence()))
    );
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
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
        assert!(
            page.contains(
                "<th colspan=\"6\" class=\"dest\">destination: the pod&#39;s sidecar</th>"
            )
        );
        assert!(page.contains("<th colspan=\"3\" class=\"src\">"));
        let row = page
            .split("<tr class=\"swallows\" data-pod=\"pod-2\">")
            .nth(1)
            .expect("pod-2 is flagged");
        let row = &row[..row.find("</tr>").unwrap()];
        assert!(row.contains("</svg> swallows requests"));
        assert!(row.contains(">120<") && row.contains(">118<"), "{row}");
        assert!(row.contains("1× 200") && row.contains("119 (99%)"), "{row}");
    }

    #[test]
    fn many_pods_turn_the_heat_map_on_its_side() {
        let mut summary = failing_summary();
        let zone = summary.traffic_matrix.get_mut("zone-a").unwrap();
        for i in 3..=12 {
            zone.insert(format!("pod-{i}"), i);
        }
        let mut page = String::new();
        heat_map(&mut page, &summary);
        assert!(page.contains("pod ↓ / origin zone →"));
        let order: Vec<usize> = ["pod-2", "pod-9", "pod-10"]
            .iter()
            .map(|p| page.find(&format!("<tr><th>{p}")).unwrap())
            .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "natural order");
    }

    #[test]
    fn heat_map_cells_carry_counts_and_shade_by_the_largest() {
        let mut page = String::new();
        heat_map(&mut page, &failing_summary());
        assert!(page.contains(
            "data-count=\"160\" data-bytes=\"52800\" style=\"background:rgba(9,105,218,1.000)"
        ));
        assert!(page.contains(
            "data-count=\"1\" data-bytes=\"330\" style=\"background:rgba(9,105,218,0.006)"
        ));
        assert!(page.contains("zone-a → pod-2: 1 responses (0.6% of the zone's), 330 B both ways"));
    }

    /// Under the matrix: the share, the bytes and their cost at the run's rate (53,130 B in
    /// 3 s: 45.9 GB in 30 days, $0.46 at $0.01/GB).
    #[test]
    fn the_cross_zone_line_follows_the_heat_map() {
        let mut page = String::new();
        heat_map(&mut page, &failing_summary());
        let line = "<p class=\"cross-zone\" data-cross-zone-requests=\"161\" \
                    data-cross-zone-bytes=\"53130\">Cross-zone: 100.0% of requests (161 of 161), \
                    53.1 kB in 3 s, about $0.46/month at this rate and $0.01/GB each way</p>";
        assert!(page.contains(line), "{page}");
        assert!(page.find("</table>").unwrap() < page.find(line).unwrap());
        assert!(page.ends_with("</section>"));
    }
}

//! The ingress section's text, shared by `report.md` and `report.html`: the controller's
//! settings and one sentence on how requests split by list position, and three tables (requests by position, each replica's
//! reloads and restarts, each pod's position, readiness flips and latency).

use super::text::{format_seconds, pod_label};
use super::{IngressControllerSummary, IngressSummary};

/// A table: its header and rows of cells.
pub struct Table {
    pub header: Vec<&'static str>,
    pub rows: Vec<Vec<String>>,
}

/// The sentence above the tables.
pub fn headline(s: &IngressSummary) -> String {
    let total: u64 = s.by_position.iter().sum();
    let n = s.by_position.len();
    let share = s
        .first_positions_share
        .map_or_else(|| "–".to_owned(), |v| format!("{:.1}%", v * 100.0));
    let rho = s
        .rank_correlation
        .map_or_else(|| "–".to_owned(), |v| format!("{v:.2}"));
    let reloads: u64 = s.replicas.iter().map(|r| r.reloads).sum();
    let restarts: u64 = s.replicas.iter().map(|r| r.restarts).sum();
    let runtime: u64 = s.replicas.iter().map(|r| r.runtime_updates).sum();
    let controller = s
        .controller
        .as_ref()
        .map(|c| format!("{} ", controller_sentence(c)))
        .unwrap_or_default();
    format!(
        "{controller}{total} requests over {n} list positions: the first {} took {share} (a fair share is {:.0}%); rank correlation of position and requests {rho} (negative: the first positions get more). {} replicas: {reloads} reloads, {restarts} restarts, {runtime} runtime-API updates.",
        s.first_positions,
        s.first_positions as f64 * 100.0 / n.max(1) as f64,
        s.replicas.len()
    )
}

/// `haproxy-ingress v0.16 (model): balance roundrobin (balanceAlgorithm), servers sorted by IP,
/// endpoint changes through the runtime API into server slots.`
pub fn controller_sentence(c: &IngressControllerSummary) -> String {
    let source = if c.balance_overridden {
        "balanceAlgorithm"
    } else {
        "the version's default"
    };
    let order = match c.order.as_str() {
        "templateMapKeys" => "servers sorted by `IP:port` as a string (the template's map keys)",
        "shuffledPerReload" => "servers shuffled on every reload",
        "endpointsObject" => "servers in the Endpoints object's order",
        "byIp" => "servers sorted by IP",
        "byName" => "servers sorted by name",
        other => other,
    };
    let updates = if c.dynamic_slots {
        "endpoint changes through the runtime API into server slots"
    } else {
        "every endpoint change reloads"
    };
    format!(
        "haproxy-ingress {} (model): balance {} ({source}), {order}, {updates}.",
        c.version, c.balance
    )
}

pub fn positions(s: &IngressSummary) -> Table {
    let total = s.by_position.iter().sum::<u64>().max(1) as f64;
    Table {
        header: vec!["position", "requests", "share"],
        rows: s
            .by_position
            .iter()
            .enumerate()
            .map(|(i, n)| {
                vec![
                    format!("#{}", i + 1),
                    n.to_string(),
                    format!("{:.1}%", *n as f64 * 100.0 / total),
                ]
            })
            .collect(),
    }
}

pub fn replicas(s: &IngressSummary) -> Table {
    Table {
        header: vec!["replica", "reloads", "restarts", "runtime-API updates"],
        rows: s
            .replicas
            .iter()
            .map(|r| {
                vec![
                    r.name.clone(),
                    r.reloads.to_string(),
                    r.restarts.to_string(),
                    r.runtime_updates.to_string(),
                ]
            })
            .collect(),
    }
}

pub fn pods(s: &IngressSummary) -> Table {
    let ms = |v: Option<f64>| v.map_or_else(|| "–".to_owned(), |v| format_seconds(v / 1000.0));
    Table {
        header: vec![
            "pod",
            "mean position",
            "requests",
            "readiness failures (at)",
            "p90",
            "max",
        ],
        rows: s
            .pods
            .iter()
            .map(|p| {
                let flips = if p.readiness_flips.is_empty() {
                    "0".to_owned()
                } else {
                    let at: Vec<String> = p
                        .readiness_flips
                        .iter()
                        .map(|t| format!("{t:.1}s"))
                        .collect();
                    format!("{} ({})", p.readiness_flips.len(), at.join(", "))
                };
                vec![
                    pod_label(&p.name).to_owned(),
                    p.mean_position
                        .map_or_else(|| "not listed".to_owned(), |v| format!("{v:.1}")),
                    p.requests.to_string(),
                    flips,
                    ms(p.latency_p90_ms),
                    ms(p.latency_max_ms),
                ]
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn controller(
        balance_overridden: bool,
        order: &str,
        dynamic_slots: bool,
    ) -> IngressControllerSummary {
        IngressControllerSummary {
            version: "v0.16".into(),
            balance: if balance_overridden {
                "roundrobin"
            } else {
                "random(2)"
            }
            .into(),
            balance_overridden,
            order: order.into(),
            dynamic_slots,
        }
    }

    #[test]
    fn the_controller_sentence_says_where_the_balance_came_from() {
        assert_eq!(
            controller_sentence(&controller(true, "byIp", true)),
            "haproxy-ingress v0.16 (model): balance roundrobin (balanceAlgorithm), servers sorted by IP, endpoint changes through the runtime API into server slots."
        );
        assert_eq!(
            controller_sentence(&controller(false, "shuffledPerReload", false)),
            "haproxy-ingress v0.16 (model): balance random(2) (the version's default), servers shuffled on every reload, every endpoint change reloads."
        );
    }
}

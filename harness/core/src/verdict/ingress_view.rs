//! The summary's ingress section from a run's data: requests by list position (with the rank
//! correlation and the first positions' share, `measure::position_shares`), each replica's
//! reloads, restarts and runtime-API updates with their causes, and per pod its mean position,
//! readiness flips and its callers' p90/max latency; and the controller settings the replicas
//! ran with.

use std::collections::BTreeMap;

use crate::ingress::ControllerSettings;
use crate::measure::{self, EventKind, RunData, Window};
use crate::report::{
    IngressChangeSummary, IngressControllerSummary, IngressPodSummary, IngressReplicaSummary,
    IngressSummary,
};
use crate::text::natural_key;

/// `None` when the run had no ingress replicas.
pub fn ingress_summary(
    run: &RunData,
    controller: Option<&ControllerSettings>,
) -> Option<IngressSummary> {
    let whole = Window::whole(run);
    let lists = measure::ingress_lists(run);
    if lists.is_empty() {
        return None;
    }
    let shares = measure::position_shares(run, whole);
    let counts = measure::ingress_changes(run, whole);
    let mut changes: BTreeMap<u32, Vec<IngressChangeSummary>> = BTreeMap::new();
    for e in &run.events {
        if let EventKind::Ingress {
            replica,
            change,
            cause,
            servers,
        } = &e.kind
        {
            changes
                .entry(*replica)
                .or_default()
                .push(IngressChangeSummary {
                    t_s: e.t_s,
                    change: wire_name(change),
                    cause: wire_name(cause),
                    servers: servers.clone(),
                });
        }
    }
    let replicas = lists
        .keys()
        .map(|r| {
            let (reloads, restarts, runtime_updates) = counts.get(r).copied().unwrap_or_default();
            IngressReplicaSummary {
                name: format!("ingress-{r}"),
                reloads,
                restarts,
                runtime_updates,
                changes: changes.remove(r).unwrap_or_default(),
            }
        })
        .collect();
    let flips = measure::readiness_flip_times(run, whole);
    let mut latency: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
    for g in &run.generators {
        for (pod, b) in &g.report.by_backend {
            if b.requests > 0 {
                let l = latency.entry(pod.as_str()).or_default();
                l.0 = l.0.max(b.latency_ms.p90);
                l.1 = l.1.max(b.latency_ms.max);
            }
        }
    }
    let mut names: Vec<String> = run.pods.iter().map(|p| p.name.clone()).collect();
    names.extend(shares.by_pod.keys().cloned());
    names.sort_by(|a, b| natural_key(a).cmp(&natural_key(b)));
    names.dedup();
    let pods = names
        .into_iter()
        .map(|name| {
            let listed = shares.by_pod.get(&name);
            let l = latency.get(name.as_str());
            IngressPodSummary {
                mean_position: listed.map(|(_, p)| *p),
                requests: listed.map_or(0, |(n, _)| *n),
                readiness_flips: flips.get(&name).cloned().unwrap_or_default(),
                latency_p90_ms: l.map(|l| l.0),
                latency_max_ms: l.map(|l| l.1),
                name,
            }
        })
        .collect();
    Some(IngressSummary {
        rank_correlation: shares.rank_correlation(),
        first_positions: shares.k(),
        first_positions_share: shares.first_k_share(),
        by_position: shares.by_rank,
        replicas,
        pods,
        controller: controller.map(controller_summary),
    })
}

fn controller_summary(settings: &ControllerSettings) -> IngressControllerSummary {
    IngressControllerSummary {
        version: settings.version.as_str().to_owned(),
        balance: settings.balance().haproxy_keyword().to_owned(),
        balance_overridden: settings.balance_algorithm.is_some(),
        order: settings.ordering().as_str().to_owned(),
        dynamic_slots: settings.dynamic_slots(),
    }
}

/// An enum's name as `timeline.jsonl` writes it (`runtimeApi`).
fn wire_name(value: &impl serde::Serialize) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

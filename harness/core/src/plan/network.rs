//! The plan's notes on the network between zones: for each faulted link, who reaches what
//! across it — callers through their zone's kube-proxy reach pods, the load balancer (in its
//! zone) reaches pods and is reached by its callers, and each ingress replica (in its zone)
//! reaches pods and is reached by its callers (`crate::scenario::model::hops`).

use crate::control_plane::cluster::ClusterModel;
use crate::scenario::model::{Scenario, Via, ZoneFault, hops};
use crate::text::first_few;

/// How many names a note lists before it counts the rest.
const LISTED: usize = 8;

/// One note per faulted link and hop that crosses it: "network zone-a ↔ zone-b +20ms each way:
/// callers in zone-a reach across it: pod-1, pod-3".
pub(super) fn notes(model: &ClusterModel, scenario: &Scenario) -> Vec<String> {
    let faults = model.zone_faults();
    if faults.is_empty() {
        return Vec::new();
    }
    let ep = model.endpoints();
    let callers = |via: Via| -> Vec<&str> {
        let mut zones: Vec<&str> = scenario
            .load
            .generators
            .iter()
            .filter(|g| g.via == via)
            .map(|g| g.zone.as_str())
            .collect();
        zones.sort_unstable();
        zones.dedup();
        zones
    };
    // The pods a hop from `zone` reaches in `other`.
    let kube_proxy_pods = |zone: &str, other: &str| -> Vec<String> {
        ep.reachable_from(zone)
            .iter()
            .filter(|pod| ep.pod(pod).is_some_and(|p| p.zone == other))
            .cloned()
            .collect()
    };
    let ready_pods = |other: &str| -> Vec<String> {
        ep.pods()
            .filter(|p| p.ready && !p.terminating && p.zone == other)
            .map(|p| p.name.clone())
            .collect()
    };
    let (kube_proxy_callers, lb_callers, ingress_callers) = (
        callers(Via::KubeProxy),
        callers(Via::LoadBalancer),
        callers(Via::Ingress),
    );
    let lb_zone = lb_callers
        .first()
        .and_then(|_| hops::load_balancer_zone(scenario));
    let replicas: Vec<(String, String)> = match (&scenario.ingress, ingress_callers.len()) {
        (Some(ingress), 1..) => (0..ingress.replicas)
            .filter_map(|i| {
                let zone = hops::ingress_replica_zone(&scenario.cluster, i)?;
                Some((format!("ingress-{i}"), zone))
            })
            .collect(),
        _ => Vec::new(),
    };

    let mut notes = Vec::new();
    for ((a, b), fault) in faults {
        let cut = *fault == ZoneFault::Partition;
        let head = format!("network {a} ↔ {b} {fault}:");
        let ends = [(a.as_str(), b.as_str()), (b.as_str(), a.as_str())];
        // "<who> reach(es) across it: <pods>" / "<who> cannot reach, their/its requests time
        // out: <pods>".
        let mut pods_note = |who: String, plural: bool, pods: Vec<String>| {
            let verb = match (cut, plural) {
                (false, true) => "reach across it:",
                (false, false) => "reaches across it:",
                (true, true) => "cannot reach, their requests time out:",
                (true, false) => "cannot reach, its requests time out:",
            };
            let listed = if pods.is_empty() {
                "no pod (none is there)".to_owned()
            } else {
                let pods: Vec<&str> = pods.iter().map(String::as_str).collect();
                first_few(&pods, LISTED)
            };
            notes.push(format!("{head} {who} {verb} {listed}"));
        };
        for (zone, other) in ends {
            if kube_proxy_callers.contains(&zone) {
                let who = format!("callers in {zone}");
                pods_note(who, true, kube_proxy_pods(zone, other));
            }
            if lb_zone.as_deref() == Some(zone) {
                let who = format!("the load balancer (in {zone})");
                pods_note(who, false, ready_pods(other));
            }
            let here: Vec<&str> = replicas
                .iter()
                .filter(|(_, z)| z == zone)
                .map(|(name, _)| name.as_str())
                .collect();
            if !here.is_empty() {
                let who = format!("{} (in {zone})", first_few(&here, LISTED));
                pods_note(who, here.len() > 1, ready_pods(other));
            }
        }
        // Callers whose hop to the load balancer or an ingress replica crosses the link.
        for (zone, other) in ends {
            let mut hops_across = Vec::new();
            if lb_zone.as_deref() == Some(other) && lb_callers.contains(&zone) {
                hops_across.push(format!("the load balancer (in {other})"));
            }
            let there: Vec<&str> = replicas
                .iter()
                .filter(|(_, z)| z == other)
                .map(|(name, _)| name.as_str())
                .collect();
            if !there.is_empty() && ingress_callers.contains(&zone) {
                hops_across.push(format!("{} (in {other})", first_few(&there, LISTED)));
            }
            if hops_across.is_empty() {
                continue;
            }
            let targets = hops_across.join(" and ");
            notes.push(if cut {
                format!("{head} callers in {zone} cannot reach {targets}, their requests time out")
            } else {
                format!("{head} callers in {zone} reach {targets} across it")
            });
        }
    }
    notes
}

//! `harness hints --as-is`: who reaches which pods right now. The EndpointSlices are taken as
//! they are — their hints untouched, nothing reconciled — and kube-proxy's choice is shown
//! (Kubernetes v1.34 pkg/proxy/topology.go, via `kube_model::topology_reason`): with
//! `--from-node NAME` the addresses kube-proxy on that node uses and why (hints used, or
//! ignored because an endpoint lacks a hint / the node has no zone label / no endpoint is
//! hinted for its zone; ready endpoints or the serving-and-terminating fallback); without it,
//! the addresses a client in each zone reaches, with the same reasons.

use std::collections::BTreeMap;

use anyhow::bail;
use kube_model::kube_proxy::TopologyMode;
use kube_model::topology_reason::{
    EndpointSource, HintsDecision, NodeHintsSkipped, explain_cluster_endpoints,
};
use kube_model::{Endpoint, Node, ProxyNode, ProxyOptions, ServicePolicy, usable_endpoints};
use serde::Serialize;

use super::report::{EndpointRow, client_zones, select_slices};
use kube_model::openapi::{OwnedSlice, ServiceInfo};

/// Why kube-proxy uses what it uses.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Why {
    /// `PreferSameNode`, `PreferSameZone` or `None` (every usable endpoint).
    pub topology_mode: &'static str,
    /// The hints decision and its details (`reason`: `zoneHintsUsed`, `nodeHintsUsed`,
    /// `endpointMissingZoneHint`, `nodeMissingZoneLabel`, `noEndpointForZone`,
    /// `noReadyEndpoints`).
    pub hints: HintsDecision,
    /// Why node hints were passed over, when the PreferSameTrafficDistribution gate would
    /// have honoured them.
    pub node_hints: Option<NodeHintsSkipped>,
    /// `ready`, `servingTerminating` (no ready endpoint: the terminating ones that still
    /// serve, topology ignored) or `none`.
    pub endpoints: EndpointSource,
    /// Set when `internalTrafficPolicy: Local` decides instead of topology.
    pub traffic_policy: Option<String>,
    /// The decision in words.
    pub summary: String,
}

/// One vantage point: a node, or a client in a zone on a node hosting no endpoint.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct View {
    pub reachable: Vec<String>,
    pub why: Why,
}

/// The `--as-is` report.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AsIsReport {
    pub service: String,
    pub mode: String,
    pub endpoints: Vec<EndpointRow>,
    /// With `--from-node`: the node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// With `--from-node`: the addresses kube-proxy on the node uses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reachable: Option<Vec<String>>,
    /// With `--from-node`: why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<Why>,
    /// Without `--from-node`: zone → addresses a client there reaches (as without --as-is).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reachable_from: Option<BTreeMap<String, Vec<String>>>,
    /// Without `--from-node`: zone → why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why_from: Option<BTreeMap<String, Why>>,
    /// Nodes without a zone label, named: kube-proxy there ignores zone hints.
    pub nodes_without_zone: Vec<String>,
    pub assumptions: Vec<String>,
}

fn mode_name(mode: TopologyMode) -> &'static str {
    match mode {
        TopologyMode::None => "None",
        TopologyMode::PreferSameZone => "PreferSameZone",
        TopologyMode::PreferSameNode => "PreferSameNode",
    }
}

fn view(endpoints: &[Endpoint], node: ProxyNode<'_>, policy: ServicePolicy) -> View {
    let options = ProxyOptions::default();
    let reachable: Vec<String> = usable_endpoints(endpoints, node, policy, options)
        .into_iter()
        .map(|e| e.address.clone())
        .collect();
    let x = explain_cluster_endpoints(endpoints, node, options);
    let traffic_policy = policy.internal_local.then(|| {
        "internalTrafficPolicy: Local: only ready endpoints on this node (else its serving \
         terminating ones); topology hints do not apply"
            .to_owned()
    });
    let mut summary = match &traffic_policy {
        Some(p) => p.clone(),
        None => x.hints.describe(),
    };
    if traffic_policy.is_none() {
        match x.source {
            EndpointSource::ServingTerminating => {
                summary.push_str("; no endpoint is ready, so the serving terminating ones are used")
            }
            EndpointSource::None => summary.push_str("; no endpoint is usable"),
            EndpointSource::Ready => {}
        }
    }
    View {
        reachable,
        why: Why {
            topology_mode: mode_name(x.mode),
            hints: x.hints,
            node_hints: x.node_hints,
            endpoints: x.source,
            traffic_policy,
            summary,
        },
    }
}

/// Builds the report from decoded objects.
pub fn build(
    nodes: &[Node],
    slices_name: &str,
    slices: Vec<OwnedSlice>,
    service: Option<ServiceInfo>,
    from_node: Option<&str>,
    nodes_file: &str,
) -> anyhow::Result<AsIsReport> {
    let (key, slices, note) = select_slices(slices_name, slices, service.as_ref())?;
    let policy = service
        .as_ref()
        .map_or(ServicePolicy::default(), |s| s.policy);
    let endpoints: Vec<Endpoint> = slices
        .iter()
        .flat_map(|s| s.slice.endpoints.iter().cloned())
        .collect();
    let rows = slices
        .iter()
        .flat_map(|s| {
            s.slice
                .endpoints
                .iter()
                .map(move |e| (s.slice.name.clone(), e))
        })
        .map(|(slice, e)| EndpointRow {
            address: e.address.clone(),
            zone: e.zone.clone(),
            node: e.node_name.clone(),
            ready: e.conditions.ready,
            slice,
            for_zones: e.for_zones().to_vec(),
            for_nodes: e.for_nodes().to_vec(),
        })
        .collect();
    let mut report = AsIsReport {
        service: key,
        mode: "as-is: the hints the EndpointSlices carry now, nothing reconciled".to_owned(),
        endpoints: rows,
        node: None,
        reachable: None,
        why: None,
        reachable_from: None,
        why_from: None,
        nodes_without_zone: nodes
            .iter()
            .filter(|n| n.zone.as_deref().is_none_or(str::is_empty))
            .map(|n| n.name.clone())
            .collect(),
        assumptions: vec![
            "Kubernetes v1.34 kube-proxy: PreferSameTrafficDistribution gate on".to_owned(),
            "unset endpoint conditions read as kube-proxy reads them: ready and serving true, terminating false".to_owned(),
        ],
    };
    report.assumptions.extend(note);
    match from_node {
        Some(name) => {
            let Some(node) = nodes.iter().find(|n| n.name == name) else {
                let known: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
                bail!(
                    "--from-node {name}: no such node in {nodes_file} (nodes there: {})",
                    known.join(", ")
                );
            };
            let v = view(
                &endpoints,
                ProxyNode {
                    name: &node.name,
                    zone: node.zone.as_deref(),
                },
                policy,
            );
            report.node = Some(node.name.clone());
            report.reachable = Some(v.reachable);
            report.why = Some(v.why);
        }
        None => {
            let zones = client_zones(nodes, &endpoints);
            let mut reach = BTreeMap::new();
            let mut why = BTreeMap::new();
            for zone in zones {
                let v = view(
                    &endpoints,
                    ProxyNode {
                        name: "",
                        zone: Some(&zone),
                    },
                    policy,
                );
                reach.insert(zone.clone(), v.reachable);
                why.insert(zone, v.why);
            }
            report.assumptions.push(
                "per zone: a client on a node of that zone that hosts no endpoint".to_owned(),
            );
            report.reachable_from = Some(reach);
            report.why_from = Some(why);
        }
    }
    Ok(report)
}

/// The report as text.
pub fn text(r: &AsIsReport) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(out, "Service {}  ({})", r.service, r.mode);
    out.push('\n');
    out.push_str("Endpoints as they are:\n");
    if r.endpoints.is_empty() {
        out.push_str(
            "  none: no endpoints (the Service has no EndpointSlice, or its slices hold none)\n",
        );
    } else {
        super::render::endpoints_table(&mut out, &r.endpoints);
    }
    out.push('\n');
    // Of the ready endpoints: not-ready and terminating ones are used only as a fallback.
    let total = super::render::ready_endpoints(&r.endpoints);
    let mut line = |who: &str, reachable: &[String], why: &Why| {
        let _ = writeln!(
            out,
            "{who}: {} of {total} ready: {}",
            reachable.len(),
            if reachable.is_empty() {
                "-".to_owned()
            } else {
                reachable.join(",")
            }
        );
        let _ = writeln!(out, "  why: {}", why.summary);
    };
    if let (Some(node), Some(reachable), Some(why)) = (&r.node, &r.reachable, &r.why) {
        line(&format!("kube-proxy on node {node} uses"), reachable, why);
    }
    if let (Some(reach), Some(why)) = (&r.reachable_from, &r.why_from) {
        for (zone, addrs) in reach {
            if let Some(w) = why.get(zone) {
                line(&format!("a client in zone {zone} reaches"), addrs, w);
            }
        }
    }
    for node in &r.nodes_without_zone {
        let _ = writeln!(
            out,
            "node {node} has no topology.kubernetes.io/zone label: kube-proxy there ignores zone hints (--from-node {node} shows what it uses)"
        );
    }
    out.push('\n');
    out.push_str("Assumptions:\n");
    for a in &r.assumptions {
        let _ = writeln!(out, "  - {a}");
    }
    out
}

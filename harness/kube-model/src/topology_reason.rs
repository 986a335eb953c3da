// Ported from kubernetes/kubernetes v1.34 pkg/proxy/topology.go (topologyModeFromHints and the
// Cluster-policy part of CategorizeEndpoints; source read at topology.go @008b3652959c). The
// reasons are the conditions under which upstream logs "Ignoring same-node/same-zone topology
// hints for service since ...".
//! Why kube-proxy on a node uses the endpoints it uses for a Service's Cluster-policy
//! traffic: which topology mode the hints select, and when they are ignored, why (an endpoint
//! lacks a hint, the node has no zone label, no endpoint is hinted for its zone or node); and
//! whether the ready endpoints or the serving-and-terminating fallback were used. The endpoint
//! list is the one [`super::kube_proxy::categorize_endpoints`] returns.

use serde::Serialize;

use super::kube_proxy::{ProxyNode, ProxyOptions, TopologyMode, topology_mode_from_hints};
use super::types::Endpoint;

/// Why the hints were used or ignored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "camelCase")]
pub enum HintsDecision {
    /// No endpoint is ready, so there are no hints to consider.
    NoReadyEndpoints,
    /// Every ready endpoint has a node hint and at least one is for this node.
    NodeHintsUsed,
    /// Every ready endpoint has a zone hint and at least one is for this node's zone.
    ZoneHintsUsed { zone: String },
    /// At least one ready endpoint has no zone hint (listed).
    EndpointMissingZoneHint { endpoints: Vec<String> },
    /// Every ready endpoint has a zone hint, but the node has no zone label.
    NodeMissingZoneLabel,
    /// Every ready endpoint has a zone hint, but none is for the node's zone.
    NoEndpointForZone { zone: String },
}

/// Why node hints were passed over before the zone hints were looked at (only when the
/// `PreferSameTrafficDistribution` gate is on and the mode is not PreferSameNode).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum NodeHintsSkipped {
    /// At least one ready endpoint has no node hint.
    EndpointMissingNodeHint,
    /// Every ready endpoint has a node hint, but none is for this node.
    NoEndpointForNode,
}

/// Which endpoints the list came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum EndpointSource {
    /// Ready endpoints (filtered by topology when a mode applies).
    Ready,
    /// No ready endpoint passed: serving-and-terminating endpoints, topology ignored.
    ServingTerminating,
    /// Nothing usable.
    None,
}

/// kube-proxy's decision for a node, with the endpoints it uses.
#[derive(Debug, Clone, PartialEq)]
pub struct TopologyExplanation<'a> {
    pub mode: TopologyMode,
    pub hints: HintsDecision,
    pub node_hints: Option<NodeHintsSkipped>,
    pub source: EndpointSource,
    pub endpoints: Vec<&'a Endpoint>,
}

fn is_ready(e: &Endpoint) -> bool {
    e.conditions.ready.unwrap_or(true)
}

fn is_serving_terminating(e: &Endpoint) -> bool {
    e.conditions.serving.unwrap_or(true) && e.conditions.terminating.unwrap_or(false)
}

/// Explains the Cluster-policy endpoint list kube-proxy on `node` builds from `endpoints`.
pub fn explain_cluster_endpoints<'a>(
    endpoints: &'a [Endpoint],
    node: ProxyNode<'_>,
    options: ProxyOptions,
) -> TopologyExplanation<'a> {
    let mode = topology_mode_from_hints(endpoints, node, options);
    let ready: Vec<&Endpoint> = endpoints.iter().filter(|e| is_ready(e)).collect();
    let zone = node.zone.unwrap_or("");
    let node_hints = (options.prefer_same_traffic_distribution
        && !ready.is_empty()
        && mode != TopologyMode::PreferSameNode)
        .then(|| {
            if ready.iter().any(|e| e.for_nodes().is_empty()) {
                NodeHintsSkipped::EndpointMissingNodeHint
            } else {
                NodeHintsSkipped::NoEndpointForNode
            }
        });
    let hints = match mode {
        _ if ready.is_empty() => HintsDecision::NoReadyEndpoints,
        TopologyMode::PreferSameNode => HintsDecision::NodeHintsUsed,
        TopologyMode::PreferSameZone => HintsDecision::ZoneHintsUsed {
            zone: zone.to_owned(),
        },
        TopologyMode::None => {
            let missing: Vec<String> = ready
                .iter()
                .filter(|e| e.for_zones().is_empty())
                .map(|e| e.address.clone())
                .collect();
            if !missing.is_empty() {
                HintsDecision::EndpointMissingZoneHint { endpoints: missing }
            } else if zone.is_empty() {
                HintsDecision::NodeMissingZoneLabel
            } else {
                HintsDecision::NoEndpointForZone {
                    zone: zone.to_owned(),
                }
            }
        }
    };
    let available = |e: &Endpoint| match mode {
        TopologyMode::None => true,
        TopologyMode::PreferSameNode => e.for_nodes().iter().any(|n| n == node.name),
        TopologyMode::PreferSameZone => e.for_zones().iter().any(|z| z == zone),
    };
    let chosen: Vec<&Endpoint> = ready.iter().copied().filter(|e| available(e)).collect();
    let (source, endpoints) = if !chosen.is_empty() {
        (EndpointSource::Ready, chosen)
    } else {
        let terminating: Vec<&Endpoint> = endpoints
            .iter()
            .filter(|e| is_serving_terminating(e))
            .collect();
        if terminating.is_empty() {
            (EndpointSource::None, terminating)
        } else {
            (EndpointSource::ServingTerminating, terminating)
        }
    };
    TopologyExplanation {
        mode,
        hints,
        node_hints,
        source,
        endpoints,
    }
}

impl HintsDecision {
    /// One sentence, in the words of upstream's log lines where it has them.
    pub fn describe(&self) -> String {
        match self {
            HintsDecision::NoReadyEndpoints => {
                "no endpoint is ready, so there are no hints to consider".into()
            }
            HintsDecision::NodeHintsUsed => {
                "node hints used: every ready endpoint has one and at least one is for this node"
                    .into()
            }
            HintsDecision::ZoneHintsUsed { zone } => format!(
                "zone hints used: every ready endpoint has one and at least one is for zone {zone}"
            ),
            HintsDecision::EndpointMissingZoneHint { endpoints } => format!(
                "zone hints ignored: one or more endpoints is missing a zone hint ({})",
                endpoints.join(", ")
            ),
            HintsDecision::NodeMissingZoneLabel => {
                "zone hints ignored: the node is missing the topology.kubernetes.io/zone label"
                    .into()
            }
            HintsDecision::NoEndpointForZone { zone } => {
                format!("zone hints ignored: no hints were provided for zone {zone}")
            }
        }
    }
}

// Ported from kubernetes/kubernetes v1.34 (release-1.34 line; source read at trafficdist.go @19952a2b7bd5).
// staging/src/k8s.io/endpointslice/trafficdist/trafficdist.go (ReconcileHints,
// defaultHeuristic, preferCloseHeuristic).
//! Hints for `spec.trafficDistribution` (KEP-4444, KEP-3015): `PreferClose` and its clearer
//! alias `PreferSameZone` give every ready endpoint a hint for its own zone; `PreferSameNode`
//! also gives it a hint for its own node. No allocation, no overload threshold, no events.
//! Any other value (or none) removes hints.
//!
//! Versions: `trafficDistribution: PreferClose` arrived in v1.30 (alpha), beta in v1.31, GA in
//! v1.33. `PreferSameZone` and `PreferSameNode` arrived in v1.33 behind the
//! `PreferSameTrafficDistribution` feature gate, beta and on by default in v1.34, GA in v1.35.

use std::fmt;

use serde::Serialize;

use super::types::{EndpointSlice, Hints};

/// The values of `spec.trafficDistribution` that produce hints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum TrafficDistribution {
    PreferClose,
    PreferSameZone,
    PreferSameNode,
}

impl TrafficDistribution {
    /// Reads a `spec.trafficDistribution` value; `None` for values that produce no hints.
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "PreferClose" => Some(TrafficDistribution::PreferClose),
            "PreferSameZone" => Some(TrafficDistribution::PreferSameZone),
            "PreferSameNode" => Some(TrafficDistribution::PreferSameNode),
            _ => None,
        }
    }

    /// Whether endpoints also get a `forNodes` hint.
    pub fn node_hints(self) -> bool {
        self == TrafficDistribution::PreferSameNode
    }
}

impl fmt::Display for TrafficDistribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// Reconciles hints for the given slices (upstream `trafficdist.ReconcileHints`): unchanged
/// slices whose hints differ from what `distribution` wants move to `to_update`, then every
/// slice to create or update gets its hints set (or removed when `distribution` is `None`).
pub fn reconcile_hints(
    distribution: Option<TrafficDistribution>,
    to_create: &mut [EndpointSlice],
    to_update: &mut Vec<EndpointSlice>,
    unchanged: &mut Vec<EndpointSlice>,
) {
    let kept = std::mem::take(unchanged);
    for slice in kept {
        if needs_update(distribution, &slice) {
            to_update.push(slice);
        } else {
            unchanged.push(slice);
        }
    }
    for slice in to_create.iter_mut().chain(to_update.iter_mut()) {
        update(distribution, slice);
    }
}

fn needs_update(distribution: Option<TrafficDistribution>, slice: &EndpointSlice) -> bool {
    let Some(distribution) = distribution else {
        // Default heuristic: any endpoint with hints must be rewritten.
        return slice.endpoints.iter().any(|e| e.hints.is_some());
    };
    slice
        .endpoints
        .iter()
        .filter(|e| e.controller_ready())
        .any(|endpoint| {
            let zone_wrong = match &endpoint.zone {
                Some(zone) => endpoint.for_zones() != std::slice::from_ref(zone),
                None => !endpoint.for_zones().is_empty(),
            };
            let node_wrong = match (&endpoint.node_name, distribution.node_hints()) {
                (Some(node), true) => endpoint.for_nodes() != std::slice::from_ref(node),
                _ => !endpoint.for_nodes().is_empty(),
            };
            zone_wrong || node_wrong
        })
}

fn update(distribution: Option<TrafficDistribution>, slice: &mut EndpointSlice) {
    let Some(distribution) = distribution else {
        for endpoint in &mut slice.endpoints {
            endpoint.hints = None;
        }
        return;
    };
    for endpoint in slice.endpoints.iter_mut().filter(|e| e.controller_ready()) {
        let for_zones: Vec<String> = endpoint.zone.iter().cloned().collect();
        let for_nodes: Vec<String> = if distribution.node_hints() {
            endpoint.node_name.iter().cloned().collect()
        } else {
            Vec::new()
        };
        endpoint.hints = if for_zones.is_empty() && for_nodes.is_empty() {
            None
        } else {
            Some(Hints {
                for_zones,
                for_nodes,
            })
        };
    }
}

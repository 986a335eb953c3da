//! What callers can reach, as timeline events: the Service's hints (pod → `forZones`, on or
//! off) and, for each client zone, the pods kube-proxy on a node there uses for new
//! connections (kube-model's port of `pkg/proxy/topology.go`). Both targets feed it the
//! endpoints they hold — the modelled slice locally, the watched slices on a cluster — so the
//! events read the same whichever produced them.

use std::collections::BTreeMap;

use crate::measure::EventKind;
use kube_model::Endpoint;
use kube_model::kube_proxy::{ProxyNode, ProxyOptions, ServicePolicy, usable_endpoints};

/// The last recorded hints and reachability; each update returns only what changed.
#[derive(Debug, Clone, Default)]
pub struct RoutingTracker {
    zones: Vec<String>,
    /// Pod → forZones, as last recorded.
    hints: BTreeMap<String, Vec<String>>,
    hints_enabled: bool,
    /// Zone → pods kube-proxy there would use for new connections.
    reachable: BTreeMap<String, Vec<String>>,
    /// Ready endpoints when reachability was last recorded.
    ready_recorded: Option<usize>,
}

impl RoutingTracker {
    /// A tracker for clients in `zones`.
    pub fn new(zones: Vec<String>) -> Self {
        Self {
            zones,
            ..Self::default()
        }
    }

    /// Clients in `zone` too (a node relabelled into a new zone).
    pub fn add_zone(&mut self, zone: &str) {
        if !self.zones.iter().any(|z| z == zone) {
            self.zones.push(zone.to_owned());
        }
    }

    /// Whether any endpoint carried a zone hint at the last update.
    pub fn hints_enabled(&self) -> bool {
        self.hints_enabled
    }

    /// Pod → forZones at the last update.
    pub fn hints(&self) -> &BTreeMap<String, Vec<String>> {
        &self.hints
    }

    /// Pods kube-proxy in `zone` sends new connections to.
    pub fn reachable_from(&self, zone: &str) -> &[String] {
        self.reachable.get(zone).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Records the endpoints' zone hints; a `hints` event when they changed.
    pub fn update_hints<'a>(
        &mut self,
        endpoints: impl IntoIterator<Item = &'a Endpoint>,
    ) -> Option<EventKind> {
        let hints: BTreeMap<String, Vec<String>> = endpoints
            .into_iter()
            .filter(|e| !e.for_zones().is_empty())
            .map(|e| (e.address.clone(), e.for_zones().to_vec()))
            .collect();
        let enabled = !hints.is_empty();
        if hints == self.hints && enabled == self.hints_enabled {
            return None;
        }
        self.hints = hints;
        self.hints_enabled = enabled;
        Some(EventKind::Hints {
            enabled,
            for_zones: self.hints.clone(),
        })
    }

    /// Recomputes, for each zone, the pods kube-proxy on a node there would use; a
    /// `reachability` event per zone whose pods changed, or for every zone when the number of
    /// ready endpoints changed ("reach 2 of 4 ready pods" must not keep an old count when the
    /// reachable pods stay the same).
    pub fn update_reachability(&mut self, endpoints: &[Endpoint]) -> Vec<EventKind> {
        let ready_pods = endpoints
            .iter()
            .filter(|e| e.conditions.ready == Some(true))
            .count();
        let ready_changed = self.ready_recorded != Some(ready_pods);
        self.ready_recorded = Some(ready_pods);
        let mut out = Vec::new();
        for zone in &self.zones {
            // A load generator is a client on some node of its zone, not on a pod's node.
            let node = ProxyNode {
                name: "client",
                zone: Some(zone),
            };
            let usable: Vec<String> = usable_endpoints(
                endpoints,
                node,
                ServicePolicy::default(),
                ProxyOptions::default(),
            )
            .into_iter()
            .map(|e| e.address.clone())
            .collect();
            if ready_changed || self.reachable.get(zone) != Some(&usable) {
                out.push(EventKind::Reachability {
                    zone: zone.clone(),
                    pods: usable.clone(),
                    ready_pods,
                });
                self.reachable.insert(zone.clone(), usable);
            }
        }
        out
    }
}

// Ported from kubernetes/kubernetes v1.34 (release-1.34 line; source read at topologycache.go @40d99474ca4d (identical at @e0a566e71f69)).
// staging/src/k8s.io/endpointslice/topologycache/topologycache.go (TopologyCache, SetNodes,
// getAllocations, hasExcludedLabels, GetOverloadedServices, SetHints/RemoveHints) and the node
// event handlers of pkg/controller/endpointslice/endpointslice_controller.go (addNode,
// updateNode, deleteNode -> checkNodeTopologyDistribution).
//! The EndpointSlice controller's view of the cluster for Topology Aware Routing: allocatable
//! CPU per zone and each zone's share of it, the per-zone endpoint allocations that follow
//! from a number of ready endpoints, and which Services currently have hints.
//!
//! Which nodes count: ready nodes (`Ready` condition `True`) without a control-plane or master
//! role label. If any such node lacks a zone label or allocatable CPU, or fewer than two zones
//! remain, the controller has no ratios at all and every Service loses its hints.
//!
//! When the ratios are recomputed: only on a node add or delete, a flip of a node's readiness,
//! or a change of its zone label. A change of allocatable CPU alone does not recompute; the old
//! ratios stay until one of those events happens. [`TopologyCache::set_nodes`] models that
//! trigger and says whether it fired.

use std::collections::{BTreeMap, BTreeSet};

use super::events::{Event, messages, with_counts};
use super::redistribution::{EndpointZoneInfo, service_overloaded};
use super::types::{AddressType, Node};

/// Maximum overload any single endpoint should be exposed to (upstream `overloadThreshold`).
pub const OVERLOAD_THRESHOLD: f64 = 0.2;

/// The fewest endpoints a zone with `ratio` of the CPU must get out of `endpoints` so none of
/// them is overloaded by more than the threshold: `ceil(ratio * endpoints / (1 + 0.2))`,
/// evaluated in upstream's floating-point order (`desired * (1 / (1 + threshold))`).
pub fn minimum_endpoints(ratio: f64, endpoints: usize) -> i64 {
    let desired = ratio * endpoints as f64;
    (desired * (1.0 / (1.0 + OVERLOAD_THRESHOLD))).ceil() as i64
}

/// How many endpoints a zone should get (upstream `allocation`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Allocation {
    /// `ceil(desired / (1 + OVERLOAD_THRESHOLD))`.
    pub minimum: i64,
    /// `minimum` plus every endpoint left over once all zones have their minimum.
    pub maximum: i64,
    /// `max(ratio * endpoints, minimum)`.
    pub desired: f64,
}

/// What the node informer last reported about a node, as far as the trigger cares.
#[derive(Debug, Clone, PartialEq, Eq)]
struct NodeTrigger {
    ready: bool,
    zone_label: String,
}

/// The controller's topology cache (upstream `TopologyCache`).
#[derive(Debug, Clone)]
pub struct TopologyCache {
    sufficient_node_info: bool,
    cpu_by_zone: Option<BTreeMap<String, u64>>,
    cpu_ratios_by_zone: Option<BTreeMap<String, f64>>,
    endpoints_by_service: BTreeMap<String, BTreeMap<AddressType, EndpointZoneInfo>>,
    hints_populated_by_service: BTreeSet<String>,
    observed_nodes: Option<BTreeMap<String, NodeTrigger>>,
}

impl Default for TopologyCache {
    fn default() -> Self {
        Self::new()
    }
}

impl TopologyCache {
    /// A fresh cache. Like upstream's constructor, the ratios start as an empty (not absent)
    /// map, so hints are refused with "Nodes only ready in one zone" until nodes are set.
    pub fn new() -> Self {
        TopologyCache {
            sufficient_node_info: false,
            cpu_by_zone: Some(BTreeMap::new()),
            cpu_ratios_by_zone: Some(BTreeMap::new()),
            endpoints_by_service: BTreeMap::new(),
            hints_populated_by_service: BTreeSet::new(),
            observed_nodes: None,
        }
    }

    /// Feeds the current node list through the controller's node event handlers. The first
    /// call (the informer's initial list), a node added or removed, a readiness flip or a zone
    /// label change triggers a recompute ([`Self::recompute_from_nodes`]) and returns `true`.
    /// Anything else, notably a change of allocatable CPU alone, leaves the ratios as they were
    /// and returns `false`.
    pub fn set_nodes(&mut self, nodes: &[Node]) -> bool {
        let snapshot: BTreeMap<String, NodeTrigger> = nodes
            .iter()
            .map(|n| {
                (
                    n.name.clone(),
                    NodeTrigger {
                        ready: n.ready,
                        zone_label: n.zone_label().to_owned(),
                    },
                )
            })
            .collect();
        let triggered = self.observed_nodes.as_ref() != Some(&snapshot);
        self.observed_nodes = Some(snapshot);
        if triggered {
            self.recompute_from_nodes(nodes);
        }
        triggered
    }

    /// Upstream `SetNodes`: recomputes CPU per zone and the zone ratios from `nodes`.
    pub fn recompute_from_nodes(&mut self, nodes: &[Node]) {
        let mut cpu_by_zone: BTreeMap<String, u64> = BTreeMap::new();
        let mut sufficient = true;
        let mut total: u64 = 0;
        for node in nodes {
            if node.control_plane || !node.ready {
                continue;
            }
            let cpu = node.allocatable_cpu_millis.unwrap_or(0);
            let zone = node.zone_label();
            if zone.is_empty() || cpu == 0 {
                // One node without a zone or CPU invalidates everything.
                cpu_by_zone.clear();
                sufficient = false;
                break;
            }
            total += cpu;
            *cpu_by_zone.entry(zone.to_owned()).or_insert(0) += cpu;
        }
        if total == 0 || !sufficient || cpu_by_zone.len() < 2 {
            self.sufficient_node_info = false;
            self.cpu_by_zone = None;
            self.cpu_ratios_by_zone = None;
        } else {
            let ratios = cpu_by_zone
                .iter()
                .map(|(z, &cpu)| (z.clone(), cpu as f64 / total as f64))
                .collect();
            self.sufficient_node_info = true;
            self.cpu_by_zone = Some(cpu_by_zone);
            self.cpu_ratios_by_zone = Some(ratios);
        }
    }

    /// Overrides the zone ratios directly (upstream's unit tests assign the field the same
    /// way); `None` means "no node information".
    pub fn set_cpu_ratios(&mut self, ratios: Option<BTreeMap<String, f64>>) {
        self.cpu_ratios_by_zone = ratios;
    }

    /// Each zone's share of allocatable CPU, or `None` when node information is insufficient.
    pub fn cpu_ratios(&self) -> Option<&BTreeMap<String, f64>> {
        self.cpu_ratios_by_zone.as_ref()
    }

    /// Allocatable CPU per zone in millicores, or `None` when node information is insufficient.
    pub fn cpu_by_zone(&self) -> Option<&BTreeMap<String, u64>> {
        self.cpu_by_zone.as_ref()
    }

    /// Whether the last recompute found enough node information.
    pub fn sufficient_node_info(&self) -> bool {
        self.sufficient_node_info
    }

    /// Per-zone allocations for `num_endpoints` ready endpoints, or the `TopologyAwareHintsDisabled`
    /// event (message without the address-type suffix) saying why there are none
    /// (upstream `getAllocations`).
    pub fn allocations(&self, num_endpoints: usize) -> Result<BTreeMap<String, Allocation>, Event> {
        let Some(ratios) = &self.cpu_ratios_by_zone else {
            return Err(Event::disabled(messages::INSUFFICIENT_NODE_INFO));
        };
        if ratios.len() < 2 {
            return Err(Event::disabled(messages::NODES_READY_IN_ONE_ZONE_ONLY));
        }
        if ratios.len() > num_endpoints {
            let text = with_counts(
                messages::INSUFFICIENT_NUMBER_OF_ENDPOINTS,
                num_endpoints,
                ratios.len(),
            );
            return Err(Event::disabled(text));
        }
        let n = num_endpoints as i64;
        let mut allocations = BTreeMap::new();
        let mut min_total = 0;
        for (zone, ratio) in ratios {
            let desired = ratio * num_endpoints as f64;
            let minimum = minimum_endpoints(*ratio, num_endpoints);
            allocations.insert(
                zone.clone(),
                Allocation {
                    minimum,
                    maximum: 0,
                    desired: desired.max(minimum as f64),
                },
            );
            min_total += minimum;
            if min_total > n {
                let text = with_counts(
                    messages::MIN_ALLOCATION_EXCEEDS_OVERLOAD_THRESHOLD,
                    num_endpoints,
                    ratios.len(),
                );
                return Err(Event::disabled(text));
            }
        }
        for allocation in allocations.values_mut() {
            allocation.maximum = allocation.minimum + n - min_total;
        }
        Ok(allocations)
    }

    /// Records the hint counts of a Service and address type and marks the Service as having
    /// hints (upstream `SetHints`).
    pub fn set_hints(
        &mut self,
        service_key: &str,
        address_type: AddressType,
        counts: EndpointZoneInfo,
    ) {
        self.endpoints_by_service
            .entry(service_key.to_owned())
            .or_default()
            .insert(address_type, counts);
        self.hints_populated_by_service
            .insert(service_key.to_owned());
    }

    /// Forgets a Service's hints for an address type and clears its "has hints" mark
    /// (upstream `RemoveHints`).
    pub fn remove_hints(&mut self, service_key: &str, address_type: AddressType) {
        if let Some(by_type) = self.endpoints_by_service.get_mut(service_key) {
            by_type.remove(&address_type);
            if by_type.is_empty() {
                self.endpoints_by_service.remove(service_key);
            }
        }
        self.hints_populated_by_service.remove(service_key);
    }

    /// Whether the controller currently has hints recorded for the Service.
    pub fn has_populated_hints(&self, service_key: &str) -> bool {
        self.hints_populated_by_service.contains(service_key)
    }

    /// The hint counts recorded for a Service and address type.
    pub fn hint_counts(
        &self,
        service_key: &str,
        address_type: AddressType,
    ) -> Option<&EndpointZoneInfo> {
        self.endpoints_by_service
            .get(service_key)?
            .get(&address_type)
    }

    /// Services whose recorded hints leave a zone below its minimum under the current ratios;
    /// after a node-triggered recompute the controller requeues exactly these
    /// (upstream `GetOverloadedServices`). A Service whose hints were removed is not listed.
    pub fn overloaded_services(&self) -> Vec<String> {
        let empty = BTreeMap::new();
        let ratios = self.cpu_ratios_by_zone.as_ref().unwrap_or(&empty);
        self.endpoints_by_service
            .iter()
            .filter(|(_, by_type)| {
                by_type
                    .values()
                    .any(|counts| service_overloaded(counts, ratios))
            })
            .map(|(key, _)| key.clone())
            .collect()
    }
}

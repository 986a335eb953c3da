// Ported from kubernetes/kubernetes v1.34 (release-1.34 line; source read at reconciler.go @020438690733).
// staging/src/k8s.io/endpointslice/reconciler.go (reconcileByAddressType: the choice between
// the topology annotation and trafficDistribution, validTrafficDistribution) and
// staging/src/k8s.io/endpointslice/utils.go (hintsEnabled).
//! How the EndpointSlice controller decides, for one Service, whether hints come from the
//! Topology Aware Routing annotation, from `spec.trafficDistribution`, or not at all, and
//! what one reconcile of existing slices does to their hints: [`reconcile_slice_hints`] is the
//! step itself, [`compute_hints`] runs it from scratch on a node list and reports the result.
//!
//! Precedence (v1.34): the annotation wins. `service.kubernetes.io/topology-aware-hints`
//! (deprecated) is read when present, else `service.kubernetes.io/topology-mode`; only the
//! values `Auto` and `auto` turn hints on. `trafficDistribution` is used only when the
//! annotation does not turn hints on. `PreferClose` is always accepted; `PreferSameZone` and
//! `PreferSameNode` need the `PreferSameTrafficDistribution` gate (on by default in v1.34).

use std::collections::BTreeMap;

use serde::Serialize;

use super::events::{Event, messages};
use super::redistribution::remove_hints_from_slices;
use super::topology_cache::TopologyCache;
use super::traffic_dist::{self, TrafficDistribution};
use super::types::{AddressType, Endpoint, EndpointSlice, Node, SliceInfo};

/// `service.kubernetes.io/topology-mode` (`v1.AnnotationTopologyMode`).
pub const ANNOTATION_TOPOLOGY_MODE: &str = "service.kubernetes.io/topology-mode";
/// `service.kubernetes.io/topology-aware-hints` (`v1.DeprecatedAnnotationTopologyAwareHints`).
pub const ANNOTATION_TOPOLOGY_AWARE_HINTS: &str = "service.kubernetes.io/topology-aware-hints";

/// Controller feature switches that change hint behaviour in v1.34.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControllerOptions {
    /// The `PreferSameTrafficDistribution` feature gate (beta, on by default in v1.34).
    pub prefer_same_traffic_distribution: bool,
}

impl Default for ControllerOptions {
    fn default() -> Self {
        ControllerOptions {
            prefer_same_traffic_distribution: true,
        }
    }
}

/// The parts of a Service that select how its hints are produced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServiceTopology {
    /// The Service's annotations (only the two topology keys are read).
    pub annotations: BTreeMap<String, String>,
    /// `spec.trafficDistribution`, verbatim.
    pub traffic_distribution: Option<String>,
}

impl ServiceTopology {
    /// A Service with `service.kubernetes.io/topology-mode: Auto`.
    pub fn topology_auto() -> Self {
        let annotations =
            BTreeMap::from([(ANNOTATION_TOPOLOGY_MODE.to_owned(), "Auto".to_owned())]);
        ServiceTopology {
            annotations,
            traffic_distribution: None,
        }
    }

    /// A Service with `spec.trafficDistribution` set to one of the values that give hints.
    pub fn with_traffic_distribution(distribution: TrafficDistribution) -> Self {
        Self::traffic_distribution(&distribution.to_string())
    }

    /// A Service with `spec.trafficDistribution` set to `value` (any text, as the API holds it).
    pub fn traffic_distribution(value: &str) -> Self {
        ServiceTopology {
            annotations: BTreeMap::new(),
            traffic_distribution: Some(value.to_owned()),
        }
    }

    /// Upstream `hintsEnabled`: the deprecated annotation takes precedence when present (even
    /// with another value); hints are on only for `Auto` or `auto`.
    pub fn annotation_enables_hints(&self) -> bool {
        let value = self
            .annotations
            .get(ANNOTATION_TOPOLOGY_AWARE_HINTS)
            .or_else(|| self.annotations.get(ANNOTATION_TOPOLOGY_MODE));
        matches!(value.map(String::as_str), Some("Auto" | "auto"))
    }

    /// Upstream `validTrafficDistribution`: the value when it is set and accepted.
    pub fn valid_traffic_distribution(
        &self,
        options: ControllerOptions,
    ) -> Option<TrafficDistribution> {
        let distribution = TrafficDistribution::parse(self.traffic_distribution.as_deref()?)?;
        match distribution {
            TrafficDistribution::PreferClose => Some(distribution),
            _ if options.prefer_same_traffic_distribution => Some(distribution),
            _ => None,
        }
    }

    /// Which mechanism produces this Service's hints.
    pub fn routing_mode(&self, options: ControllerOptions) -> RoutingMode {
        if self.annotation_enables_hints() {
            RoutingMode::TopologyAuto
        } else if let Some(distribution) = self.valid_traffic_distribution(options) {
            RoutingMode::TrafficDistribution(distribution)
        } else {
            RoutingMode::None
        }
    }
}

/// Where a Service's hints come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum RoutingMode {
    /// No hints: every endpoint is used from everywhere.
    None,
    /// Topology Aware Routing (`topology-mode: Auto`): CPU-proportional zone allocation.
    TopologyAuto,
    /// `spec.trafficDistribution`: same-zone (and for `PreferSameNode` same-node) hints.
    TrafficDistribution(TrafficDistribution),
}

/// The hint part of one reconcile of a Service's slices for one address type. Mutates `si`
/// and the cache the way upstream's `reconcileByAddressType` does; returns the events.
pub fn reconcile_slice_hints(
    cache: &mut TopologyCache,
    service: &ServiceTopology,
    si: &mut SliceInfo,
    options: ControllerOptions,
) -> Vec<Event> {
    let annotation = service.annotation_enables_hints();
    let distribution = if annotation {
        None
    } else {
        service.valid_traffic_distribution(options)
    };
    let mut events = Vec::new();
    if annotation {
        events = cache.add_hints(si);
    } else {
        if cache.has_populated_hints(&si.service_key) {
            events.push(
                Event::disabled(messages::TOPOLOGY_AWARE_HINTS_DISABLED)
                    .with_address_type(si.address_type),
            );
        }
        cache.remove_hints(&si.service_key, si.address_type);
        if distribution.is_none() {
            remove_hints_from_slices(si);
        }
    }
    if distribution.is_some() {
        traffic_dist::reconcile_hints(
            distribution,
            &mut si.to_create,
            &mut si.to_update,
            &mut si.unchanged,
        );
    }
    events
}

/// Everything needed to predict one reconcile from scratch.
#[derive(Debug, Clone)]
pub struct HintsInput<'a> {
    pub nodes: &'a [Node],
    pub service_key: &'a str,
    pub service: &'a ServiceTopology,
    pub address_type: AddressType,
    /// The Service's existing slices (all treated as unchanged: no pod changed).
    pub slices: Vec<EndpointSlice>,
    /// Whether the controller already has hints recorded for this Service (it then emits no
    /// `TopologyAwareHintsEnabled` event). Its recorded counts are taken from the slices.
    pub previously_populated: bool,
    pub options: ControllerOptions,
}

/// What one reconcile would do.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HintsOutcome {
    pub mode: RoutingMode,
    /// Each zone's share of allocatable CPU, `None` when the controller has no ratios.
    pub zone_cpu_ratios: Option<BTreeMap<String, f64>>,
    /// Topology-mode Auto: the controller holds hints for the Service afterwards.
    /// trafficDistribution: always true. No mode: false.
    pub hints_enabled: bool,
    pub events: Vec<Event>,
    /// The slices after the reconcile, in input order.
    pub slices: Vec<EndpointSlice>,
}

impl HintsOutcome {
    /// All endpoints, slice by slice.
    pub fn endpoints(&self) -> impl Iterator<Item = &Endpoint> {
        self.slices.iter().flat_map(|s| &s.endpoints)
    }

    /// How many ready endpoints (controller semantics) carry a hint for each zone.
    pub fn hints_per_zone(&self) -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        for zone in self
            .endpoints()
            .filter(|e| e.controller_ready())
            .flat_map(Endpoint::for_zones)
        {
            *counts.entry(zone.clone()).or_insert(0) += 1;
        }
        counts
    }
}

/// Runs a fresh controller (node informer sync, then one reconcile of the Service's existing
/// slices) and reports the result.
pub fn compute_hints(input: HintsInput<'_>) -> HintsOutcome {
    let mut cache = TopologyCache::new();
    cache.set_nodes(input.nodes);
    let names: Vec<String> = input.slices.iter().map(|s| s.name.clone()).collect();
    let mut si = SliceInfo::existing(input.service_key, input.address_type, input.slices);
    if input.previously_populated {
        let mut counts = BTreeMap::new();
        for zone in si
            .all_slices()
            .flat_map(|s| &s.endpoints)
            .filter(|e| e.controller_ready())
            .flat_map(Endpoint::for_zones)
        {
            *counts.entry(zone.clone()).or_insert(0) += 1;
        }
        cache.set_hints(input.service_key, input.address_type, counts);
    }
    let events = reconcile_slice_hints(&mut cache, input.service, &mut si, input.options);
    let mode = input.service.routing_mode(input.options);
    let hints_enabled = match mode {
        RoutingMode::TopologyAuto => cache.has_populated_hints(input.service_key),
        RoutingMode::TrafficDistribution(_) => true,
        RoutingMode::None => false,
    };
    HintsOutcome {
        mode,
        zone_cpu_ratios: cache.cpu_ratios().cloned(),
        hints_enabled,
        events,
        slices: restore_order(&names, si),
    }
}

/// Puts the slices back in the order they were given (the reconcile moves them between lists).
fn restore_order(names: &[String], si: SliceInfo) -> Vec<EndpointSlice> {
    let mut pool: Vec<Option<EndpointSlice>> = si
        .to_create
        .into_iter()
        .chain(si.to_update)
        .chain(si.unchanged)
        .map(Some)
        .collect();
    let mut ordered = Vec::with_capacity(pool.len());
    for name in names {
        if let Some(slot) = pool
            .iter_mut()
            .find(|s| s.as_ref().is_some_and(|s| &s.name == name))
        {
            ordered.extend(slot.take());
        }
    }
    ordered.extend(pool.into_iter().flatten());
    ordered
}

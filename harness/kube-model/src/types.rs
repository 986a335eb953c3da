//! The Kubernetes objects the models work on, reduced to the fields the EndpointSlice
//! controller's topology code and kube-proxy's topology filter read: nodes (zone label,
//! readiness, allocatable CPU, control-plane role) and EndpointSlice endpoints (address, zone,
//! node, the three conditions, hints).
//!
//! Field shapes follow `k8s.io/api` (Kubernetes v1.34): endpoint conditions stay `Option<bool>`
//! because the two consumers read an unset condition differently (the controller counts an
//! endpoint only when `ready` is explicitly true; kube-proxy treats an unset `ready` as ready),
//! and `hints` stays `Option` because "no hints" and "hints with an empty `forZones`" are
//! different states to the controller's validity check.

use std::fmt;

use serde::Serialize;

/// `topology.kubernetes.io/zone` (`v1.LabelTopologyZone`).
pub const LABEL_TOPOLOGY_ZONE: &str = "topology.kubernetes.io/zone";
/// Nodes carrying this label (any value) are left out of the zone CPU totals.
pub const LABEL_CONTROL_PLANE: &str = "node-role.kubernetes.io/control-plane";
/// The older control-plane label, excluded the same way.
pub const LABEL_MASTER: &str = "node-role.kubernetes.io/master";

/// A cluster node as the topology cache sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Node {
    pub name: String,
    /// Value of the `topology.kubernetes.io/zone` label; `None` when the label is missing.
    /// An empty value counts as missing everywhere upstream looks at it.
    pub zone: Option<String>,
    /// `status.allocatable.cpu` in millicores; `None` when absent (upstream reads a zero).
    pub allocatable_cpu_millis: Option<u64>,
    /// The `Ready` node condition is `True`.
    pub ready: bool,
    /// Carries `node-role.kubernetes.io/control-plane` or `node-role.kubernetes.io/master`.
    pub control_plane: bool,
}

impl Node {
    /// A ready worker node with a zone and allocatable CPU.
    pub fn worker(name: &str, zone: &str, cpu_millis: u64) -> Self {
        Node {
            name: name.to_owned(),
            zone: Some(zone.to_owned()),
            allocatable_cpu_millis: Some(cpu_millis),
            ready: true,
            control_plane: false,
        }
    }

    /// The zone label value as upstream reads it from a label map: `""` when missing.
    pub fn zone_label(&self) -> &str {
        self.zone.as_deref().unwrap_or("")
    }
}

/// `discovery.k8s.io/v1` `EndpointConditions`: each condition may be unset.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct EndpointConditions {
    pub ready: Option<bool>,
    pub serving: Option<bool>,
    pub terminating: Option<bool>,
}

/// `discovery.k8s.io/v1` `EndpointHints`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hints {
    pub for_zones: Vec<String>,
    pub for_nodes: Vec<String>,
}

impl Hints {
    /// Hints naming exactly one zone.
    pub fn zone(zone: &str) -> Self {
        Hints {
            for_zones: vec![zone.to_owned()],
            for_nodes: Vec::new(),
        }
    }
}

/// One endpoint of an EndpointSlice (its first address stands for it, as in kube-proxy).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Endpoint {
    pub address: String,
    pub zone: Option<String>,
    pub node_name: Option<String>,
    pub conditions: EndpointConditions,
    pub hints: Option<Hints>,
}

impl Endpoint {
    /// An endpoint with `ready` set explicitly and no other condition or hint.
    pub fn new(address: &str, zone: Option<&str>, ready: bool) -> Self {
        Endpoint {
            address: address.to_owned(),
            zone: zone.map(str::to_owned),
            node_name: None,
            conditions: EndpointConditions {
                ready: Some(ready),
                ..Default::default()
            },
            hints: None,
        }
    }

    /// Builder: set the node name.
    pub fn on_node(mut self, node: &str) -> Self {
        self.node_name = Some(node.to_owned());
        self
    }

    /// Builder: set the hints.
    pub fn with_hints(mut self, hints: Option<Hints>) -> Self {
        self.hints = hints;
        self
    }

    /// The EndpointSlice controller's notion of ready (`EndpointReady` in topologycache and
    /// trafficdist): the `ready` condition is set and true.
    pub fn controller_ready(&self) -> bool {
        self.conditions.ready == Some(true)
    }

    /// The zone names in `hints.forZones` (empty when there are no hints).
    pub fn for_zones(&self) -> &[String] {
        self.hints.as_ref().map_or(&[], |h| h.for_zones.as_slice())
    }

    /// The node names in `hints.forNodes` (empty when there are no hints).
    pub fn for_nodes(&self) -> &[String] {
        self.hints.as_ref().map_or(&[], |h| h.for_nodes.as_slice())
    }
}

/// An EndpointSlice: a name and its endpoints (ports and address type are not needed by the
/// topology code; the address type travels in [`SliceInfo`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EndpointSlice {
    pub name: String,
    pub endpoints: Vec<Endpoint>,
}

impl EndpointSlice {
    pub fn new(name: &str, endpoints: Vec<Endpoint>) -> Self {
        EndpointSlice {
            name: name.to_owned(),
            endpoints,
        }
    }
}

/// `discovery.k8s.io/v1` address types. Event messages name the address type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum AddressType {
    IPv4,
    IPv6,
    #[serde(rename = "FQDN")]
    Fqdn,
}

impl fmt::Display for AddressType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AddressType::IPv4 => "IPv4",
            AddressType::IPv6 => "IPv6",
            AddressType::Fqdn => "FQDN",
        })
    }
}

/// The slices of one Service and address type during one reconcile, split the way the
/// reconciler hands them to the topology code (upstream `topologycache.SliceInfo`):
/// slices it is about to create, slices it is about to update, and existing slices it would
/// otherwise leave alone. Reconciling slices that already exist, with no pod change, means
/// every slice starts in `unchanged`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SliceInfo {
    pub service_key: String,
    pub address_type: AddressType,
    pub to_create: Vec<EndpointSlice>,
    pub to_update: Vec<EndpointSlice>,
    pub unchanged: Vec<EndpointSlice>,
}

impl SliceInfo {
    /// Existing slices reconciled without endpoint changes: all of them start unchanged.
    pub fn existing(
        service_key: &str,
        address_type: AddressType,
        slices: Vec<EndpointSlice>,
    ) -> Self {
        SliceInfo {
            service_key: service_key.to_owned(),
            address_type,
            to_create: Vec::new(),
            to_update: Vec::new(),
            unchanged: slices,
        }
    }

    /// Ready endpoints (controller semantics) across all three lists.
    pub fn total_ready_endpoints(&self) -> usize {
        self.all_slices()
            .flat_map(|s| &s.endpoints)
            .filter(|e| e.controller_ready())
            .count()
    }

    /// Every slice: to-create, then to-update, then unchanged.
    pub fn all_slices(&self) -> impl Iterator<Item = &EndpointSlice> {
        self.to_create
            .iter()
            .chain(&self.to_update)
            .chain(&self.unchanged)
    }

    /// The slices the hint code may modify: to-create, then to-update.
    pub(crate) fn allocatable_slices_mut(&mut self) -> impl Iterator<Item = &mut EndpointSlice> {
        self.to_create.iter_mut().chain(self.to_update.iter_mut())
    }
}

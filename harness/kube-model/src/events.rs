// Ported from kubernetes/kubernetes v1.34 (release-1.34 line; source read at event.go @e0a566e71f69, utils.go @40d99474ca4d).
// staging/src/k8s.io/endpointslice/topologycache/event.go and the `FormatWithAddressType`
// helper of staging/src/k8s.io/endpointslice/topologycache/utils.go.
//! The events the EndpointSlice controller records on a Service about topology hints: their
//! type, reason and exact message texts, and the ", addressType: X" suffix the controller
//! appends before recording them.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::types::AddressType;

/// Reason of every event that reports hints being switched off or removed.
pub const REASON_DISABLED: &str = "TopologyAwareHintsDisabled";
/// Reason of the event that reports hints being set for the first time.
pub const REASON_ENABLED: &str = "TopologyAwareHintsEnabled";

/// Message texts, word for word as upstream's `event.go` defines them.
pub mod messages {
    pub const NO_ZONE_SPECIFIED: &str = "One or more endpoints do not have a zone specified";
    pub const NO_ALLOCATED_HINTS_FOR_ZONES: &str = "No hints allocated for zones";
    pub const TOPOLOGY_AWARE_HINTS_ENABLED: &str = "Topology Aware Hints has been enabled";
    pub const TOPOLOGY_AWARE_HINTS_DISABLED: &str = "Topology Aware Hints has been disabled";
    pub const INSUFFICIENT_NODE_INFO: &str =
        "Insufficient Node information: allocatable CPU or zone not specified on one or more nodes";
    pub const NODES_READY_IN_ONE_ZONE_ONLY: &str = "Nodes only ready in one zone";
    pub const INSUFFICIENT_NUMBER_OF_ENDPOINTS: &str = "Insufficient number of endpoints";
    pub const MIN_ALLOCATION_EXCEEDS_OVERLOAD_THRESHOLD: &str = "Unable to allocate minimum required endpoints to each zone without exceeding overload threshold";
}

/// `v1.EventTypeNormal` / `v1.EventTypeWarning`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum EventType {
    Normal,
    Warning,
}

impl fmt::Display for EventType {
    /// `Normal` or `Warning`, as the API writes the event's `type`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// Whether `reason` is one of the controller's topology-hint events.
pub fn is_topology_hints_reason(reason: &str) -> bool {
    reason == REASON_ENABLED || reason == REASON_DISABLED
}

/// An event the controller would record on the Service (upstream `EventBuilder`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Event {
    #[serde(rename = "type")]
    pub event_type: EventType,
    pub reason: String,
    pub message: String,
}

impl Event {
    /// A `Warning` with reason `TopologyAwareHintsDisabled`.
    pub fn disabled(message: impl Into<String>) -> Self {
        Event {
            event_type: EventType::Warning,
            reason: REASON_DISABLED.to_owned(),
            message: message.into(),
        }
    }

    /// A `Normal` with reason `TopologyAwareHintsEnabled`.
    pub fn enabled(message: impl Into<String>) -> Self {
        Event {
            event_type: EventType::Normal,
            reason: REASON_ENABLED.to_owned(),
            message: message.into(),
        }
    }

    /// The same event with `", addressType: <type>"` appended to the message, as the
    /// controller does before recording every topology event.
    pub fn with_address_type(mut self, address_type: AddressType) -> Self {
        self.message = format_with_address_type(&self.message, address_type);
        self
    }
}

/// `FormatWithAddressType`: `"<message>, addressType: <type>"`.
pub fn format_with_address_type(message: &str, address_type: AddressType) -> String {
    format!("{message}, addressType: {address_type}")
}

/// The message of the "cannot allocate" events, which name the ready-endpoint and zone counts:
/// `"<text> (<n> endpoints, <z> zones)"`.
pub fn with_counts(text: &str, endpoints: usize, zones: usize) -> String {
    format!("{text} ({endpoints} endpoints, {zones} zones)")
}

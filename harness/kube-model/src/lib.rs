//! Pure models of the Kubernetes behaviour behind the traffic incidents, ported from the
//! upstream source of Kubernetes v1.34 (each file names the upstream files it follows):
//!
//! - the EndpointSlice controller's topology hints: zone CPU ratios from ready nodes
//!   ([`TopologyCache`]), per-zone allocation with the 0.2 overload threshold and hint
//!   redistribution ([`TopologyCache::add_hints`]), the `TopologyAwareHintsEnabled/Disabled`
//!   events ([`events`]), `spec.trafficDistribution` hints ([`traffic_dist`]) and how a
//!   reconcile chooses between them ([`reconcile`]);
//! - kube-proxy's topology filtering and per-connection backend choice ([`kube_proxy`]), and
//!   why it uses or ignores the hints on a node ([`topology_reason`]);
//! - CPU quantities as Kubernetes parses them ([`quantity`]);
//! - a sweep of the zone CPU share that shows where hints flap ([`sweep`]);
//! - the HorizontalPodAutoscaler's replica calculation and behavior ([`hpa`]);
//! - Deployment rolling updates and pod termination ([`workloads`]);
//! - the kubelet's readiness probe results ([`probe`]);
//! - a node whose kubelet goes silent and comes back: pods marked not ready, taint-based
//!   eviction, re-probing after the restart ([`node_lifecycle`]);
//! - the conversion of `k8s-openapi` objects into these models' inputs ([`openapi`]).
//!
//! No I/O and no harness types: callers pass Kubernetes objects in and get hints, events,
//! endpoint sets and decisions out.
//! Upstream iterates Go maps in random order in places; these models iterate in sorted order,
//! which yields the per-zone hint counts upstream guarantees (see [`redistribution`]).

/// The Kubernetes release these models were ported from: the version the local target models
/// (recorded as `kubernetes.version` of its runs' summaries).
pub const KUBERNETES_VERSION: &str = "v1.34";

mod add_hints;
pub mod events;
pub mod hpa;
pub mod kube_proxy;
pub mod node_lifecycle;
pub mod openapi;
pub mod probe;
pub mod quantity;
pub mod reconcile;
pub mod redistribution;
pub mod sweep;
pub mod topology_cache;
pub mod topology_reason;
pub mod traffic_dist;
pub mod types;
pub mod workloads;

pub use events::{Event, EventType};
pub use kube_proxy::{ProxyNode, ProxyOptions, ServicePolicy, pick_backend, usable_endpoints};
pub use quantity::{QuantityError, parse_cpu_millis};
pub use reconcile::{
    ControllerOptions, HintsInput, HintsOutcome, RoutingMode, ServiceTopology, compute_hints,
    reconcile_slice_hints,
};
pub use topology_cache::{Allocation, OVERLOAD_THRESHOLD, TopologyCache};
pub use traffic_dist::TrafficDistribution;
pub use types::{AddressType, Endpoint, EndpointConditions, EndpointSlice, Hints, Node, SliceInfo};

//! The modelled Kubernetes control plane of the local target, as pure state machines: where
//! pods are scheduled ([`placement`]) and what the EndpointSlice controller and kube-proxy make
//! of the Service's pods ([`endpoints`]), and the hints and per-zone reachability both targets
//! record from endpoints ([`routing`]).

pub mod cluster;
pub mod endpoints;
pub mod placement;
pub mod routing;

//! The ALB-like load balancer in the typed model.

use std::time::Duration;

/// A load balancer sending straight to pod IPs (IP target mode), kept in sync with the
/// Service's endpoints by a lagging controller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadBalancer {
    /// From a pod becoming a ready endpoint to its registration as a target (default 5s).
    pub registration_lag: Duration,
    /// From a pod leaving the endpoints to its target's deregistration (default 10s); until
    /// then the load balancer keeps sending to it.
    pub deregistration_lag: Duration,
    /// How long a deregistered target keeps its in-flight requests (default 300s).
    pub deregistration_delay: Duration,
    /// `None`: no health checks; a registered target gets traffic until deregistered.
    pub health_check: Option<HealthCheck>,
    /// Pods carry a readiness gate the load balancer sets once their target is healthy: a
    /// pod is Ready (an available replica, a ready endpoint) only with its containers ready
    /// and its target healthy.
    pub readiness_gate: bool,
    /// The zone it runs in, as declared (`None`: the default, see
    /// [`crate::scenario::model::hops::load_balancer_zone`]).
    pub zone: Option<String>,
}

/// The load balancer's HTTP health check of each target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealthCheck {
    /// More than zero (default 15s).
    pub interval: Duration,
    /// Default 5.
    pub healthy_threshold: u32,
    /// Default 2.
    pub unhealthy_threshold: u32,
    /// Default `/readyz`.
    pub path: String,
}

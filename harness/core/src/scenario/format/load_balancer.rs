//! The top-level `loadBalancer` section as written: an ALB-like load balancer in IP target mode
//! (it sends straight to pod IPs, bypassing kube-proxy), kept in sync with the Service's
//! endpoints by a controller that lags behind them.

use schemars::JsonSchema;
use serde::Deserialize;

use super::scalars::{DurationText, HttpPath, ZoneName};

/// A load balancer with the pods as targets. Generators with `via: loadBalancer` send through
/// it.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LoadBalancerSpec {
    /// How long after a pod becomes a ready endpoint the controller registers it as a target.
    #[serde(default = "five_seconds")]
    pub registration_lag: DurationText,
    /// How long after a pod leaves the endpoints (its deletion) the controller deregisters
    /// its target. Until then the load balancer keeps sending it new requests.
    #[serde(default = "ten_seconds")]
    pub deregistration_lag: DurationText,
    /// The target group's deregistration delay (connection draining): how long a
    /// deregistered target keeps its in-flight requests before the load balancer drops them.
    #[serde(default = "three_hundred_seconds")]
    pub deregistration_delay: DurationText,
    /// The load balancer's own health checks of each target. Omit it for none: a registered
    /// target receives traffic until it is deregistered.
    #[serde(default)]
    pub health_check: Option<HealthCheckSpec>,
    /// Gives each pod a readiness gate for its target (as the AWS Load Balancer Controller
    /// injects `target-health.elbv2.k8s.aws/<target group>`): a pod turns Ready only once the
    /// load balancer has its target healthy, so a rollout waits for registration before it
    /// deletes old pods. It does not delay the deregistration of terminating pods (that still
    /// needs a preStop sleep or an in-app drain).
    #[serde(default)]
    pub readiness_gate: bool,
    /// The zone the load balancer runs in: clients reach it from their zone, and it reaches
    /// the pods from this one (what `zoneNetwork` faults act on). Default: the first zone,
    /// in file order, with a worker node. Must be one of `cluster.zones`.
    #[serde(default)]
    pub zone: Option<ZoneName>,
}

/// The target group's health check (an HTTP GET on each target).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HealthCheckSpec {
    /// Time between checks of one target; more than zero.
    #[serde(default = "fifteen_seconds")]
    pub interval: DurationText,
    /// Consecutive successes after which an unhealthy target receives traffic again.
    #[serde(default = "five")]
    #[schemars(range(min = 1))]
    pub healthy_threshold: u32,
    /// Consecutive failures after which a target stops receiving traffic.
    #[serde(default = "two")]
    #[schemars(range(min = 1))]
    pub unhealthy_threshold: u32,
    /// The path checked; a target is healthy while it answers 2xx.
    #[serde(default = "readyz")]
    pub path: HttpPath,
}

fn five_seconds() -> DurationText {
    DurationText::of("5s")
}
fn ten_seconds() -> DurationText {
    DurationText::of("10s")
}
fn fifteen_seconds() -> DurationText {
    DurationText::of("15s")
}
fn three_hundred_seconds() -> DurationText {
    DurationText::of("300s")
}
fn five() -> u32 {
    5
}
fn two() -> u32 {
    2
}
fn readyz() -> HttpPath {
    HttpPath("/readyz".to_owned())
}

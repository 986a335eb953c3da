//! The top-level `ingress` section as written: HAProxy ingress replicas (a DaemonSet of the
//! haproxy-ingress controller behind a cloud L4 load balancer) in front of the Service's pods,
//! the controller version whose endpoint handling is modelled (`crate::ingress`), and the
//! churn a busy cluster puts on them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::scalars::DurationText;

/// HAProxy ingress replicas in front of the pods. Generators with `via: ingress` send
/// through them: an L4 load balancer spreads their new connections over the replicas, and
/// each replica's HAProxy balances requests over the servers its controller rendered.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IngressSpec {
    /// The haproxy-ingress release line whose endpoint handling is modelled: `v0.6` (list
    /// sorted by pod IP by the template), `v0.7` (shuffled on every reload unless
    /// `sortBackends`), `v0.8` (the Endpoints object's order), `v0.11` (`sortEndpointsBy`),
    /// `v0.16` (`random(2)` and runtime-API server slots).
    pub version: IngressVersion,
    /// Ingress replicas (one `haproxy` process each).
    #[serde(default = "two")]
    #[schemars(range(min = 1, max = 32))]
    pub replicas: u32,
    /// `--sort-backends` (respected from v0.7, PR #247; ignored by v0.6, whose template sorts
    /// anyway).
    #[serde(default)]
    pub sort_backends: bool,
    /// `--sort-endpoints-by` (v0.11 and later, PR #678). Omit it for the default,
    /// `endpoint`.
    #[serde(default)]
    pub sort_endpoints_by: Option<SortEndpointsBySpec>,
    /// The `balance-algorithm` configuration key: HAProxy's `balance` for the Service's
    /// backend, `roundrobin` or `random(2)` (haproxy-ingress takes any HAProxy algorithm;
    /// these two are what the model renders). Omit it for the version's default: `random(2)`
    /// from v0.16, `roundrobin` before.
    #[serde(default)]
    pub balance_algorithm: Option<BalanceAlgorithmSpec>,
    /// `backend-server-slots-increment` (v0.16 only): servers are pre-allocated in multiples
    /// of this, and endpoint changes that fit go through the runtime API without a reload.
    #[serde(default = "eight")]
    #[schemars(range(min = 1, max = 256))]
    pub slots_increment: u32,
    /// The config churn of a busy cluster. Omit it for a quiet one: HAProxy is reloaded only
    /// when the Service's endpoints change.
    #[serde(default)]
    pub churn: Option<ChurnSpec>,
}

/// A haproxy-ingress version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum IngressVersion {
    #[serde(rename = "v0.6")]
    V0_6,
    #[serde(rename = "v0.7")]
    V0_7,
    #[serde(rename = "v0.8")]
    V0_8,
    #[serde(rename = "v0.11")]
    V0_11,
    #[serde(rename = "v0.16")]
    V0_16,
}

/// `--sort-endpoints-by`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SortEndpointsBySpec {
    /// The order of the Kubernetes Endpoints object (sorted by IP string).
    Endpoint,
    /// By IP and port, numerically.
    Ip,
    /// By server (pod) name.
    Name,
    /// Shuffled on every reload.
    Random,
}

/// `balance-algorithm`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum BalanceAlgorithmSpec {
    /// `balance roundrobin`: each server in turn; a fresh HAProxy starts at the first one.
    #[serde(rename = "roundrobin")]
    RoundRobin,
    /// `balance random(2)`: the less loaded of two random draws.
    #[serde(rename = "random(2)")]
    RandomTwo,
}

/// Config churn on every ingress replica.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChurnSpec {
    /// Unrelated configuration rewrites (other Ingresses and Services of a busy cluster
    /// changing) this often: each one re-renders every replica's configuration and reloads
    /// its HAProxy. Omit it for none.
    #[serde(default)]
    pub rewrite_interval: Option<DurationText>,
    /// The share of reloads that fail, from 0 to 1: the controller then restarts HAProxy (stop
    /// and start), which drops its connections and starts round-robin at the first server.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub reload_failure_rate: f64,
}

fn two() -> u32 {
    2
}
fn eight() -> u32 {
    8
}

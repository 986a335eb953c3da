//! The `load` section as written: warmup, duration, client timeout and the load generators.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::scalars::{DnsLabel, DurationText, HttpPath, RateText, ZoneName};

/// The load applied to the service.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LoadSpec {
    /// Load before measurement starts; nothing during the warmup counts towards expectations,
    /// and timeline times start after it.
    #[serde(default = "two_seconds")]
    pub warmup: DurationText,
    /// How long load is measured (after the warmup). Timeline entries and expectation windows
    /// fall within it.
    pub duration: DurationText,
    /// The client timeout for one request; a request that takes longer counts as a timeout.
    #[serde(default = "ten_seconds")]
    pub request_timeout: DurationText,
    /// The load generators, each running in one zone (clients in a zone reach the Service
    /// through that zone's kube-proxy, or through the load balancer).
    #[schemars(length(min = 1))]
    pub generators: Vec<GeneratorSpec>,
}

/// A load generator.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GeneratorSpec {
    /// The generator name, unique among generators.
    pub name: DnsLabel,
    /// The zone the generator runs in; must be one of `cluster.zones`.
    pub zone: ZoneName,
    /// Requests per second: a number (open-loop, measured from the intended send time),
    /// `"max"` (closed-loop, as fast as the connections allow), or a ramp `"from:to"` that
    /// changes linearly from `from` to `to` over the load duration.
    pub rate: RateText,
    /// The number of client connections: with `keepAlive` the connections requests are spread
    /// over; with `perRequest` the most open at once.
    #[serde(default = "sixteen")]
    #[schemars(range(min = 1))]
    pub connections: u32,
    /// Whether connections are reused (`keepAlive`) or opened per request (`perRequest`).
    /// kube-proxy picks a backend per connection, so this decides how often backends change.
    #[serde(default)]
    pub connection_model: ConnectionModel,
    /// Long-lived SSE streams held open for the whole load (each holds a sidecar slot on the
    /// pod it lands on). Requires `service.sse`.
    #[serde(default)]
    pub sse_streams: u32,
    /// The request path.
    #[serde(default = "demo_path")]
    pub path: HttpPath,
    /// How requests reach the pods: through the generator's zone's kube-proxy (the Service's
    /// ClusterIP), through the top-level `loadBalancer`, or through the top-level `ingress`
    /// (which must then be set).
    #[serde(default)]
    pub via: Via,
    /// When the generator starts, after load start (default `0s`): a later start adds a surge
    /// on top of the other generators. It runs until the end of the load; its warm-up is the
    /// load's only when it starts at `0s`.
    #[serde(default)]
    pub start_at: Option<DurationText>,
}

/// The path from a generator to the pods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Via {
    /// The Service's ClusterIP: kube-proxy in the generator's zone picks a ready endpoint.
    #[default]
    KubeProxy,
    /// The load balancer, which sends straight to the pod IPs it has registered as targets.
    LoadBalancer,
    /// The HAProxy ingress replicas (top-level `ingress`), behind an L4 load balancer that
    /// spreads new connections over them.
    Ingress,
}

/// How a generator uses connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ConnectionModel {
    /// Reuse each connection for many requests (HTTP keep-alive).
    #[default]
    KeepAlive,
    /// Open a new connection for every request.
    PerRequest,
}

fn two_seconds() -> DurationText {
    DurationText::of("2s")
}
fn ten_seconds() -> DurationText {
    DurationText::of("10s")
}
fn sixteen() -> u32 {
    16
}
fn demo_path() -> HttpPath {
    HttpPath("/flags/demo".to_owned())
}

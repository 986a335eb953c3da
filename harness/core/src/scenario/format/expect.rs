//! The `expect` section as written: a metric, bounds, and an optional time window.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::scalars::{ThresholdText, WindowBound, ZoneName};

/// Something that must hold for the scenario to pass. At least one of `max` and `min`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExpectationSpec {
    /// The name shown in reports and JUnit; defaults to one derived from the metric, bounds
    /// and window, such as `errorRate <= 0.01 during node-change+5s..end`.
    #[serde(default)]
    pub name: Option<String>,
    /// The measurement the bounds apply to.
    pub metric: MetricName,
    /// The largest acceptable value. Rates, shares and `maxSaturation` take a fraction from 0 to 1
    /// (or a percentage such as `"1%"`),
    /// `skewMaxMean` and `skewCv` a non-negative number, `starvedPods`, `hintFlaps`,
    /// `requestsAfterRemoval`, `maxReplicas`, `minReplicas`, `readinessFlips`,
    /// `ingressRestarts` and `minRoutableTargets` a whole number, `positionRankCorrelation` a
    /// number from -1 to 1, `latencyP99`, `podLatencyP90`, `rolloutDuration` and
    /// `timeToScaleUp` a duration such as `"500ms"`.
    #[serde(default)]
    pub max: Option<ThresholdText>,
    /// The smallest acceptable value, written as for `max`.
    #[serde(default)]
    pub min: Option<ThresholdText>,
    /// The part of the load the metric is computed over; the whole load by default.
    #[serde(default)]
    pub window: Option<WindowSpec>,
    /// Only the callers in this zone (the generators whose `zone` it is). For `errorRate`,
    /// `http5xxRate`, `transportErrorRate`, `timeoutRate`, `latencyP99` and `crossZoneShare`.
    #[serde(default)]
    pub origin_zone: Option<ZoneName>,
    /// Only the answers of pods in this zone (the answering pod's zone, by its `x-pod`). For
    /// `errorRate` (non-2xx answers of those pods over their answers; transport errors name no
    /// pod), `latencyP99` (over the generators' whole runs: no `window`) and `crossZoneShare`.
    #[serde(default)]
    pub destination_zone: Option<ZoneName>,
}

/// A time window within the load. Each bound is `start`, `end`, the name of a timeline entry
/// (its `at`), any of those followed by `+D` or `-D` (`node-change+5s`, `end-10s`), or a bare
/// duration `D` after load start (`12s`).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WindowSpec {
    /// Where the window begins; `start` by default.
    #[serde(default)]
    pub from: Option<WindowBound>,
    /// Where the window ends; `end` by default.
    #[serde(default)]
    pub to: Option<WindowBound>,
}

/// The measurements expectations can bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum MetricName {
    /// Failed attempts over all attempts: non-2xx responses plus transport errors.
    ErrorRate,
    /// 5xx responses over all attempts.
    Http5xxRate,
    /// Transport errors (connection refused, reset) over all attempts.
    TransportErrorRate,
    /// Requests that hit the client timeout over all attempts.
    TimeoutRate,
    /// The busiest pod's request share over the mean share (1 = perfectly even).
    SkewMaxMean,
    /// The coefficient of variation of per-pod request shares (0 = perfectly even).
    SkewCv,
    /// Pods that should receive traffic but got less than 10% of a fair share.
    StarvedPods,
    /// The 99th percentile of request latency, measured from the intended send time.
    LatencyP99,
    /// How many times topology hints were switched on or off.
    HintFlaps,
    /// The highest per-pod in-flight count over the sidecar's `maxConcurrency` (0 to 1).
    MaxSaturation,
    /// Requests the sidecars rejected (queue full or queue timeout) over the requests they
    /// admitted or rejected.
    RejectedRate,
    /// Failed attempts among requests sent to pods inside their termination window (from the
    /// pod's deletion until it is gone), over all requests sent in those windows.
    TerminationErrorRate,
    /// Requests that reached a pod after its endpoint was removed (its deletion).
    RequestsAfterRemoval,
    /// From a `rollout` action to the rollout's completion (every pod of the new revision
    /// available, every old pod gone). Requires a `rollout` timeline entry.
    RolloutDuration,
    /// From the window start to the first increase of the replica count.
    TimeToScaleUp,
    /// The highest replica count (the Deployment's `spec.replicas`, as the autoscaler or
    /// `scale` actions set it) seen in the window.
    MaxReplicas,
    /// The lowest replica count seen in the window.
    MinReplicas,
    /// Spearman's rank correlation, from -1 to 1, between a server's position in the ingress
    /// replicas' rendered lists and the requests it received (negative: the first positions
    /// get more). Requires the top-level `ingress`.
    PositionRankCorrelation,
    /// The share of requests that went to the first quarter of the ingress list positions (a
    /// fair share is a quarter). Requires the top-level `ingress`.
    FirstPositionsShare,
    /// Times a pod left the ready endpoints because its readiness failed (not its deletion).
    ReadinessFlips,
    /// HAProxy restarts over every ingress replica. Requires the top-level `ingress`.
    IngressRestarts,
    /// The worst pod's p90 latency (each pod's p90 over the whole run, as its callers saw it).
    PodLatencyP90,
    /// The fewest targets the load balancer could route new requests to (healthy, or all
    /// registered ones when every one is unhealthy) at any instant of the window.
    MinRoutableTargets,
    /// Of the responses attributed to a pod, the share answered by a pod in another zone than
    /// its caller's (the generator's zone against the answering pod's).
    CrossZoneShare,
}

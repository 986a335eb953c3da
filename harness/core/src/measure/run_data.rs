//! What a target hands back after a run, independent of the target: each generator's report
//! (the loadgen JSON, read field by field as documented in workloads/loadgen/REPORT.md), per-pod
//! samples of the sidecars' destination-side metrics, and the timeline of control-plane events.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// All data of one run; times are seconds from the load start.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunData {
    /// Wall-clock time of the load start (Unix ms); every `t_s` counts from it.
    pub load_started_unix_ms: u64,
    /// Seconds of load actually run.
    pub duration_s: f64,
    pub generators: Vec<GeneratorRun>,
    pub pods: Vec<PodRun>,
    pub events: Vec<TimelineEvent>,
    /// Requests the load balancer sent to each pod, in short time buckets (empty without one).
    #[serde(default)]
    pub lb: Vec<LbBucket>,
}

/// Requests a load balancer sent to one pod during `[t_s, t_s + width_s)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LbBucket {
    pub pod: String,
    pub t_s: f64,
    pub width_s: f64,
    pub requests: u64,
    /// Of those, the ones that failed (502/503/504 from the load balancer or a 5xx answer).
    pub failed: u64,
}

/// One load generator: where it ran and its report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GeneratorRun {
    pub name: String,
    pub zone: String,
    pub report: LoadReport,
}

/// The parts of a loadgen report (schema `loadgen-report/v1`) the harness reads.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LoadReport {
    pub started_at_unix_ms: u64,
    pub partial: bool,
    pub attempted: u64,
    pub responses: BTreeMap<String, u64>,
    pub transport_errors: BTreeMap<String, u64>,
    pub dropped: u64,
    pub latency_ms: LatencySummary,
    pub timeline: Vec<LoadSecond>,
    pub sse: SseSummary,
    /// Per pod, named by the response's `x-pod` header, over the generator's whole run.
    pub by_backend: BTreeMap<String, BackendReport>,
}

/// One pod's outcomes as the generator saw them (`by_backend.<pod>` of the report).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BackendReport {
    /// Status code → responses from this pod.
    pub responses: BTreeMap<String, u64>,
    /// Transport errors on keep-alive connections this pod had answered on before.
    pub transport_errors: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LatencySummary {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

/// One second of a generator's run (`t` seconds after its own start).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LoadSecond {
    pub t: u64,
    pub attempted: u64,
    pub responses: BTreeMap<String, u64>,
    pub transport_errors: BTreeMap<String, u64>,
    pub dropped: u64,
    pub by_backend: BTreeMap<String, u64>,
    pub latency_ms_p99: Option<f64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SseSummary {
    pub streams_opened: u64,
    pub streams_failed: u64,
    pub events: u64,
    /// Per pod, by the stream response's `x-pod`.
    pub by_backend: BTreeMap<String, SseBackend>,
}

/// One pod's SSE streams as the generator saw them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SseBackend {
    pub opened: u64,
    pub failed: u64,
    pub events: u64,
}

/// One pod and its sidecar's metrics sampled over time.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PodRun {
    pub name: String,
    pub node: String,
    pub zone: String,
    pub max_concurrency: u64,
    pub samples: Vec<PodSample>,
}

/// A scrape of one sidecar (counters are cumulative since the pod started).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PodSample {
    pub t_s: f64,
    /// In the Service's endpoints (ready) at this moment.
    pub ready: bool,
    pub in_flight: u64,
    pub queue_depth: u64,
    /// Requests that reached the sidecar (arrivals), cumulative.
    #[serde(default)]
    pub received: u64,
    pub admitted: u64,
    pub rejected_queue_full: u64,
    pub rejected_queue_timeout: u64,
}

/// Something the control plane (or the harness) did or saw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineEvent {
    pub t_s: f64,
    #[serde(flatten)]
    pub kind: EventKind,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "camelCase")]
pub enum EventKind {
    /// A timeline action was applied.
    Action {
        name: Option<String>,
        description: String,
    },
    /// A Kubernetes Event as the controller would record it.
    KubeEvent {
        #[serde(rename = "type")]
        kind: String,
        reason: String,
        message: String,
        object: String,
    },
    /// The EndpointSlice's hints changed: whether enabled, and pod → forZones.
    Hints {
        enabled: bool,
        for_zones: BTreeMap<String, Vec<String>>,
    },
    /// Which pods kube-proxy in `zone` would send new connections to.
    Reachability {
        zone: String,
        pods: Vec<String>,
        ready_pods: usize,
    },
    /// A pod entered or left the Service's ready endpoints.
    Endpoint { pod: String, ready: bool },
    /// A pod was created (scheduled) or deleted.
    Pod {
        pod: String,
        node: String,
        zone: String,
        created: bool,
    },
    /// A step of a pod's termination: `deleted` (it left the ready endpoints), `sigterm`,
    /// `sigkill`, `exited`.
    Termination { pod: String, stage: String },
    /// A Deployment rollout `started` or `complete`.
    Rollout { revision: u32, stage: String },
    /// One HPA sync: replicas before, the decision, and both sides' request rates.
    Autoscaler {
        current: u32,
        desired: u32,
        source_rps: f64,
        destination_rps: f64,
    },
    /// Free text from the harness (warnings, notes).
    Note { message: String },
}

impl RunData {
    /// Seconds in the run, rounded up: the length of per-second series.
    pub fn seconds(&self) -> usize {
        self.duration_s.ceil().max(0.0) as usize
    }

    /// Each generator's timeline rows with their second index on the run's clock. Rows from
    /// before the load start (a generator's warm-up) are left out.
    pub fn load_seconds(&self) -> impl Iterator<Item = (&GeneratorRun, usize, &LoadSecond)> {
        self.generators.iter().flat_map(move |g| {
            let offset_ms = g.report.started_at_unix_ms as i64 - self.load_started_unix_ms as i64;
            let offset = (offset_ms as f64 / 1000.0).round() as i64;
            g.report.timeline.iter().filter_map(move |row| {
                let second = offset + row.t as i64;
                usize::try_from(second).ok().map(|s| (g, s, row))
            })
        })
    }
}

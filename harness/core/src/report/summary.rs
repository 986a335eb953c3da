//! The `summary.json` model (schema `harness-summary/v1`): the verdict, each expectation with
//! what was observed, per-pod numbers, the traffic matrix, hint events and per-second series.
//! Documented field by field in docs/summary-schema.md; changing a field means a new version.
//! Fields added within v1 are optional (`#[serde(default)]`): a summary written by an older
//! harness still reads, and still validates against the current schema.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use super::cross_zone_summary::{CrossZoneSummary, ProxiedTraffic};

/// Version tag written into every summary.
pub const SUMMARY_SCHEMA: &str = "harness-summary/v1";

/// Overall outcome of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Fail,
}

/// Everything a CI gate or a person needs from one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(title = "harness run summary (harness-summary/v1)")]
pub struct Summary {
    pub schema: String,
    pub scenario: String,
    pub variant: Option<String>,
    pub target: String,
    pub run_id: String,
    pub seed: u64,
    /// Wall-clock start of the load phase, RFC 3339 (UTC).
    pub started_at: String,
    /// Seconds of load actually run (shorter than planned when partial).
    pub duration_s: f64,
    /// Control-plane time scale in force (1.0 = real Kubernetes timings).
    pub time_scale: f64,
    pub verdict: Verdict,
    /// True when the run was cut short (Ctrl-C, failure); numbers cover what ran.
    pub partial: bool,
    pub partial_reason: Option<String>,
    /// Sentences explaining the verdict: which expectation failed and the evidence.
    pub explanation: Vec<String>,
    pub expectations: Vec<ExpectationResult>,
    pub totals: Totals,
    pub pods: Vec<PodSummary>,
    pub skew: SkewSummary,
    /// Origin zone → pod → responses (source-side attribution via `x-pod`).
    pub traffic_matrix: BTreeMap<String, BTreeMap<String, u64>>,
    /// Origin zone → pod → bytes of those responses and their requests (and of SSE streams),
    /// the cells of `trafficMatrix` over the same window. Empty in summaries written before
    /// bytes were counted.
    #[serde(default)]
    pub traffic_bytes: BTreeMap<String, BTreeMap<String, TrafficBytes>>,
    /// The traffic matrix split by whether the answering pod was in its caller's zone, over
    /// the load window, with the estimated monthly cost of the cross-zone bytes. Null in
    /// summaries written before it was measured and for runs without generators.
    #[serde(default)]
    pub cross_zone: Option<CrossZoneSummary>,
    pub hints: HintsSummary,
    pub series: Series,
    /// Source-side outcomes no pod could be named for (no `x-pod`: timeouts and errors on
    /// connections no pod had answered on), over the generators' whole runs.
    #[serde(default)]
    pub unattributed: Option<PodSource>,
    /// How the run was started: versions and the command that repeats it.
    #[serde(default)]
    pub invocation: Option<Invocation>,
    /// Every time a pod left the ready endpoints, and what still reached it until it rejoined
    /// them or was gone.
    #[serde(default)]
    pub removals: Vec<RemovalSummary>,
    /// On a cluster target: whether the real EndpointSlice controller's hints agreed with
    /// kube-model's at each change of the Service's EndpointSlices; null on the local target.
    #[serde(default)]
    pub model_agreement: Option<ModelAgreement>,
    /// The ingress replicas (scenarios with `ingress`): requests by list position, reloads
    /// and restarts per replica, readiness flips and latency per pod.
    #[serde(default)]
    pub ingress: Option<IngressSummary>,
    /// The Kubernetes the run ran on: on kind the Nodes' kubelet versions and the node image
    /// of a cluster the harness created; on the local target the version its models were
    /// ported from. Null in summaries written before it was recorded.
    #[serde(default)]
    pub kubernetes: Option<KubernetesInfo>,
    /// The run's self-audit: every accounting invariant, its numbers, held or violated. A
    /// violated one makes the run exit 3 (the measurement is broken). Null in summaries
    /// written before the audit existed.
    #[serde(default)]
    pub audit: Option<crate::audit::Audit>,
}

/// Bytes of one cell of the traffic matrix (or of a sum of cells).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TrafficBytes {
    /// Written by the callers: their requests.
    pub sent: u64,
    /// Read by the callers: the pod's answers (and stream events).
    pub received: u64,
}

impl TrafficBytes {
    /// Both directions.
    pub fn total(&self) -> u64 {
        self.sent + self.received
    }
}

/// Which Kubernetes a run ran on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KubernetesInfo {
    /// `v1.34.11`: the Nodes' `status.nodeInfo.kubeletVersion` (the lowest when they differ);
    /// on the local target the modelled release (`v1.34`). Null when no Node reported one.
    pub version: Option<String>,
    /// `nodes` (observed from the Node objects) or `modelled` (the local target).
    pub source: String,
    /// The kind node image of the cluster the harness created for the run; null for a
    /// reused or existing cluster and on the local target.
    pub node_image: Option<String>,
    /// Every kubelet version seen → how many Nodes reported it (empty on the local target).
    pub kubelet_versions: BTreeMap<String, u32>,
}

impl KubernetesInfo {
    /// `source` of versions read from the Node objects.
    pub const OBSERVED: &str = "nodes";
    /// `source` of the local target's modelled version.
    pub const MODELLED: &str = "modelled";

    /// The local target: one modelled release, no nodes, no image.
    pub fn modelled(version: &str) -> Self {
        KubernetesInfo {
            version: Some(version.to_owned()),
            source: Self::MODELLED.to_owned(),
            node_image: None,
            kubelet_versions: BTreeMap::new(),
        }
    }

    /// `v1.34.11`, `v1.34 (modelled)` or `unknown`, for headers.
    pub fn label(&self) -> String {
        match (&self.version, self.source == Self::MODELLED) {
            (Some(v), true) => format!("{v} (modelled)"),
            (Some(v), false) => v.clone(),
            (None, _) => "unknown".to_owned(),
        }
    }
}

/// The real controller's hints against kube-model's, at every EndpointSlice change of a run
/// on a cluster: each check feeds the Nodes and EndpointSlices the watchers held at that
/// moment to the model (`kube_model::reconcile::compute_hints`) and compares the hints.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelAgreement {
    /// Changes checked.
    pub checks: u32,
    /// Of those, the ones where the model agreed.
    pub agreed: u32,
    /// Every check, in time order.
    pub changes: Vec<AgreementCheck>,
}

/// One comparison of real and modelled hints.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgreementCheck {
    /// Seconds from the load start (negative during the warm-up and deploy).
    pub t_s: f64,
    pub agreed: bool,
    /// Whether any endpoint of the real slices carries a zone hint.
    pub real_hints: bool,
    /// Whether any endpoint carries one after the model's reconcile.
    pub model_hints: bool,
    /// Zone → ready endpoints hinted for it, in the real slices.
    pub real_per_zone: BTreeMap<String, u64>,
    /// The same after the model's reconcile.
    pub model_per_zone: BTreeMap<String, u64>,
    /// Reasons of the Events the model's reconcile would record.
    pub model_events: Vec<String>,
    /// Each zone's share of allocatable CPU as the model computed it (null: no ratios).
    pub zone_cpu_ratios: Option<BTreeMap<String, f64>>,
}

/// What the ingress replicas did and how requests split by list position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IngressSummary {
    /// Requests that went to the server at each position of the rendered lists (index 0: the
    /// first), over the whole load.
    pub by_position: Vec<u64>,
    /// Spearman's ρ between position and requests (negative: the first positions get more).
    pub rank_correlation: Option<f64>,
    /// How many leading positions `firstPositionsShare` covers (a quarter of them, at least 1).
    pub first_positions: usize,
    /// The share of requests that went to those positions.
    pub first_positions_share: Option<f64>,
    pub replicas: Vec<IngressReplicaSummary>,
    pub pods: Vec<IngressPodSummary>,
    /// The modelled controller's settings the replicas ran with; null in summaries written
    /// before it was recorded.
    #[serde(default)]
    pub controller: Option<IngressControllerSummary>,
}

/// The haproxy-ingress settings that decided each replica's backend.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IngressControllerSummary {
    /// The release line (`v0.16`).
    pub version: String,
    /// HAProxy's `balance` (`roundrobin`, `random(2)`).
    pub balance: String,
    /// Whether `balance` was set by `balanceAlgorithm` (false: the version's default).
    pub balance_overridden: bool,
    /// How the server list is ordered: `templateMapKeys`, `shuffledPerReload`,
    /// `endpointsObject`, `byIp`, `byName`.
    pub order: String,
    /// Whether endpoint changes go through the runtime API into server slots (v0.16).
    pub dynamic_slots: bool,
}

/// One ingress replica over the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IngressReplicaSummary {
    /// `ingress-0`, …
    pub name: String,
    pub reloads: u64,
    pub restarts: u64,
    /// Runtime-API slot updates (v0.16).
    pub runtime_updates: u64,
    /// Each reconfiguration during the load: when, how and why.
    pub changes: Vec<IngressChangeSummary>,
}

/// One reconfiguration of a replica.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IngressChangeSummary {
    pub t_s: f64,
    /// `start`, `reload`, `restart` or `runtimeApi`.
    pub change: String,
    /// `deploy`, `endpoints`, `rewrite`, `action` or `reloadFailed`.
    pub cause: String,
    /// The servers listed afterwards, in order.
    pub servers: Vec<String>,
}

/// One pod as the ingress saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IngressPodSummary {
    pub name: String,
    /// Its mean position (1 = first) over the seconds it was listed; null: never listed.
    pub mean_position: Option<f64>,
    /// Requests it received while listed.
    pub requests: u64,
    /// When its readiness failed (it left the ready endpoints without being deleted).
    pub readiness_flips: Vec<f64>,
    /// Its callers' p90 and max latency over the whole run (ms); null without responses.
    pub latency_p90_ms: Option<f64>,
    pub latency_max_ms: Option<f64>,
}

/// A pod's stay outside the Service's ready endpoints. kube-proxy steers only new
/// connections away from it; existing ones (and a load balancer until it deregisters the pod)
/// keep reaching it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RemovalSummary {
    pub pod: String,
    /// `notReady` (its probe or its node) or `deleted`.
    pub cause: String,
    /// When it left the endpoints.
    pub from_s: f64,
    /// When it rejoined them or was gone; null: still out at the end.
    pub to_s: Option<f64>,
    /// Requests that reached it in between.
    pub reached: u64,
    /// `sidecar` (arrivals at its sidecar) or `responses` (answers attributed to it by `x-pod`).
    pub counted_at: String,
    /// Connections kube-proxy still held open to it when it left; null where unknown.
    pub open_connections: Option<u64>,
    /// What the load balancer sent it meanwhile (answered or not); null without one.
    #[serde(default)]
    pub load_balancer_sent: Option<u64>,
    /// Of those, the failed ones (a pod that no longer accepts fails them without seeing them).
    #[serde(default)]
    pub load_balancer_failed: Option<u64>,
}

/// How a run was started.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Invocation {
    /// Version of the harness that ran it.
    pub harness_version: String,
    /// The scenario file as given on the command line.
    pub scenario_file: String,
    /// A command line that repeats the run (same file, variant, target, seed, time scale).
    pub command: String,
    /// Workload binary → its `--version` line.
    #[serde(default)]
    pub workloads: BTreeMap<String, String>,
}

/// One expectation and how it fared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExpectationResult {
    pub name: String,
    pub metric: String,
    /// The window as written in the scenario, and resolved to seconds from load start.
    pub window: WindowSummary,
    /// The measured value; null when nothing could be measured in the window.
    pub observed: Option<f64>,
    pub threshold: Threshold,
    /// Held. Never true for an incomplete expectation.
    pub passed: bool,
    /// What was seen, in words (e.g. "pod-3, pod-4 starved").
    pub evidence: String,
    /// Set when the run stopped before the window's end (interrupted or failed): why the
    /// expectation could not be evaluated. Such an expectation neither held nor failed; it is
    /// an error in JUnit and never counts as held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
    /// `originZone` as the scenario states it: only the callers in this zone were measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin_zone: Option<String>,
    /// `destinationZone`: only the answers of pods in this zone were measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destination_zone: Option<String>,
}

impl ExpectationResult {
    /// Held, failed or not evaluated, in one word for reports.
    pub fn outcome(&self) -> &'static str {
        match (self.incomplete.is_some(), self.passed) {
            (true, _) => "not completed",
            (false, true) => "held",
            (false, false) => "failed",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WindowSummary {
    pub text: String,
    pub from_s: f64,
    pub to_s: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Threshold {
    pub min: Option<f64>,
    pub max: Option<f64>,
}

/// Request outcomes of the measured load (warm-up excluded), summed over generators.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    pub attempted: u64,
    /// Status code → count.
    pub responses: BTreeMap<String, u64>,
    /// Transport error kind (connect_refused, reset, timeout, other) → count.
    pub transport_errors: BTreeMap<String, u64>,
    pub dropped: u64,
    pub error_rate: f64,
    /// *Added*: the largest generator p50 (absent from summaries written before it).
    #[serde(default)]
    pub latency_p50_ms: Option<f64>,
    pub latency_p99_ms: Option<f64>,
    pub sse_events: u64,
    pub sse_streams_failed: u64,
}

/// One pod's share of the work and its saturation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodSummary {
    pub name: String,
    pub node: String,
    pub zone: String,
    /// Responses attributed to this pod by the load generators.
    pub requests: u64,
    /// requests ÷ all requests.
    pub share: f64,
    pub starved: bool,
    /// Requests the pod's sidecar admitted (destination side), over the pod's whole life:
    /// the warm-up included, unlike `requests`.
    pub admitted: u64,
    /// Sidecar rejections by reason (queue_full, queue_timeout), over the pod's whole life.
    pub rejected: BTreeMap<String, u64>,
    pub max_in_flight: u64,
    pub max_queue_depth: u64,
    pub max_concurrency: u64,
    /// The pod's sidecar over the pod's whole life (warm-up and drain included); null without
    /// a sidecar.
    #[serde(default)]
    pub destination: Option<PodDestination>,
    /// What the load generators got back from this pod over their whole runs.
    #[serde(default)]
    pub source: Option<PodSource>,
    /// What the load balancer sent this pod over the whole run; null without one.
    #[serde(default)]
    pub load_balancer: Option<PodLoadBalancer>,
}

/// One pod as the load balancer saw it: requests it sent the pod, and the failed ones (its own
/// 502/503/504 for the pod, or a 5xx the pod answered).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodLoadBalancer {
    pub sent: u64,
    pub failed: u64,
}

/// The destination side of one pod: its sidecar's counters at the end of the run.
/// `arrived = admitted + Σ rejected + queuedAtEnd + abandoned`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodDestination {
    /// Requests that reached the sidecar (SSE stream requests included).
    pub arrived: u64,
    /// Requests that got a concurrency slot.
    pub admitted: u64,
    /// Rejections by reason (queue_full, queue_timeout), answered 503.
    pub rejected: BTreeMap<String, u64>,
    /// Still waiting in the admission queue at the last sample.
    pub queued_at_end: u64,
    /// Left the queue because their caller gave up (timed out or disconnected) before a slot.
    pub abandoned: u64,
}

/// The source side of one pod: responses attributed to it by `x-pod`, transport errors on
/// connections it had answered on, and SSE streams it served.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodSource {
    /// Status code → responses.
    pub responses: BTreeMap<String, u64>,
    /// Transport error kind → count.
    pub transport_errors: BTreeMap<String, u64>,
    pub streams_opened: u64,
    pub streams_failed: u64,
}

impl PodSource {
    /// Every response, any status.
    pub fn answered(&self) -> u64 {
        self.responses.values().sum()
    }

    /// Responses that are not 2xx.
    pub fn non_2xx(&self) -> u64 {
        self.responses
            .iter()
            .filter(|(code, _)| !code.starts_with('2'))
            .map(|(_, n)| n)
            .sum()
    }

    pub fn transport(&self) -> u64 {
        self.transport_errors.values().sum()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkewSummary {
    /// Busiest pod's requests ÷ mean requests per pod.
    pub max_mean: Option<f64>,
    /// Coefficient of variation of requests per pod.
    pub cv: Option<f64>,
    /// Pods below 10% of a fair share.
    pub starved: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HintsSummary {
    /// TopologyAwareHintsEnabled / Disabled events with their time.
    pub events: Vec<HintEventSummary>,
    /// Number of times hints switched between enabled and disabled.
    pub flaps: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HintEventSummary {
    pub t_s: f64,
    #[serde(rename = "type")]
    pub kind: String,
    pub reason: String,
    pub message: String,
}

/// Per-second series behind the report's charts (second i covers [i, i+1) from load start).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Series {
    /// Pod → responses per second.
    pub requests_per_pod: BTreeMap<String, Vec<u64>>,
    /// Errors ÷ attempts per second (0 when nothing was attempted).
    pub error_rate: Vec<f64>,
    pub attempted: Vec<u64>,
    /// Timeline actions: (second, label), drawn as markers.
    pub markers: Vec<Marker>,
    /// Whether hints were on during each second.
    pub hints_enabled: Vec<bool>,
    /// Requests the sidecars admitted per second, all pods together (the destination side;
    /// `attempted` is the source side).
    #[serde(default)]
    pub destination_rps: Vec<f64>,
    /// Pods not terminating, at the end of each second.
    #[serde(default)]
    pub replicas: Vec<u32>,
    /// Pod → requests that reached its sidecar per second (the destination side).
    #[serde(default)]
    pub arrivals_per_pod: BTreeMap<String, Vec<u64>>,
    /// Pod → highest in-flight count sampled in each second (null: no sample that second).
    #[serde(default)]
    pub in_flight_per_pod: BTreeMap<String, Vec<Option<u64>>>,
    /// Pod → longest admission queue sampled in each second (null: no sample that second).
    #[serde(default)]
    pub queue_per_pod: BTreeMap<String, Vec<Option<u64>>>,
    /// Error kind (a non-2xx status code, or a transport error kind) → count per second.
    #[serde(default)]
    pub errors_by_kind: BTreeMap<String, Vec<u64>>,
    /// Pod → the zones its endpoint is hinted for at the end of each second, comma separated
    /// (null: no hint).
    #[serde(default)]
    pub hints_per_pod: BTreeMap<String, Vec<Option<String>>>,
    /// Each pod's termination and what the load balancer sent it meanwhile.
    #[serde(default)]
    pub terminations: Vec<TerminationWindow>,
    /// Pod → requests the load balancer sent it that failed, per second.
    #[serde(default)]
    pub lb_failed_per_pod: BTreeMap<String, Vec<u64>>,
}

/// A pod's termination: from its deletion (endpoint removed) to its exit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TerminationWindow {
    pub pod: String,
    /// Deleted: left the ready endpoints and its termination began.
    pub from_s: f64,
    /// SIGTERM reached the app (after any preStop hook); null if it never did.
    pub sigterm_s: Option<f64>,
    /// The pod's processes exited; null when still running at the end.
    pub to_s: Option<f64>,
    /// Requests the load balancer sent the pod after its deletion (null without one), and the
    /// failed ones among them.
    pub requests: Option<u64>,
    pub failed: Option<u64>,
    /// When the load balancer last sent the pod a request after its deletion (the end of that
    /// accounting bucket): the deregistration lag made visible. Null without one, or when it
    /// sent nothing after the deletion.
    #[serde(default)]
    pub lb_last_sent_s: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Marker {
    pub t_s: f64,
    pub label: String,
}

/// The JSON Schema of `summary.json` (draft 2020-12), generated from these types.
pub fn summary_json_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(Summary)).unwrap_or_default()
}

//! The `summary.json` model (schema `harness-summary/v1`): the verdict, each expectation with
//! what was observed, per-pod numbers, the traffic matrix, hint events and per-second series.
//! Documented field by field in docs/summary-schema.md; changing a field means a new version.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
    pub hints: HintsSummary,
    pub series: Series,
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
    pub passed: bool,
    /// What was seen, in words (e.g. "pod-3, pod-4 starved").
    pub evidence: String,
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
    /// Requests the pod's sidecar admitted (destination side).
    pub admitted: u64,
    /// Sidecar rejections by reason (queue_full, queue_timeout).
    pub rejected: BTreeMap<String, u64>,
    pub max_in_flight: u64,
    pub max_queue_depth: u64,
    pub max_concurrency: u64,
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

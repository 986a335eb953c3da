//! The JSON report (`loadgen-report/v1`, documented field by field in `REPORT.md`), the
//! histogram codec (HdrHistogram V2 + DEFLATE, base64) and the invariants every report keeps.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::{Counter, Histogram};
use serde::{Deserialize, Serialize};

use crate::config::{ConnectionModel, Origin};
use crate::recorder::ErrorKind;

/// The value of [`Report::schema`].
pub const SCHEMA: &str = "loadgen-report/v1";

/// Result of one run (or of several merged with [`crate::merge_reports`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema: String,
    pub started_at_unix_ms: u64,
    /// Seconds from the start until issuing stopped (the duration, or the stop signal).
    pub duration_s: f64,
    /// Seconds spent afterwards waiting for outstanding requests.
    pub drain_s: f64,
    /// True when a stop signal ended the run before its duration.
    pub partial: bool,
    /// Number of generator runs merged into this report (1 for a single run).
    pub sources: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<ReportConfig>,
    /// Requests sent: exactly `sum(responses) + sum(transport_errors)`.
    pub attempted: u64,
    /// HTTP responses by status code.
    pub responses: BTreeMap<String, u64>,
    /// Requests without a response, by kind (all four kinds always present).
    pub transport_errors: BTreeMap<String, u64>,
    /// Scheduled requests never sent; not part of `attempted`.
    pub dropped: u64,
    /// (responses + transport errors) / `duration_s`.
    pub achieved_rps: f64,
    pub latency_ms: LatencySummary,
    /// How late requests were sent after their intended time (waiting for a free connection,
    /// timer resolution). Merged reports carry the maximum of each field over the sources.
    pub send_delay_ms: SendDelay,
    /// All response latencies (µs), HdrHistogram V2 + DEFLATE, base64.
    pub histogram: String,
    pub by_backend: BTreeMap<String, BackendReport>,
    pub timeline: Vec<TimelineRow>,
    pub sse: SseReport,
}

/// The settings a run used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportConfig {
    pub url: String,
    pub rate: String,
    pub duration_s: f64,
    pub connections: usize,
    pub connection_model: ConnectionModel,
    pub max_in_flight: u64,
    pub timeout_ms: u64,
    pub sse_streams: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sse_url: Option<String>,
    pub seed: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
}

/// Latency of responses (any status) in milliseconds, measured from the intended send time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub samples: u64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    pub mean: f64,
}

/// Generator-side delay before sending, in milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SendDelay {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

impl SendDelay {
    pub fn from_histogram<T: Counter>(h: &Histogram<T>) -> Self {
        if h.is_empty() {
            return Self::default();
        }
        Self {
            p50: ms(h.value_at_quantile(0.5)),
            p99: ms(h.value_at_quantile(0.99)),
            max: ms(h.max()),
        }
    }
}

/// One pod, as named by the responses' `x-pod` header.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BackendReport {
    /// Responses from this pod (sums to the report's responses over all backends).
    pub requests: u64,
    pub responses: BTreeMap<String, u64>,
    /// Transport errors on keep-alive connections this pod had answered on before.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub transport_errors: BTreeMap<String, u64>,
    pub latency_ms: BackendLatency,
    pub histogram: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BackendLatency {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

/// Requests whose intended send time fell in second `t` (from the start) and what became of them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TimelineRow {
    pub t: u64,
    pub attempted: u64,
    pub responses: BTreeMap<String, u64>,
    pub transport_errors: BTreeMap<String, u64>,
    pub dropped: u64,
    /// Responses per pod.
    pub by_backend: BTreeMap<String, u64>,
    /// `null` when the second has no responses.
    pub latency_ms_p99: Option<f64>,
    /// This second's latencies (2 significant digits), for merging.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<String>,
}

/// Server-sent-event streams.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SseReport {
    /// Streams held open (`--sse-streams`).
    pub streams: u64,
    /// Stream requests answered with 2xx.
    pub streams_opened: u64,
    /// Stream attempts that failed to open or ended before the run did.
    pub streams_failed: u64,
    /// Stream attempts after each slot's first.
    pub reconnects: u64,
    pub events: u64,
    /// `streams_failed` by reason: `ended`, `status_<code>`, or a transport error kind.
    pub failures: BTreeMap<String, u64>,
    pub by_backend: BTreeMap<String, SseBackend>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SseBackend {
    pub opened: u64,
    pub failed: u64,
    pub events: u64,
}

/// Encodes a histogram as base64 of its V2 + DEFLATE serialization.
pub fn encode_histogram<T: Counter>(h: &Histogram<T>) -> String {
    let mut buf = Vec::new();
    match V2DeflateSerializer::new().serialize(h, &mut buf) {
        Ok(_) => STANDARD.encode(buf),
        Err(e) => {
            tracing::warn!("cannot serialize histogram: {e:?}");
            String::new()
        }
    }
}

/// Decodes what [`encode_histogram`] produced (V2 with or without DEFLATE).
pub fn decode_histogram(text: &str) -> Result<Histogram<u64>, String> {
    let bytes = STANDARD
        .decode(text.trim())
        .map_err(|e| format!("histogram is not base64: {e}"))?;
    Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| format!("histogram does not decode: {e:?}"))
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

impl LatencySummary {
    pub fn from_histogram<T: Counter>(h: &Histogram<T>) -> Self {
        if h.is_empty() {
            return Self::default();
        }
        Self {
            samples: h.len(),
            p50: ms(h.value_at_quantile(0.5)),
            p90: ms(h.value_at_quantile(0.9)),
            p99: ms(h.value_at_quantile(0.99)),
            p999: ms(h.value_at_quantile(0.999)),
            max: ms(h.max()),
            mean: h.mean() / 1000.0,
        }
    }
}

impl BackendLatency {
    pub fn from_histogram<T: Counter>(h: &Histogram<T>) -> Self {
        if h.is_empty() {
            return Self::default();
        }
        Self {
            p50: ms(h.value_at_quantile(0.5)),
            p99: ms(h.value_at_quantile(0.99)),
            max: ms(h.max()),
        }
    }
}

/// `latency_ms_p99` of a timeline row.
pub(crate) fn row_p99<T: Counter>(h: &Histogram<T>) -> Option<f64> {
    (!h.is_empty()).then(|| ms(h.value_at_quantile(0.99)))
}

/// A transport-error map with all four kinds present.
pub(crate) fn error_map(counts: &[u64; 4]) -> BTreeMap<String, u64> {
    ErrorKind::ALL
        .iter()
        .map(|k| (k.as_str().to_string(), counts[*k as usize]))
        .collect()
}

impl Report {
    /// A report with nothing in it (what merging no reports gives).
    pub fn empty() -> Self {
        Self {
            schema: SCHEMA.to_string(),
            started_at_unix_ms: 0,
            duration_s: 0.0,
            drain_s: 0.0,
            partial: false,
            sources: 0,
            config: None,
            attempted: 0,
            responses: BTreeMap::new(),
            transport_errors: error_map(&[0; 4]),
            dropped: 0,
            achieved_rps: 0.0,
            latency_ms: LatencySummary::default(),
            send_delay_ms: SendDelay::default(),
            histogram: encode_histogram(&crate::recorder::run_histogram()),
            by_backend: BTreeMap::new(),
            timeline: Vec::new(),
            sse: SseReport::default(),
        }
    }

    /// Sum of all responses.
    pub fn total_responses(&self) -> u64 {
        self.responses.values().sum()
    }

    /// Sum of all transport errors.
    pub fn total_transport_errors(&self) -> u64 {
        self.transport_errors.values().sum()
    }

    /// Checks the counting invariants: `attempted = responses + transport errors`, the timeline
    /// and the backends sum to the totals, and the histogram holds one sample per response.
    pub fn check_invariants(&self) -> Result<(), String> {
        let (responses, errors) = (self.total_responses(), self.total_transport_errors());
        if self.attempted != responses + errors {
            return Err(format!(
                "attempted {} != responses {responses} + transport errors {errors}",
                self.attempted
            ));
        }
        let mut row_codes: BTreeMap<String, u64> = BTreeMap::new();
        let mut row_errors: BTreeMap<String, u64> = BTreeMap::new();
        let (mut attempted, mut dropped) = (0, 0);
        for row in &self.timeline {
            let in_row = row.responses.values().sum::<u64>();
            let row_err = row.transport_errors.values().sum::<u64>();
            if row.attempted != in_row + row_err {
                return Err(format!("timeline t={}: attempted != outcomes", row.t));
            }
            if row.by_backend.values().sum::<u64>() != in_row {
                return Err(format!("timeline t={}: by_backend != responses", row.t));
            }
            attempted += row.attempted;
            dropped += row.dropped;
            for (k, v) in &row.responses {
                *row_codes.entry(k.clone()).or_default() += v;
            }
            for (k, v) in row.transport_errors.iter().filter(|(_, v)| **v > 0) {
                *row_errors.entry(k.clone()).or_default() += v;
            }
        }
        let nonzero = |m: &BTreeMap<String, u64>| -> BTreeMap<String, u64> {
            m.iter()
                .filter(|(_, v)| **v > 0)
                .map(|(k, v)| (k.clone(), *v))
                .collect()
        };
        if attempted != self.attempted || dropped != self.dropped {
            return Err(format!(
                "timeline sums attempted {attempted} dropped {dropped} != totals {} {}",
                self.attempted, self.dropped
            ));
        }
        if nonzero(&row_codes) != nonzero(&self.responses)
            || row_errors != nonzero(&self.transport_errors)
        {
            return Err("timeline responses/errors do not sum to the totals".into());
        }
        let backend_requests: u64 = self.by_backend.values().map(|b| b.requests).sum();
        if backend_requests != responses {
            return Err(format!(
                "by_backend requests {backend_requests} != responses {responses}"
            ));
        }
        if let Some((pod, _)) = self
            .by_backend
            .iter()
            .find(|(_, b)| b.requests != b.responses.values().sum::<u64>())
        {
            return Err(format!("by_backend {pod}: requests != its responses"));
        }
        let samples = decode_histogram(&self.histogram)?.len();
        if samples != responses {
            return Err(format!(
                "histogram has {samples} samples, responses {responses}"
            ));
        }
        Ok(())
    }
}

//! The loadgen report (`loadgen-report/v1`, documented field by field in
//! `workloads/loadgen/REPORT.md`): the one type loadgen writes and the harness reads. loadgen
//! adds the histogram codec and the invariant checks (`loadgen::report`); the harness reads a
//! report with [`Report::from_json`].

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// The value of [`Report::schema`].
pub const SCHEMA: &str = "loadgen-report/v1";

/// Result of one run (or of several merged with loadgen's `merge_reports`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    /// Bytes of requests that got no attributed answer (transport errors, timeouts, SSE
    /// streams that failed before a response head): what was written for them and whatever
    /// was read before they failed. Absent from reports written before it was counted (read
    /// as 0).
    #[serde(default)]
    pub unattributed_bytes: ByteCounts,
}

/// Bytes on the wire at the HTTP layer (request and response heads and bodies, chunk framing
/// included; TCP/IP headers and TLS are not).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ByteCounts {
    /// Written by the generator (requests).
    pub sent: u64,
    /// Read by the generator (responses, stream events).
    pub received: u64,
}

impl ByteCounts {
    pub const ZERO: ByteCounts = ByteCounts {
        sent: 0,
        received: 0,
    };

    /// Both directions together.
    pub fn total(self) -> u64 {
        self.sent + self.received
    }

    pub fn is_zero(&self) -> bool {
        self.sent == 0 && self.received == 0
    }
}

impl std::ops::Add for ByteCounts {
    type Output = ByteCounts;

    fn add(self, o: ByteCounts) -> ByteCounts {
        ByteCounts {
            sent: self.sent + o.sent,
            received: self.received + o.received,
        }
    }
}

impl std::ops::AddAssign for ByteCounts {
    fn add_assign(&mut self, o: ByteCounts) {
        self.sent += o.sent;
        self.received += o.received;
    }
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
    /// Request bytes written for the requests this pod answered (heads; the generator sends
    /// no bodies). SSE streams are counted in [`SseBackend`]. Absent from reports written
    /// before bytes were counted (read as 0).
    #[serde(default)]
    pub bytes_sent: u64,
    /// Response bytes read from this pod's answers, head and body.
    #[serde(default)]
    pub bytes_received: u64,
}

impl BackendReport {
    /// [`BackendReport::bytes_sent`] and [`BackendReport::bytes_received`] together.
    pub fn bytes(&self) -> ByteCounts {
        ByteCounts {
            sent: self.bytes_sent,
            received: self.bytes_received,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BackendLatency {
    pub p50: f64,
    /// Absent from reports written before it was added (read as 0).
    #[serde(default)]
    pub p90: f64,
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
    /// Non-2xx responses per pod (pods with none left out). Absent from reports written
    /// before it was counted.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub non_2xx_by_backend: BTreeMap<String, u64>,
    /// Bytes exchanged with each pod: those of the requests intended in this second and of
    /// their answers, plus the SSE stream bytes that crossed the wire during this second.
    /// Unattributed bytes are only in the report's total. Absent from reports written before
    /// bytes were counted.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub bytes_by_backend: BTreeMap<String, ByteCounts>,
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
    /// Bytes written on this pod's streams (the stream requests). Absent from reports
    /// written before bytes were counted (read as 0).
    #[serde(default)]
    pub bytes_sent: u64,
    /// Bytes read on this pod's streams: response heads, events and chunk framing.
    #[serde(default)]
    pub bytes_received: u64,
}

impl SseBackend {
    /// [`SseBackend::bytes_sent`] and [`SseBackend::bytes_received`] together.
    pub fn bytes(&self) -> ByteCounts {
        ByteCounts {
            sent: self.bytes_sent,
            received: self.bytes_received,
        }
    }
}

impl Report {
    /// Reads a report as loadgen writes it (`--output json`, `--output-file`).
    pub fn from_json(text: &str) -> Result<Report, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// Sum of all responses.
    pub fn total_responses(&self) -> u64 {
        self.responses.values().sum()
    }

    /// Sum of all transport errors.
    pub fn total_transport_errors(&self) -> u64 {
        self.transport_errors.values().sum()
    }

    /// Bytes exchanged with `pod` over the whole run: its answers' and its SSE streams'.
    pub fn bytes_of(&self, pod: &str) -> ByteCounts {
        let requests = self
            .by_backend
            .get(pod)
            .map_or(ByteCounts::ZERO, BackendReport::bytes);
        let streams = self
            .sse
            .by_backend
            .get(pod)
            .map_or(ByteCounts::ZERO, SseBackend::bytes);
        requests + streams
    }

    /// Every byte of the run: attributed to a pod (answers and streams) and unattributed.
    pub fn total_bytes(&self) -> ByteCounts {
        let answers = self
            .by_backend
            .values()
            .fold(ByteCounts::ZERO, |acc, b| acc + b.bytes());
        let streams = self
            .sse
            .by_backend
            .values()
            .fold(ByteCounts::ZERO, |acc, b| acc + b.bytes());
        answers + streams + self.unattributed_bytes
    }
}

/// How requests map onto TCP connections (kube-proxy picks a backend per connection, so this
/// decides the per-pod distribution).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum ConnectionModel {
    /// N connections opened at the start and reused (reopened when the server closes one).
    KeepAlive,
    /// A new TCP connection per request (`connection: close`), at most N at once.
    PerRequest,
}

impl fmt::Display for ConnectionModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::KeepAlive => "keep-alive",
            Self::PerRequest => "per-request",
        })
    }
}

/// Who runs this generator (recorded in the report for the traffic matrix).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    pub pod: String,
    pub node: String,
    pub zone: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report written before bytes were counted (a fuzzing seed kept as loadgen wrote it)
    /// still reads, every byte count 0.
    #[test]
    fn reports_written_before_bytes_were_counted_read_as_zero_bytes() {
        let old = include_str!("../../../../fuzz/seeds/loadgen_report/flagsvc-1s.json");
        assert!(!old.contains("bytes"));
        let report = Report::from_json(old).unwrap();
        assert!(report.total_responses() > 0);
        assert_eq!(report.total_bytes(), ByteCounts::ZERO);
        assert!(report.by_backend.values().all(|b| b.bytes().is_zero()));
        assert!(
            report
                .timeline
                .iter()
                .all(|r| r.bytes_by_backend.is_empty())
        );
    }

    #[test]
    fn bytes_of_a_pod_are_its_answers_and_its_streams() {
        let mut report = Report::default();
        report.by_backend.insert(
            "pod-a".into(),
            BackendReport {
                bytes_sent: 100,
                bytes_received: 1_000,
                ..BackendReport::default()
            },
        );
        report.sse.by_backend.insert(
            "pod-a".into(),
            SseBackend {
                bytes_sent: 80,
                bytes_received: 5_000,
                ..SseBackend::default()
            },
        );
        report.unattributed_bytes = ByteCounts {
            sent: 7,
            received: 0,
        };
        assert_eq!(
            report.bytes_of("pod-a"),
            ByteCounts {
                sent: 180,
                received: 6_000
            }
        );
        assert_eq!(report.bytes_of("pod-b"), ByteCounts::ZERO);
        assert_eq!(report.total_bytes().total(), 6_187);
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["by_backend"]["pod-a"]["bytes_sent"], 100);
        assert_eq!(json["unattributed_bytes"]["sent"], 7);
    }
}

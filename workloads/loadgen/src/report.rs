//! The JSON report (`loadgen-report/v1`, documented field by field in `REPORT.md`). The types
//! live in `workload_contract::loadgen::report`, the one definition the harness reads too;
//! this module adds what needs the histograms: the codec (HdrHistogram V2 + DEFLATE, base64),
//! summaries from histograms ([`FromHistogram`]), the empty report and the counting invariants
//! every report keeps ([`ReportExt`]).

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::{Counter, Histogram};

pub use workload_contract::loadgen::report::*;

use crate::error_kind::ErrorKind;

/// A summary computed from a latency histogram (µs).
pub trait FromHistogram {
    fn from_histogram<T: Counter>(h: &Histogram<T>) -> Self;
}

/// Report operations that need the histogram codec.
pub trait ReportExt {
    /// A report with nothing in it (what merging no reports gives).
    fn empty() -> Self;
    /// Checks the counting invariants: `attempted = responses + transport errors`, the
    /// timeline and the backends sum to the totals (responses, non-2xx responses and bytes
    /// per pod), and the histogram holds one sample per response.
    fn check_invariants(&self) -> Result<(), String>;
}

impl FromHistogram for SendDelay {
    fn from_histogram<T: Counter>(h: &Histogram<T>) -> Self {
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

impl FromHistogram for LatencySummary {
    fn from_histogram<T: Counter>(h: &Histogram<T>) -> Self {
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

impl FromHistogram for BackendLatency {
    fn from_histogram<T: Counter>(h: &Histogram<T>) -> Self {
        if h.is_empty() {
            return Self::default();
        }
        Self {
            p50: ms(h.value_at_quantile(0.5)),
            p90: ms(h.value_at_quantile(0.9)),
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

impl ReportExt for Report {
    fn empty() -> Self {
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
            unattributed_bytes: ByteCounts::ZERO,
        }
    }

    fn check_invariants(&self) -> Result<(), String> {
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
        check_backend_rows(self)?;
        let samples = decode_histogram(&self.histogram)?.len();
        if samples != responses {
            return Err(format!(
                "histogram has {samples} samples, responses {responses}"
            ));
        }
        Ok(())
    }
}

/// The per-pod columns of the timeline against the per-pod totals: each pod's bytes over the
/// rows are its answers' and its streams' bytes, and its non-2xx responses over the rows are
/// those of its totals (when the rows count them: reports written before did not).
fn check_backend_rows(report: &Report) -> Result<(), String> {
    let mut row_bytes: BTreeMap<&str, ByteCounts> = BTreeMap::new();
    let mut row_non_2xx: BTreeMap<&str, u64> = BTreeMap::new();
    for row in &report.timeline {
        for (pod, b) in &row.bytes_by_backend {
            *row_bytes.entry(pod).or_default() += *b;
        }
        for (pod, n) in &row.non_2xx_by_backend {
            *row_non_2xx.entry(pod).or_default() += n;
        }
    }
    let pods: std::collections::BTreeSet<&str> = row_bytes
        .keys()
        .copied()
        .chain(report.by_backend.keys().map(String::as_str))
        .chain(report.sse.by_backend.keys().map(String::as_str))
        .collect();
    for pod in pods {
        let rows = row_bytes.get(pod).copied().unwrap_or_default();
        let totals = report.bytes_of(pod);
        if rows != totals {
            return Err(format!(
                "{pod}: bytes over the timeline {rows:?} != its answers' and streams' {totals:?}"
            ));
        }
    }
    if row_non_2xx.is_empty() {
        return Ok(());
    }
    for (pod, b) in &report.by_backend {
        let totals: u64 = b
            .responses
            .iter()
            .filter(|(code, _)| !code.starts_with('2'))
            .map(|(_, n)| n)
            .sum();
        let rows = row_non_2xx.get(pod.as_str()).copied().unwrap_or(0);
        if rows != totals {
            return Err(format!(
                "{pod}: non-2xx responses over the timeline {rows} != its totals {totals}"
            ));
        }
    }
    Ok(())
}

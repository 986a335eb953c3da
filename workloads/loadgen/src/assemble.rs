//! Turns the counts of a finished run ([`Acc`]) into a [`Report`].

use std::collections::BTreeMap;
use std::time::Duration;

use crate::config::RunConfig;
use crate::recorder::{Acc, StatusCounts};
use crate::report::{
    BackendLatency, BackendReport, FromHistogram, LatencySummary, Report, ReportConfig, SCHEMA,
    SendDelay, SseReport, TimelineRow, encode_histogram, error_map, row_p99,
};

/// Facts about a run that the counts do not carry.
pub(crate) struct RunMeta {
    pub started_at_unix_ms: u64,
    pub duration: Duration,
    pub drain: Duration,
    pub partial: bool,
}

pub(crate) fn status_map(counts: &StatusCounts) -> BTreeMap<String, u64> {
    counts.0.iter().map(|(c, n)| (c.to_string(), *n)).collect()
}

pub(crate) fn report_config(config: &RunConfig) -> ReportConfig {
    ReportConfig {
        url: config.url.to_string(),
        rate: config.rate.to_string(),
        duration_s: config.duration.as_secs_f64(),
        connections: config.connections,
        connection_model: config.connection_model,
        max_in_flight: config.max_in_flight,
        timeout_ms: u64::try_from(config.timeout.as_millis()).unwrap_or(u64::MAX),
        sse_streams: config.sse_streams,
        sse_url: (config.sse_streams > 0).then(|| config.effective_sse_url().to_string()),
        seed: config.seed,
        origin: config.origin.clone(),
    }
}

/// Outcomes per second of `duration`.
pub(crate) fn rate(outcomes: u64, duration_s: f64) -> f64 {
    if duration_s > 0.0 {
        outcomes as f64 / duration_s
    } else {
        0.0
    }
}

/// The non-zero entries of a per-backend vector, by backend name.
fn named<T: Copy>(values: &[T], names: &[&str], keep: impl Fn(&T) -> bool) -> BTreeMap<String, T> {
    values
        .iter()
        .enumerate()
        .filter(|(_, v)| keep(v))
        .map(|(b, v)| (names[b].to_string(), *v))
        .collect()
}

pub(crate) fn assemble(
    acc: Acc,
    mut sse: SseReport,
    meta: RunMeta,
    config: ReportConfig,
) -> Report {
    let duration_s = meta.duration.as_secs_f64();
    let responses = acc.totals.responses.total();
    let errors: u64 = acc.totals.errors.iter().sum();
    let names: Vec<&str> = acc.backends.iter().map(|b| b.name.as_str()).collect();
    let rows = acc
        .seconds
        .len()
        .max(meta.duration.as_secs_f64().ceil() as usize);
    let timeline = (0..rows)
        .map(|t| match acc.seconds.get(t) {
            Some(sec) => TimelineRow {
                t: t as u64,
                attempted: sec.counts.attempted,
                responses: status_map(&sec.counts.responses),
                transport_errors: error_map(&sec.counts.errors),
                dropped: sec.counts.dropped,
                by_backend: named(&sec.by_backend, &names, |n| *n > 0),
                latency_ms_p99: row_p99(&sec.latency),
                histogram: (!sec.latency.is_empty()).then(|| encode_histogram(&sec.latency)),
                non_2xx_by_backend: named(&sec.non_2xx_by_backend, &names, |n| *n > 0),
                bytes_by_backend: named(&sec.bytes_by_backend, &names, |b| !b.is_zero()),
            },
            None => TimelineRow {
                t: t as u64,
                transport_errors: error_map(&[0; 4]),
                ..TimelineRow::default()
            },
        })
        .collect();
    for b in acc.backends.iter().filter(|b| !b.stream_bytes.is_zero()) {
        let e = sse.by_backend.entry(b.name.clone()).or_default();
        e.bytes_sent += b.stream_bytes.sent;
        e.bytes_received += b.stream_bytes.received;
    }
    let by_backend = acc
        .backends
        .iter()
        .filter(|b| b.had_requests())
        .map(|b| {
            let report = BackendReport {
                requests: b.responses.total(),
                responses: status_map(&b.responses),
                transport_errors: error_map(&b.errors)
                    .into_iter()
                    .filter(|(_, n)| *n > 0)
                    .collect(),
                latency_ms: BackendLatency::from_histogram(&b.latency),
                histogram: encode_histogram(&b.latency),
                bytes_sent: b.bytes.sent,
                bytes_received: b.bytes.received,
            };
            (b.name.clone(), report)
        })
        .collect();
    Report {
        schema: SCHEMA.to_string(),
        started_at_unix_ms: meta.started_at_unix_ms,
        duration_s,
        drain_s: meta.drain.as_secs_f64(),
        partial: meta.partial,
        sources: 1,
        config: Some(config),
        attempted: acc.totals.attempted,
        responses: status_map(&acc.totals.responses),
        transport_errors: error_map(&acc.totals.errors),
        dropped: acc.totals.dropped,
        achieved_rps: rate(responses + errors, duration_s),
        latency_ms: LatencySummary::from_histogram(&acc.latency),
        send_delay_ms: SendDelay::from_histogram(&acc.send_delay),
        histogram: encode_histogram(&acc.latency),
        by_backend,
        timeline,
        sse,
        unattributed_bytes: acc.unattributed_bytes,
    }
}

//! Merging the reports of several generators (one per zone) into one: counts add up, histograms
//! are added (so percentiles of the merged report are exact, not averaged), timelines are aligned
//! on wall-clock seconds using each report's `started_at_unix_ms`.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use crate::assemble::rate;
use crate::error::LoadgenError;
use crate::recorder::run_histogram;
use crate::report::{
    BackendLatency, BackendReport, FromHistogram, LatencySummary, Report, ReportExt, SseReport,
    TimelineRow, decode_histogram, encode_histogram, error_map, row_p99,
};

fn add_map(into: &mut BTreeMap<String, u64>, from: &BTreeMap<String, u64>) {
    for (k, v) in from {
        *into.entry(k.clone()).or_default() += v;
    }
}

/// Adds `text` (an encoded histogram) into `into`; a bad histogram is reported to `bad`.
fn add_histogram(into: &mut Option<Histogram<u64>>, text: &str, bad: &mut dyn FnMut(String)) {
    let mut h = match decode_histogram(text) {
        Ok(h) => h,
        Err(e) => return bad(e),
    };
    // Decoded histograms keep the range they were written with; let the sum grow past it.
    h.auto(true);
    match into {
        None => *into = Some(h),
        Some(acc) => {
            if let Err(e) = acc.add(&h) {
                bad(format!("histograms do not add: {e:?}"));
            }
        }
    }
}

fn merge_sse(into: &mut SseReport, from: &SseReport) {
    into.streams += from.streams;
    into.streams_opened += from.streams_opened;
    into.streams_failed += from.streams_failed;
    into.reconnects += from.reconnects;
    into.events += from.events;
    add_map(&mut into.failures, &from.failures);
    for (pod, b) in &from.by_backend {
        let e = into.by_backend.entry(pod.clone()).or_default();
        e.opened += b.opened;
        e.failed += b.failed;
        e.events += b.events;
        e.bytes_sent += b.bytes_sent;
        e.bytes_received += b.bytes_received;
    }
}

fn merge_with(reports: &[Report], bad: &mut dyn FnMut(String)) -> Report {
    let mut out = Report::empty();
    let Some(first) = reports.first() else {
        return out;
    };
    let t0 = reports
        .iter()
        .map(|r| r.started_at_unix_ms)
        .min()
        .unwrap_or(0);
    let end_ms = reports
        .iter()
        .map(|r| r.started_at_unix_ms as f64 + r.duration_s * 1000.0)
        .fold(t0 as f64, f64::max);
    out.started_at_unix_ms = t0;
    out.duration_s = (end_ms - t0 as f64) / 1000.0;
    out.drain_s = reports.iter().map(|r| r.drain_s).fold(0.0, f64::max);
    out.partial = reports.iter().any(|r| r.partial);
    out.sources = reports.iter().map(|r| r.sources).sum();
    out.config = reports
        .iter()
        .all(|r| r.config == first.config)
        .then(|| first.config.clone())
        .flatten();

    let mut latency = None;
    let mut backend_hist: BTreeMap<String, Option<Histogram<u64>>> = BTreeMap::new();
    let mut rows: Vec<(TimelineRow, Option<Histogram<u64>>)> = Vec::new();
    for r in reports {
        out.attempted += r.attempted;
        out.dropped += r.dropped;
        add_map(&mut out.responses, &r.responses);
        add_map(&mut out.transport_errors, &r.transport_errors);
        let d = &mut out.send_delay_ms;
        d.p50 = d.p50.max(r.send_delay_ms.p50);
        d.p99 = d.p99.max(r.send_delay_ms.p99);
        d.max = d.max.max(r.send_delay_ms.max);
        add_histogram(&mut latency, &r.histogram, bad);
        for (pod, b) in &r.by_backend {
            let e = out.by_backend.entry(pod.clone()).or_default();
            e.requests += b.requests;
            e.bytes_sent += b.bytes_sent;
            e.bytes_received += b.bytes_received;
            add_map(&mut e.responses, &b.responses);
            add_map(&mut e.transport_errors, &b.transport_errors);
            add_histogram(
                backend_hist.entry(pod.clone()).or_default(),
                &b.histogram,
                bad,
            );
        }
        // Whole seconds between this generator's start and the earliest one.
        let shift = ((r.started_at_unix_ms - t0) as f64 / 1000.0).round() as usize;
        for row in &r.timeline {
            let t = row.t as usize + shift;
            while rows.len() <= t {
                let t = rows.len() as u64;
                let empty = TimelineRow {
                    t,
                    transport_errors: error_map(&[0; 4]),
                    ..TimelineRow::default()
                };
                rows.push((empty, None));
            }
            let (acc, hist) = &mut rows[t];
            acc.attempted += row.attempted;
            acc.dropped += row.dropped;
            add_map(&mut acc.responses, &row.responses);
            add_map(&mut acc.transport_errors, &row.transport_errors);
            add_map(&mut acc.by_backend, &row.by_backend);
            add_map(&mut acc.non_2xx_by_backend, &row.non_2xx_by_backend);
            for (pod, bytes) in &row.bytes_by_backend {
                *acc.bytes_by_backend.entry(pod.clone()).or_default() += *bytes;
            }
            if let Some(h) = &row.histogram {
                add_histogram(hist, h, bad);
            }
        }
        merge_sse(&mut out.sse, &r.sse);
        out.unattributed_bytes += r.unattributed_bytes;
    }

    let latency = latency.unwrap_or_else(run_histogram);
    out.latency_ms = LatencySummary::from_histogram(&latency);
    out.histogram = encode_histogram(&latency);
    for (pod, hist) in backend_hist {
        if let (Some(b), Some(h)) = (out.by_backend.get_mut(&pod), hist) {
            b.latency_ms = BackendLatency::from_histogram(&h);
            b.histogram = encode_histogram(&h);
        }
    }
    for b in out
        .by_backend
        .values_mut()
        .filter(|b| b.histogram.is_empty())
    {
        *b = BackendReport {
            histogram: encode_histogram(&run_histogram()),
            ..std::mem::take(b)
        };
    }
    out.timeline = rows
        .into_iter()
        .map(|(mut row, hist)| {
            if let Some(h) = hist {
                row.latency_ms_p99 = row_p99(&h);
                row.histogram = Some(encode_histogram(&h));
            }
            row
        })
        .collect();
    let outcomes = out.total_responses() + out.total_transport_errors();
    out.achieved_rps = rate(outcomes, out.duration_s);
    out
}

/// Merges reports of generators that ran at the same time (e.g. one per zone). Histograms
/// that do not decode are left out of the latency figures (and logged); use
/// [`try_merge_reports`] to refuse them instead.
pub fn merge_reports(reports: &[Report]) -> Report {
    merge_with(reports, &mut |e| tracing::warn!("merging reports: {e}"))
}

/// [`merge_reports`] that fails on the first histogram that does not decode.
pub fn try_merge_reports(reports: &[Report]) -> Result<Report, LoadgenError> {
    let mut first_error = None;
    let merged = merge_with(reports, &mut |e| {
        first_error.get_or_insert(e);
    });
    match first_error {
        Some(e) => Err(LoadgenError::Report(e)),
        None => Ok(merged),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::time::Instant;

    use super::*;
    use crate::assemble::{RunMeta, assemble, report_config};
    use crate::config::RunConfig;
    use crate::error_kind::ErrorKind;
    use crate::metrics::Metrics;
    use crate::recorder::{Outcome, Recorder};
    use crate::report::ByteCounts;

    /// (offset ms from its generator's start, status or 0 for a reset, pod, latency µs)
    type Sample = (u64, u16, &'static str, u64);

    const A: &[Sample] = &[
        (10, 200, "a-1", 800),
        (20, 200, "a-1", 1_200),
        (900, 500, "a-2", 45_000),
        (1_500, 200, "a-2", 950),
        (2_100, 0, "a-1", 0),
        (2_900, 200, "shared", 250_000),
    ];
    const B: &[Sample] = &[
        (5, 200, "b-1", 3_000),
        (700, 200, "shared", 640),
        (1_100, 503, "b-1", 12_345),
        (1_200, 0, "b-1", 0),
        (2_999, 200, "b-1", 1_000_000),
    ];

    fn record(rec: &Recorder, start: Instant, samples: &[Sample], shift_ms: u64) {
        for &(at, status, pod, us) in samples {
            let intended = start + Duration::from_millis(at + shift_ms);
            let outcome = if status == 0 {
                Outcome::Transport {
                    kind: ErrorKind::Reset,
                    conn_pod: Some(pod),
                    bytes: ByteCounts {
                        sent: 50,
                        received: 7,
                    },
                }
            } else {
                Outcome::Response {
                    status,
                    pod: Some(pod),
                    latency: Duration::from_micros(us),
                    bytes: ByteCounts {
                        sent: 50 + at,
                        received: 100 + us % 1_000,
                    },
                }
            };
            rec.record(intended, Duration::from_micros(us / 10), outcome);
        }
        rec.dropped(start + Duration::from_millis(shift_ms + 1_700));
        // An SSE stream served by `shared`, and one that failed before its head.
        let streamed = ByteCounts {
            sent: 90,
            received: 1_000,
        };
        let at = start + Duration::from_millis(shift_ms + 500);
        rec.stream_bytes(Some("shared"), streamed, at);
        rec.stream_bytes(
            None,
            ByteCounts {
                sent: 90,
                received: 0,
            },
            at,
        );
    }

    fn report(rec: &Recorder, started_at_unix_ms: u64, secs: u64) -> Report {
        let meta = RunMeta {
            started_at_unix_ms,
            duration: Duration::from_secs(secs),
            drain: Duration::from_millis(5),
            partial: false,
        };
        let config = report_config(&RunConfig::new("http://svc:8080/".parse().unwrap()));
        assemble(rec.finish(), SseReport::default(), meta, config)
    }

    fn without_histograms(mut r: Report) -> Report {
        r.histogram.clear();
        r.by_backend.values_mut().for_each(|b| b.histogram.clear());
        r.timeline.iter_mut().for_each(|row| row.histogram = None);
        r
    }

    #[test]
    fn merging_equals_recording_everything_in_one_place() {
        let start = Instant::now();
        let (a, b, all) = (
            Recorder::new(start, Metrics::new()),
            Recorder::new(start, Metrics::new()),
            Recorder::new(start, Metrics::new()),
        );
        // B started one second after A.
        record(&a, start, A, 0);
        record(&b, start, B, 0);
        record(&all, start, A, 0);
        record(&all, start, B, 1_000);
        let (ra, rb) = (report(&a, 50_000, 3), report(&b, 51_000, 3));
        let expected = report(&all, 50_000, 4);
        ra.check_invariants().unwrap();
        rb.check_invariants().unwrap();

        let merged = try_merge_reports(&[ra.clone(), rb.clone()]).unwrap();
        merged.check_invariants().unwrap();
        assert_eq!(merged.sources, 2);
        assert_eq!(merged.attempted, 11);
        assert_eq!(merged.dropped, 2);
        assert_eq!(merged.transport_errors["reset"], 2);
        assert_eq!(merged.duration_s, 4.0);
        assert_eq!(merged.timeline.len(), 4);
        // Bytes add up: 11 attempts of 50 B (+ offsets), two streams of 90 B, and what no pod
        // answered (two resets, two streams that never opened).
        assert_eq!(
            merged.unattributed_bytes,
            ByteCounts {
                sent: 2 * 50 + 2 * 90,
                received: 2 * 7
            }
        );
        assert_eq!(
            merged.sse.by_backend["shared"].bytes(),
            ByteCounts {
                sent: 180,
                received: 2_000
            }
        );
        assert_eq!(
            merged.by_backend["b-1"].bytes(),
            ByteCounts {
                sent: 3 * 50 + 5 + 1_100 + 2_999,
                received: 3 * 100 + 345
            }
        );
        assert_eq!(
            merged.timeline[1].bytes_by_backend["shared"],
            ByteCounts {
                sent: 50 + 700 + 90,
                received: 100 + 640 + 1_000
            },
            "B's answer at 0.7 s and its stream at 0.5 s of its clock land in merged second 1 \
             (B started 1 s later)"
        );
        assert_eq!(merged.timeline[0].non_2xx_by_backend["a-2"], 1);
        assert_eq!(
            merged.timeline[2].non_2xx_by_backend["b-1"], 1,
            "B's 503 at 1.1 s of its clock"
        );
        assert_eq!(
            merged.timeline[1].attempted,
            2 + 1,
            "A's second 1 and B's second 0"
        );

        let decoded = |s: &str| decode_histogram(s).unwrap();
        assert!(decoded(&merged.histogram) == decoded(&expected.histogram));
        for (pod, b) in &expected.by_backend {
            assert!(decoded(&merged.by_backend[pod].histogram) == decoded(&b.histogram));
        }
        for (m, e) in merged.timeline.iter().zip(&expected.timeline) {
            match (&m.histogram, &e.histogram) {
                (Some(m), Some(e)) => assert!(decoded(m) == decoded(e)),
                (None, None) => {}
                other => panic!("row histograms differ: {other:?}"),
            }
        }
        // Send delay merges as the maximum over the sources: exact for `max` only.
        assert_eq!(merged.send_delay_ms.max, expected.send_delay_ms.max);
        assert!(
            (100.0..=100.1).contains(&merged.send_delay_ms.max),
            "3 significant digits"
        );
        let mut expected_counts = without_histograms(expected);
        expected_counts.sources = 2;
        expected_counts.send_delay_ms = merged.send_delay_ms.clone();
        assert_eq!(without_histograms(merged), expected_counts);

        // Merging one report changes nothing but re-encoding.
        let single = merge_reports(std::slice::from_ref(&ra));
        assert_eq!(without_histograms(single), without_histograms(ra));
    }

    #[test]
    fn bad_histograms_fail_the_strict_merge_only() {
        let mut r = Report::empty();
        r.sources = 1;
        r.histogram = "not base64!".into();
        assert!(matches!(
            try_merge_reports(&[r.clone()]),
            Err(LoadgenError::Report(_))
        ));
        let lenient = merge_reports(&[r]);
        assert_eq!(lenient.latency_ms.samples, 0);
        assert_eq!(merge_reports(&[]).sources, 0);
    }
}

//! The human summary (`--output text`), in the spirit of wrk's.

use std::fmt::Write as _;

use crate::report::Report;

fn fmt_ms(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{:.2}s", ms / 1000.0)
    } else if ms >= 1.0 {
        format!("{ms:.2}ms")
    } else {
        format!("{:.0}us", ms * 1000.0)
    }
}

fn counts(map: &std::collections::BTreeMap<String, u64>) -> String {
    let parts: Vec<String> = map
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| format!("{k}: {n}"))
        .collect();
    if parts.is_empty() {
        "none".to_string()
    } else {
        parts.join(", ")
    }
}

/// Renders the report as a few lines of text.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let w = &mut out;
    if let Some(c) = &report.config {
        let _ = writeln!(
            w,
            "Ran {:.2}s @ {}  rate {}  {} connections ({}){}",
            report.duration_s,
            c.url,
            c.rate,
            c.connections,
            c.connection_model,
            if report.partial {
                "  [stopped early]"
            } else {
                ""
            }
        );
    } else {
        let _ = writeln!(
            w,
            "{} merged reports over {:.2}s",
            report.sources, report.duration_s
        );
    }
    let l = &report.latency_ms;
    let _ = writeln!(
        w,
        "  Latency (from intended send)  p50 {}  p90 {}  p99 {}  p99.9 {}  max {}  mean {}",
        fmt_ms(l.p50),
        fmt_ms(l.p90),
        fmt_ms(l.p99),
        fmt_ms(l.p999),
        fmt_ms(l.max),
        fmt_ms(l.mean)
    );
    let d = &report.send_delay_ms;
    let _ = writeln!(
        w,
        "  Send delay (intended → sent)   p50 {}  p99 {}  max {}",
        fmt_ms(d.p50),
        fmt_ms(d.p99),
        fmt_ms(d.max)
    );
    let _ = writeln!(
        w,
        "  {} attempted: {} responses, {} transport errors; {} dropped; drained in {:.2}s",
        report.attempted,
        report.total_responses(),
        report.total_transport_errors(),
        report.dropped,
        report.drain_s
    );
    let _ = writeln!(w, "  Responses: {}", counts(&report.responses));
    let _ = writeln!(
        w,
        "  Transport errors: {}",
        counts(&report.transport_errors)
    );
    let _ = writeln!(w, "Requests/sec: {:.2}", report.achieved_rps);
    let bytes = report.total_bytes();
    let _ = writeln!(
        w,
        "Bytes: sent {}, received {} ({} sent, {} received with no answer)",
        bytes.sent,
        bytes.received,
        report.unattributed_bytes.sent,
        report.unattributed_bytes.received
    );
    if !report.by_backend.is_empty() {
        let _ = writeln!(w, "By backend:");
        let total = report.total_responses().max(1) as f64;
        for (pod, b) in &report.by_backend {
            let _ = writeln!(
                w,
                "  {pod:<24} {:>9} ({:5.1}%)  p50 {}  p99 {}  [{}]  bytes {}/{}",
                b.requests,
                100.0 * b.requests as f64 / total,
                fmt_ms(b.latency_ms.p50),
                fmt_ms(b.latency_ms.p99),
                counts(&b.responses),
                b.bytes_sent,
                b.bytes_received
            );
        }
    }
    let s = &report.sse;
    if s.streams > 0 {
        let _ = writeln!(
            w,
            "SSE: {} streams, {} opened, {} failed ({}), {} reconnects, {} events",
            s.streams,
            s.streams_opened,
            s.streams_failed,
            counts(&s.failures),
            s.reconnects,
            s.events
        );
        for (pod, b) in &s.by_backend {
            let _ = writeln!(
                w,
                "  {pod:<24} opened {}  failed {}  events {}  bytes {}/{}",
                b.opened, b.failed, b.events, b.bytes_sent, b.bytes_received
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::ReportExt;

    #[test]
    fn units_scale() {
        assert_eq!(fmt_ms(0.25), "250us");
        assert_eq!(fmt_ms(12.345), "12.35ms");
        assert_eq!(fmt_ms(1500.0), "1.50s");
    }

    #[test]
    fn summary_names_the_counts() {
        let mut r = Report::empty();
        r.attempted = 3;
        r.responses.insert("200".into(), 2);
        r.transport_errors.insert("reset".into(), 1);
        r.unattributed_bytes.sent = 40;
        let text = render(&r);
        assert!(
            text.contains("Bytes: sent 40, received 0 (40 sent, 0 received with no answer)"),
            "{text}"
        );
        assert!(
            text.contains("3 attempted: 2 responses, 1 transport errors"),
            "{text}"
        );
        assert!(text.contains("Responses: 200: 2"), "{text}");
        assert!(text.contains("Transport errors: reset: 1"), "{text}");
    }
}

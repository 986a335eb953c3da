//! Bytes and the cross-zone figures: each generator's per-second bytes add up to its per-pod
//! bytes; the traffic matrix's bytes are the generators' of the load phase, zone by zone; the
//! cross-zone split recounted from the summary's own matrix and pod rows gives the same
//! numbers, same-zone + cross-zone = attributed responses, and with what named no pod they are
//! the whole matrix (responses and bytes); the share is their ratio and the cost its rate; the
//! traffic of the callers through the load balancer or the ingress recounts from their
//! reports and lies within the matrix.

use std::collections::{BTreeMap, BTreeSet};

use workload_contract::loadgen::report::ByteCounts;

use super::{AuditCheck, Check};
use crate::measure::{self, RunData, Window};
use crate::report::Summary;

pub(super) fn checks(run: &RunData, summary: &Summary) -> Vec<AuditCheck> {
    let mut out = Vec::new();
    for g in &run.generators {
        out.push(generator_bytes(&g.name, &g.report));
    }
    if run.generators.is_empty() {
        return out;
    }
    out.extend(matrix_bytes(run, summary));
    if let Some(c) = &summary.cross_zone {
        out.extend(split(summary, c));
        if let Some(p) = &c.proxied {
            out.push(proxied(run, summary, p));
        }
    }
    out
}

/// The proxied callers' traffic recounted from their reports, within the traffic matrix.
fn proxied(run: &RunData, summary: &Summary, p: &crate::report::ProxiedTraffic) -> AuditCheck {
    let whole = Window::whole(run);
    let (mut requests, mut bytes) = (0u64, 0u64);
    for (g, second, row) in run.load_seconds() {
        if p.generators.contains(&g.name) && whole.has_second(second) {
            requests += row.by_backend.values().copied().sum::<u64>();
            bytes += row
                .bytes_by_backend
                .values()
                .map(|b| b.sent + b.received)
                .sum::<u64>();
        }
    }
    let matrix_requests: u64 = summary
        .traffic_matrix
        .values()
        .flat_map(|m| m.values())
        .sum();
    let matrix_bytes: u64 = summary
        .traffic_bytes
        .values()
        .flat_map(|m| m.values())
        .map(|b| b.total())
        .sum();
    Check::new("crossZoneProxiedRecount", "summary")
        .value("proxiedRequests", p.requests as f64)
        .value("recounted", requests as f64)
        .value("proxiedBytes", p.bytes as f64)
        .value("recountedBytes", bytes as f64)
        .expect(
            p.requests == requests
                && p.bytes == bytes
                && p.requests <= matrix_requests
                && p.bytes <= matrix_bytes,
            format!(
                "through the load balancer or the ingress ({}): {} responses / {} bytes, \
                 recounted from their reports {requests} / {bytes}, within the traffic matrix's \
                 {matrix_requests} / {matrix_bytes}",
                p.generators.join(", "),
                p.requests,
                p.bytes
            ),
        )
}

/// A generator's bytes by second against its per-pod totals (answers and SSE streams).
fn generator_bytes(name: &str, r: &workload_contract::loadgen::Report) -> AuditCheck {
    let mut rows: BTreeMap<&str, ByteCounts> = BTreeMap::new();
    for row in &r.timeline {
        for (pod, b) in &row.bytes_by_backend {
            *rows.entry(pod).or_default() += *b;
        }
    }
    let pods: BTreeSet<&str> = rows
        .keys()
        .copied()
        .chain(r.by_backend.keys().map(String::as_str))
        .chain(r.sse.by_backend.keys().map(String::as_str))
        .collect();
    let mismatch = pods.iter().find_map(|pod| {
        let (per_second, totals) = (rows.get(pod).copied().unwrap_or_default(), r.bytes_of(pod));
        (per_second != totals).then_some((*pod, per_second, totals))
    });
    let per_second: u64 = rows.values().map(|b| b.total()).sum();
    let per_pod: u64 = pods.iter().map(|p| r.bytes_of(p).total()).sum();
    let check = Check::new("bytesBySecondArePerPod", format!("generator {name}"))
        .value("bytesBySecond", per_second as f64)
        .value("bytesByPod", per_pod as f64)
        .value("unattributedBytes", r.unattributed_bytes.total() as f64);
    match mismatch {
        None => check.expect(
            true,
            format!(
                "bytes by second {per_second} = bytes by pod (answers and streams) {per_pod}, \
                 pod by pod (and {} with no answer)",
                r.unattributed_bytes.total()
            ),
        ),
        Some((pod, s, t)) => check.expect(
            false,
            format!(
                "{pod}: bytes by second sent {} received {} ≠ its answers' and streams' sent {} \
                 received {}",
                s.sent, s.received, t.sent, t.received
            ),
        ),
    }
}

/// `trafficBytes`, row by row, against the bytes of each zone's generators in the load phase.
fn matrix_bytes(run: &RunData, summary: &Summary) -> Vec<AuditCheck> {
    let window = Window::whole(run);
    let mut by_zone: BTreeMap<&str, ByteCounts> = BTreeMap::new();
    for (g, second, row) in run.load_seconds() {
        if window.has_second(second) {
            let zone = by_zone.entry(g.zone.as_str()).or_default();
            for b in row.bytes_by_backend.values() {
                *zone += *b;
            }
        }
    }
    let zones: BTreeSet<&str> = by_zone
        .keys()
        .copied()
        .chain(summary.traffic_bytes.keys().map(String::as_str))
        .collect();
    zones
        .into_iter()
        .map(|zone| {
            let expected = by_zone.get(zone).copied().unwrap_or_default();
            let (sent, received) = summary.traffic_bytes.get(zone).map_or((0, 0), |row| {
                (
                    row.values().map(|b| b.sent).sum::<u64>(),
                    row.values().map(|b| b.received).sum::<u64>(),
                )
            });
            Check::new("matrixBytesAreZoneBytes", format!("origin zone {zone}"))
                .value("matrixSent", sent as f64)
                .value("matrixReceived", received as f64)
                .value("generatorSent", expected.sent as f64)
                .value("generatorReceived", expected.received as f64)
                .expect(
                    sent == expected.sent && received == expected.received,
                    format!(
                        "matrix bytes sent {sent}, received {received} = the zone's generators' \
                         in the load phase, sent {}, received {}",
                        expected.sent, expected.received
                    ),
                )
        })
        .collect()
}

/// The split recounted from the summary's own `trafficMatrix`, `trafficBytes` and pod rows.
fn split(summary: &Summary, c: &crate::report::CrossZoneSummary) -> Vec<AuditCheck> {
    let zones: BTreeMap<&str, &str> = summary
        .pods
        .iter()
        .map(|p| (p.name.as_str(), p.zone.as_str()))
        .collect();
    let side = |origin: &str, pod: &str| match zones.get(pod) {
        Some(z) if *z == origin => 0,
        Some(_) => 1,
        None => 2,
    };
    let (mut requests, mut bytes) = ([0u64; 3], [0u64; 3]);
    for (origin, pods) in &summary.traffic_matrix {
        for (pod, n) in pods {
            requests[side(origin, pod)] += n;
        }
    }
    for (origin, pods) in &summary.traffic_bytes {
        for (pod, b) in pods {
            bytes[side(origin, pod)] += b.total();
        }
    }
    let matrix_requests: u64 = requests.iter().sum();
    let matrix_bytes: u64 = bytes.iter().sum();
    let mut out = vec![
        Check::new("crossZoneRecount", "summary")
            .value("crossZoneRequests", c.requests as f64)
            .value("recountedCross", requests[1] as f64)
            .value("sameZoneRequests", c.same_zone_requests as f64)
            .value("recountedSame", requests[0] as f64)
            .value("crossZoneBytes", c.bytes as f64)
            .value("recountedCrossBytes", bytes[1] as f64)
            .expect(
                c.requests == requests[1]
                    && c.same_zone_requests == requests[0]
                    && c.unzoned_requests == requests[2]
                    && c.bytes == bytes[1]
                    && c.same_zone_bytes == bytes[0]
                    && c.unzoned_bytes == bytes[2],
                format!(
                    "recounted from the traffic matrix and the pods' zones: cross-zone {} \
                     responses / {} bytes, same-zone {} / {}, no pod of the run {} / {}; \
                     crossZone says {} / {}, {} / {}, {} / {}",
                    requests[1],
                    bytes[1],
                    requests[0],
                    bytes[0],
                    requests[2],
                    bytes[2],
                    c.requests,
                    c.bytes,
                    c.same_zone_requests,
                    c.same_zone_bytes,
                    c.unzoned_requests,
                    c.unzoned_bytes
                ),
            ),
        Check::new("crossZoneSplitIsAttributed", "summary")
            .value("crossZone", c.requests as f64)
            .value("sameZone", c.same_zone_requests as f64)
            .value("attributed", c.attributed_requests as f64)
            .value("unzoned", c.unzoned_requests as f64)
            .value("matrix", matrix_requests as f64)
            .expect(
                c.requests + c.same_zone_requests == c.attributed_requests
                    && c.attributed_requests + c.unzoned_requests == matrix_requests,
                format!(
                    "cross-zone {} + same-zone {} = attributed {}; + no pod of the run {} = the \
                     traffic matrix {matrix_requests}",
                    c.requests, c.same_zone_requests, c.attributed_requests, c.unzoned_requests
                ),
            ),
        Check::new("crossZoneBytesSplit", "summary")
            .value("crossZoneBytes", c.bytes as f64)
            .value("sameZoneBytes", c.same_zone_bytes as f64)
            .value("unzonedBytes", c.unzoned_bytes as f64)
            .value("matrixBytes", matrix_bytes as f64)
            .expect(
                c.bytes_sent + c.bytes_received == c.bytes
                    && c.bytes + c.same_zone_bytes + c.unzoned_bytes == matrix_bytes,
                format!(
                    "cross-zone bytes {} (sent {} + received {}) + same-zone {} + no pod of the \
                     run {} = the matrix's bytes {matrix_bytes}",
                    c.bytes, c.bytes_sent, c.bytes_received, c.same_zone_bytes, c.unzoned_bytes
                ),
            ),
    ];
    let share =
        (c.attributed_requests > 0).then(|| c.requests as f64 / c.attributed_requests as f64);
    let mut check = Check::new("crossZoneShareIsRatio", "summary")
        .value("crossZone", c.requests as f64)
        .value("attributed", c.attributed_requests as f64);
    if let Some(s) = c.share {
        check = check.value("share", s);
    }
    out.push(check.expect(
        match (c.share, share) {
            (Some(a), Some(b)) => (a - b).abs() <= 1e-12,
            (None, None) => true,
            _ => false,
        },
        format!(
            "share {} = cross-zone {} / attributed {}",
            c.share.map_or("null".to_owned(), |s| format!("{s:.6}")),
            c.requests,
            c.attributed_requests
        ),
    ));
    let cost = measure::monthly_cost_usd(c.bytes, c.seconds, c.price_per_gb);
    let mut check = Check::new("crossZoneCostIsRate", "summary")
        .value("bytes", c.bytes as f64)
        .value("seconds", c.seconds)
        .value("pricePerGb", c.price_per_gb);
    if let Some(usd) = c.estimated_monthly_usd {
        check = check.value("estimatedMonthlyUsd", usd);
    }
    out.push(check.expect(
        match (c.estimated_monthly_usd, cost) {
            (Some(a), Some(b)) => (a - b).abs() <= 1e-9 * b.abs().max(1.0),
            (None, None) => true,
            _ => false,
        },
        format!(
                    "estimated {} USD/month = {} bytes / {:.3} s × 2,592,000 s / 10^9 × {} USD/GB",
                    c.estimated_monthly_usd
                        .map_or("null".to_owned(), |v| format!("{v:.6}")),
                    c.bytes,
                    c.seconds,
                    c.price_per_gb
                ),
    ));
    out
}

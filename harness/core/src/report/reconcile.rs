//! The reconciled per-pod rows both reports show: the destination side (the pod's sidecar)
//! beside the source side (what callers got back from it), and the requests that reached the
//! pod but never came back answered. A pod that swallows requests — they arrive, wait behind
//! held slots, and their callers give up — is flagged.

use std::collections::BTreeMap;

use super::{PodDestination, PodSource, PodSummary, Summary};

/// A pod is flagged when at least this share of the requests that reached it got no answer
/// back to the caller (and at least [`SWALLOW_MIN`] of them).
pub const SWALLOW_FRACTION: f64 = 0.05;
/// Fewer unanswered requests than this are never flagged (a pod killed mid-request).
pub const SWALLOW_MIN: u64 = 10;

/// One pod, both sides.
#[derive(Debug, Clone, PartialEq)]
pub struct PodRow<'a> {
    pub pod: &'a PodSummary,
    pub destination: Option<&'a PodDestination>,
    pub source: Option<&'a PodSource>,
    /// Share of all arrivals (destination side), else of attributed responses.
    pub share: f64,
    /// Arrived at the sidecar but no response (any status) or stream came back to a caller:
    /// `arrived − answered − streams opened`. `None` without both sides.
    pub unanswered: Option<u64>,
    /// Enough unanswered requests to flag the pod.
    pub swallows: bool,
}

impl PodRow<'_> {
    /// `unanswered ÷ arrived`.
    pub fn unanswered_fraction(&self) -> Option<f64> {
        let arrived = self.destination?.arrived;
        (arrived > 0).then(|| self.unanswered.unwrap_or(0) as f64 / arrived as f64)
    }
}

/// Rows in the summary's pod order.
pub fn pod_rows(summary: &Summary) -> Vec<PodRow<'_>> {
    let arrivals: u64 = summary
        .pods
        .iter()
        .filter_map(|p| p.destination.as_ref().map(|d| d.arrived))
        .sum();
    let answered: u64 = summary
        .pods
        .iter()
        .filter_map(|p| p.source.as_ref().map(PodSource::answered))
        .sum();
    summary
        .pods
        .iter()
        .map(|pod| {
            let destination = pod.destination.as_ref();
            let source = pod.source.as_ref();
            let share = match (destination, source) {
                (Some(d), _) if arrivals > 0 => d.arrived as f64 / arrivals as f64,
                (None, Some(s)) if answered > 0 => s.answered() as f64 / answered as f64,
                _ => pod.share,
            };
            let unanswered = match (destination, source) {
                (Some(d), Some(s)) => Some(
                    d.arrived
                        .saturating_sub(s.answered())
                        .saturating_sub(s.streams_opened),
                ),
                _ => None,
            };
            let swallows = match (unanswered, destination) {
                (Some(u), Some(d)) => {
                    u >= SWALLOW_MIN && u as f64 >= SWALLOW_FRACTION * d.arrived as f64
                }
                _ => false,
            };
            PodRow {
                pod,
                destination,
                source,
                share,
                unanswered,
                swallows,
            }
        })
        .collect()
}

/// Column sums over the pods, for the table's total row.
pub fn totals(rows: &[PodRow<'_>]) -> (PodDestination, PodSource, u64) {
    let mut d = PodDestination::default();
    let mut s = PodSource::default();
    let mut unanswered = 0;
    for row in rows {
        if let Some(x) = row.destination {
            d.arrived += x.arrived;
            d.admitted += x.admitted;
            d.queued_at_end += x.queued_at_end;
            d.abandoned += x.abandoned;
            add(&mut d.rejected, &x.rejected);
        }
        if let Some(x) = row.source {
            add(&mut s.responses, &x.responses);
            add(&mut s.transport_errors, &x.transport_errors);
            s.streams_opened += x.streams_opened;
            s.streams_failed += x.streams_failed;
        }
        unanswered += row.unanswered.unwrap_or(0);
    }
    (d, s, unanswered)
}

fn add(into: &mut BTreeMap<String, u64>, from: &BTreeMap<String, u64>) {
    for (k, n) in from {
        *into.entry(k.clone()).or_default() += n;
    }
}

/// `"1,325× 200, 4× 503"`; `"0"` when empty.
pub fn counts_text(counts: &BTreeMap<String, u64>) -> String {
    let parts: Vec<String> = counts
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| format!("{}× {k}", thousands(*n)))
        .collect();
    if parts.is_empty() {
        "0".into()
    } else {
        parts.join(", ")
    }
}

/// Rejections as `"12 queue full, 3 queue timeout"`; `"0"` when none.
pub fn rejected_text(rejected: &BTreeMap<String, u64>) -> String {
    let parts: Vec<String> = rejected
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| format!("{} {}", thousands(*n), k.replace('_', " ")))
        .collect();
    if parts.is_empty() {
        "0".into()
    } else {
        parts.join(", ")
    }
}

/// `1234567` → `"1,234,567"`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::failing_summary;

    fn source(ok: u64, streams: u64) -> PodSource {
        let mut s = PodSource::default();
        s.responses.insert("200".into(), ok);
        s.streams_opened = streams;
        s
    }

    fn destination(arrived: u64, admitted: u64, abandoned: u64) -> PodDestination {
        PodDestination {
            arrived,
            admitted,
            abandoned,
            ..PodDestination::default()
        }
    }

    #[test]
    fn a_pod_whose_requests_arrive_but_are_not_answered_is_flagged() {
        let mut summary = failing_summary();
        let mut busy = summary.pods[0].clone();
        busy.name = "pod-0".into();
        busy.destination = Some(destination(1755, 1755, 0));
        busy.source = Some(source(1750, 5));
        let mut swallowing = busy.clone();
        swallowing.name = "pod-1".into();
        swallowing.destination = Some(destination(1783, 131, 1652));
        swallowing.source = Some(source(108, 20));
        summary.pods = vec![busy, swallowing];
        let rows = pod_rows(&summary);
        assert_eq!(rows[0].unanswered, Some(0));
        assert!(!rows[0].swallows);
        assert_eq!(rows[1].unanswered, Some(1655));
        assert!(rows[1].swallows);
        assert!((rows[1].share - 1783.0 / 3538.0).abs() < 1e-12);
        let (d, s, unanswered) = totals(&rows);
        assert_eq!(
            (d.arrived, d.abandoned, s.answered(), unanswered),
            (3538, 1652, 1858, 1655)
        );
    }

    #[test]
    fn formats_counts() {
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(999), "999");
        let mut m = BTreeMap::new();
        m.insert("200".to_string(), 1325);
        m.insert("503".to_string(), 4);
        m.insert("504".to_string(), 0);
        assert_eq!(counts_text(&m), "1,325× 200, 4× 503");
        let mut r = BTreeMap::new();
        r.insert("queue_full".to_string(), 12);
        r.insert("queue_timeout".to_string(), 0);
        assert_eq!(rejected_text(&r), "12 queue full");
        assert_eq!(counts_text(&BTreeMap::new()), "0");
    }
}

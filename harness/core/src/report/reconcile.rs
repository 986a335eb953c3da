//! The reconciled per-pod table both reports show: the destination side (the pod's sidecar),
//! the load balancer's view where there is one, and the source side (what callers got back
//! from the pod), with the requests that reached the pod but never came back answered. A pod
//! that swallows requests — they arrive, wait behind held slots, and their callers give up —
//! is flagged. The columns are decided here, once; the renderers only lay them out.

use std::collections::BTreeMap;

use super::{PodDestination, PodLoadBalancer, PodSource, PodSummary, Summary};
use crate::text::{natural_key, thousands};

/// A pod is flagged when at least this share of the requests that reached it got no answer
/// back to the caller (and at least [`SWALLOW_MIN`] of them).
pub const SWALLOW_FRACTION: f64 = 0.05;
/// Fewer unanswered requests than this are never flagged (a pod killed mid-request).
pub const SWALLOW_MIN: u64 = 10;

/// One pod, every side.
#[derive(Debug, Clone, PartialEq)]
pub struct PodRow<'a> {
    pub pod: &'a PodSummary,
    pub destination: Option<&'a PodDestination>,
    pub load_balancer: Option<&'a PodLoadBalancer>,
    pub source: Option<&'a PodSource>,
    /// Share of all arrivals at the sidecars, else of the load balancer's, else of the
    /// attributed responses.
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

    /// Where the unanswered requests went, as far as the counters tell, each part at most
    /// what is left of [`PodRow::unanswered`] after the ones before it; the parts sum to it.
    pub fn unanswered_parts(&self) -> Vec<(u64, &'static str)> {
        let (Some(total), Some(d)) = (self.unanswered, self.destination) else {
            return Vec::new();
        };
        let transport = |timeout: bool| -> u64 {
            self.source.map_or(0, |s| {
                s.transport_errors
                    .iter()
                    .filter(|(kind, _)| (kind.as_str() == "timeout") == timeout)
                    .map(|(_, n)| n)
                    .sum()
            })
        };
        let candidates = [
            (
                d.abandoned,
                "waited in its queue until their callers gave up",
            ),
            (d.queued_at_end, "were still queued when the load stopped"),
            (
                transport(true),
                "timed out at their callers while it served them",
            ),
            (
                transport(false),
                "ended in a connection error at their callers (reset or closed)",
            ),
        ];
        let mut left = total;
        let mut parts = Vec::new();
        for (n, what) in candidates {
            let n = n.min(left);
            if n > 0 {
                parts.push((n, what));
                left -= n;
            }
        }
        if left > 0 {
            parts.push((
                left,
                "got a slot but no answer reached a caller: still in service when the load stopped, or answered after the caller had given up",
            ));
        }
        parts
    }

    /// A word for a pod that stands out: `swallows requests` or `starved`.
    pub fn flag(&self) -> Option<&'static str> {
        if self.swallows {
            Some("swallows requests")
        } else if self.pod.starved {
            Some("starved")
        } else {
            None
        }
    }
}

/// Rows in natural pod order (`pod-2` before `pod-10`).
pub fn pod_rows(summary: &Summary) -> Vec<PodRow<'_>> {
    let sum =
        |f: &dyn Fn(&PodSummary) -> Option<u64>| -> u64 { summary.pods.iter().filter_map(f).sum() };
    let arrivals = sum(&|p| p.destination.as_ref().map(|d| d.arrived));
    let sent = sum(&|p| p.load_balancer.as_ref().map(|l| l.sent));
    let answered = sum(&|p| p.source.as_ref().map(PodSource::answered));
    let mut rows: Vec<PodRow<'_>> = summary
        .pods
        .iter()
        .map(|pod| {
            let destination = pod.destination.as_ref();
            let load_balancer = pod.load_balancer.as_ref();
            let source = pod.source.as_ref();
            let share = if let (Some(d), true) = (destination, arrivals > 0) {
                d.arrived as f64 / arrivals as f64
            } else if let (Some(l), true) = (load_balancer, sent > 0) {
                l.sent as f64 / sent as f64
            } else if let (Some(s), true) = (source, answered > 0) {
                s.answered() as f64 / answered as f64
            } else {
                pod.share
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
                load_balancer,
                source,
                share,
                unanswered,
                swallows,
            }
        })
        .collect();
    rows.sort_by(|a, b| natural_key(&a.pod.name).cmp(&natural_key(&b.pod.name)));
    rows
}

/// A column of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    Pod,
    Zone,
    Share,
    Arrived,
    Admitted,
    Rejected,
    Abandoned,
    PeakInFlight,
    PeakQueue,
    LbSent,
    LbFailed,
    Answered,
    Streams,
    TransportErrors,
    NoAnswer,
}

/// Which side a column belongs to (the header groups).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Pod,
    Destination,
    LoadBalancer,
    Source,
    Reconciled,
}

impl Side {
    pub fn heading(self) -> &'static str {
        match self {
            Side::Pod => "",
            Side::Destination => "destination: the pod's sidecar",
            Side::LoadBalancer => "load balancer",
            Side::Source => "source: what callers got back",
            Side::Reconciled => "",
        }
    }
}

impl Column {
    pub fn header(self) -> &'static str {
        match self {
            Column::Pod => "pod",
            Column::Zone => "zone / node",
            Column::Share => "share",
            Column::Arrived => "arrived",
            Column::Admitted => "admitted",
            Column::Rejected => "rejected",
            Column::Abandoned => "abandoned in queue",
            Column::PeakInFlight => "peak in flight / limit",
            Column::PeakQueue => "peak queue",
            Column::LbSent => "sent",
            Column::LbFailed => "failed",
            Column::Answered => "answered",
            Column::Streams => "SSE streams",
            Column::TransportErrors => "transport errors",
            Column::NoAnswer => "no answer",
        }
    }

    pub fn side(self) -> Side {
        match self {
            Column::Pod | Column::Zone | Column::Share => Side::Pod,
            Column::Arrived
            | Column::Admitted
            | Column::Rejected
            | Column::Abandoned
            | Column::PeakInFlight
            | Column::PeakQueue => Side::Destination,
            Column::LbSent | Column::LbFailed => Side::LoadBalancer,
            Column::Answered | Column::Streams | Column::TransportErrors => Side::Source,
            Column::NoAnswer => Side::Reconciled,
        }
    }

    /// Right-aligned numbers.
    pub fn numeric(self) -> bool {
        !matches!(
            self,
            Column::Pod
                | Column::Zone
                | Column::Rejected
                | Column::Answered
                | Column::TransportErrors
        )
    }

    /// The cell of `row`.
    pub fn cell(self, row: &PodRow<'_>) -> String {
        let dash = || "—".to_string();
        let d = row.destination;
        let s = row.source;
        let l = row.load_balancer;
        match self {
            Column::Pod => row.pod.name.clone(),
            Column::Zone => row.pod.zone.clone(),
            Column::Share => format!("{:.1}%", row.share * 100.0),
            Column::Arrived => d.map_or_else(dash, |d| thousands(d.arrived)),
            Column::Admitted => d.map_or_else(dash, |d| thousands(d.admitted)),
            Column::Rejected => d.map_or_else(dash, |d| rejected_text(&d.rejected)),
            Column::Abandoned => d.map_or_else(dash, |d| thousands(d.abandoned)),
            Column::PeakInFlight if row.pod.max_concurrency > 0 => {
                format!("{} / {}", row.pod.max_in_flight, row.pod.max_concurrency)
            }
            Column::PeakInFlight => dash(),
            Column::PeakQueue if d.is_some() => thousands(row.pod.max_queue_depth),
            Column::PeakQueue => dash(),
            Column::LbSent => l.map_or_else(dash, |l| thousands(l.sent)),
            Column::LbFailed => l.map_or_else(dash, |l| thousands(l.failed)),
            Column::Answered => s.map_or_else(dash, |s| counts_text(&s.responses)),
            Column::Streams => s.map_or_else(dash, |s| thousands(s.streams_opened)),
            Column::TransportErrors => s.map_or_else(dash, |s| counts_text(&s.transport_errors)),
            Column::NoAnswer => match (row.unanswered, row.unanswered_fraction()) {
                (Some(u), Some(f)) => format!("{} ({:.0}%)", thousands(u), f * 100.0),
                (Some(u), None) => thousands(u),
                _ => dash(),
            },
        }
    }

    /// The cell of the total row (empty where a sum means nothing).
    pub fn total(self, t: &Totals) -> String {
        match self {
            Column::Pod => "all pods".into(),
            Column::Arrived => thousands(t.destination.arrived),
            Column::Admitted => thousands(t.destination.admitted),
            Column::Rejected => rejected_text(&t.destination.rejected),
            Column::Abandoned => thousands(t.destination.abandoned),
            Column::LbSent => thousands(t.load_balancer.sent),
            Column::LbFailed => thousands(t.load_balancer.failed),
            Column::Answered => counts_text(&t.source.responses),
            Column::Streams => thousands(t.source.streams_opened),
            Column::TransportErrors => counts_text(&t.source.transport_errors),
            Column::NoAnswer => thousands(t.unanswered),
            _ => String::new(),
        }
    }

    /// The cell of the row of callers' outcomes no pod could be named for.
    pub fn unattributed(self, u: &PodSource) -> String {
        match self {
            Column::Pod => "no pod named".into(),
            Column::Answered => counts_text(&u.responses),
            Column::Streams => thousands(u.streams_opened),
            Column::TransportErrors => counts_text(&u.transport_errors),
            _ => String::new(),
        }
    }
}

/// The columns for these rows: a side appears when some pod has it.
pub fn columns(rows: &[PodRow<'_>]) -> Vec<Column> {
    let has_destination = rows.iter().any(|r| r.destination.is_some());
    let has_lb = rows.iter().any(|r| r.load_balancer.is_some());
    let has_source = rows.iter().any(|r| r.source.is_some());
    let mut out = vec![Column::Pod, Column::Zone, Column::Share];
    if has_destination {
        out.extend([
            Column::Arrived,
            Column::Admitted,
            Column::Rejected,
            Column::Abandoned,
            Column::PeakInFlight,
            Column::PeakQueue,
        ]);
    }
    if has_lb {
        out.extend([Column::LbSent, Column::LbFailed]);
    }
    if has_source {
        out.extend([Column::Answered, Column::Streams, Column::TransportErrors]);
    }
    if has_destination && has_source {
        out.push(Column::NoAnswer);
    }
    out
}

/// Column sums over the pods.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Totals {
    pub destination: PodDestination,
    pub load_balancer: PodLoadBalancer,
    pub source: PodSource,
    pub unanswered: u64,
}

/// Sums every side over `rows`.
pub fn totals(rows: &[PodRow<'_>]) -> Totals {
    let mut t = Totals::default();
    for row in rows {
        if let Some(x) = row.destination {
            t.destination.arrived += x.arrived;
            t.destination.admitted += x.admitted;
            t.destination.queued_at_end += x.queued_at_end;
            t.destination.abandoned += x.abandoned;
            add(&mut t.destination.rejected, &x.rejected);
        }
        if let Some(x) = row.load_balancer {
            t.load_balancer.sent += x.sent;
            t.load_balancer.failed += x.failed;
        }
        if let Some(x) = row.source {
            add(&mut t.source.responses, &x.responses);
            add(&mut t.source.transport_errors, &x.transport_errors);
            t.source.streams_opened += x.streams_opened;
            t.source.streams_failed += x.streams_failed;
        }
        t.unanswered += row.unanswered.unwrap_or(0);
    }
    t
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

/// Rejections as `"12 full, 3 timeout"` (`queue_` dropped); `"0"` when none.
pub fn rejected_text(rejected: &BTreeMap<String, u64>) -> String {
    let parts: Vec<String> = rejected
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| format!("{} {}", thousands(*n), k.trim_start_matches("queue_")))
        .collect();
    if parts.is_empty() {
        "0".into()
    } else {
        parts.join(", ")
    }
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
        busy.name = "pod-10".into();
        busy.destination = Some(destination(1755, 1755, 0));
        busy.source = Some(source(1750, 5));
        let mut swallowing = busy.clone();
        swallowing.name = "pod-9".into();
        swallowing.destination = Some(destination(1783, 131, 1652));
        swallowing.source = Some(source(108, 20));
        summary.pods = vec![busy, swallowing];
        let rows = pod_rows(&summary);
        assert_eq!(rows[0].pod.name, "pod-9", "natural order");
        assert_eq!(rows[1].unanswered, Some(0));
        assert!(!rows[1].swallows);
        assert_eq!(rows[0].unanswered, Some(1655));
        assert_eq!(rows[0].flag(), Some("swallows requests"));
        assert!((rows[0].share - 1783.0 / 3538.0).abs() < 1e-12);
        let t = totals(&rows);
        assert_eq!(
            (
                t.destination.arrived,
                t.destination.abandoned,
                t.source.answered(),
                t.unanswered
            ),
            (3538, 1652, 1858, 1655)
        );
        assert_eq!(Column::NoAnswer.cell(&rows[0]), "1,655 (93%)");
        assert_eq!(Column::NoAnswer.total(&t), "1,655");
    }

    #[test]
    fn unanswered_requests_are_told_where_they_went() {
        let mut summary = failing_summary();
        let mut pod = summary.pods[0].clone();
        // 300 arrived, 40 answered, 5 streams: 255 unanswered, none abandoned.
        let mut d = destination(300, 300, 0);
        d.queued_at_end = 0;
        let mut s = source(40, 5);
        s.transport_errors.insert("timeout".into(), 200);
        s.transport_errors.insert("reset".into(), 10);
        pod.destination = Some(d);
        pod.source = Some(s);
        summary.pods = vec![pod];
        let rows = pod_rows(&summary);
        assert_eq!(rows[0].unanswered, Some(255));
        assert_eq!(
            rows[0].unanswered_parts(),
            vec![
                (200, "timed out at their callers while it served them"),
                (
                    10,
                    "ended in a connection error at their callers (reset or closed)"
                ),
                (
                    45,
                    "got a slot but no answer reached a caller: still in service when the load stopped, or answered after the caller had given up"
                ),
            ]
        );
        let told = crate::report::text::disagreements(&rows).join(" ");
        assert!(
            told.contains(
                "255 requests (85% of those that reached it) were never answered — 200 timed out"
            ),
            "{told}"
        );
    }

    proptest::proptest! {
        /// Whatever the counters, the parts add up to the unanswered requests exactly and
        /// none is zero.
        #[test]
        fn unanswered_parts_add_up(
            arrived in 0u64..5_000, answered in 0u64..5_000, streams in 0u64..100,
            abandoned in 0u64..5_000, queued in 0u64..100, timeouts in 0u64..5_000, resets in 0u64..100,
        ) {
            let mut summary = failing_summary();
            let mut pod = summary.pods[0].clone();
            let mut d = destination(arrived, arrived.saturating_sub(abandoned), abandoned);
            d.queued_at_end = queued;
            let mut s = source(answered, streams);
            s.transport_errors.insert("timeout".into(), timeouts);
            s.transport_errors.insert("reset".into(), resets);
            pod.destination = Some(d);
            pod.source = Some(s);
            summary.pods = vec![pod];
            let rows = pod_rows(&summary);
            let parts = rows[0].unanswered_parts();
            proptest::prop_assert_eq!(parts.iter().map(|p| p.0).sum::<u64>(), rows[0].unanswered.unwrap());
            proptest::prop_assert!(parts.iter().all(|p| p.0 > 0));
        }
    }

    #[test]
    fn columns_follow_the_sides_present() {
        let mut summary = failing_summary();
        let with_sidecar = columns(&pod_rows(&summary));
        assert!(
            with_sidecar.contains(&Column::Arrived) && with_sidecar.contains(&Column::NoAnswer)
        );
        assert!(!with_sidecar.contains(&Column::LbSent));
        for pod in &mut summary.pods {
            pod.destination = None;
            pod.load_balancer = Some(PodLoadBalancer {
                sent: 119,
                failed: 22,
            });
        }
        let rows = pod_rows(&summary);
        let behind_lb = columns(&rows);
        assert!(!behind_lb.contains(&Column::Arrived) && !behind_lb.contains(&Column::NoAnswer));
        assert_eq!(Column::LbFailed.cell(&rows[0]), "22");
        assert_eq!(Column::LbSent.total(&totals(&rows)), "238");
        assert!(
            (rows[0].share - 0.5).abs() < 1e-12,
            "share of what the LB sent"
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
        r.insert("queue_timeout".to_string(), 3);
        assert_eq!(rejected_text(&r), "12 full, 3 timeout");
        assert_eq!(counts_text(&BTreeMap::new()), "0");
        assert!(natural_key("pod-9") < natural_key("pod-10"));
    }
}

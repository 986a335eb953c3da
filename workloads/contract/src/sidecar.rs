//! sidecar: the arguments the harness starts it with ([`SidecarArgs`]) and the
//! destination-side metrics it reads back from the admin port ([`SidecarMetrics`]).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::flags::{duration_flag, listener_flags};
use crate::prometheus;

/// `sidecar_in_flight`: requests holding a concurrency slot.
pub const IN_FLIGHT: &str = "sidecar_in_flight";
/// `sidecar_queue_depth`: requests waiting in the admission queue.
pub const QUEUE_DEPTH: &str = "sidecar_queue_depth";
/// `sidecar_received_total`: requests that reached the sidecar.
pub const RECEIVED_TOTAL: &str = "sidecar_received_total";
/// `sidecar_admitted_total`: requests that got a slot.
pub const ADMITTED_TOTAL: &str = "sidecar_admitted_total";
/// `sidecar_rejected_total{reason}`: rejections by reason.
pub const REJECTED_TOTAL: &str = "sidecar_rejected_total";
/// The `reason` of a rejection because the queue was full.
pub const REASON_QUEUE_FULL: &str = "queue_full";
/// The `reason` of a rejection because the queue timeout expired.
pub const REASON_QUEUE_TIMEOUT: &str = "queue_timeout";

/// Readiness on saturation: `/readyz` fails while more than `queue_above` requests have waited
/// for `sustained_for`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadinessOnSaturation {
    pub queue_above: u32,
    pub sustained_for: Duration,
}

/// `sidecar` as the harness runs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SidecarArgs {
    pub listen: SocketAddr,
    pub admin_listen: SocketAddr,
    /// `http://host:port` of the workload behind it.
    pub upstream: String,
    pub max_concurrency: u32,
    /// 0: unbounded.
    pub queue_size: u32,
    /// Zero: wait forever.
    pub queue_timeout: Duration,
    /// How long it keeps serving after SIGTERM (wall time).
    pub drain_delay: Duration,
    pub readiness_on_saturation: Option<ReadinessOnSaturation>,
    /// Where it writes its final counters when it exits ([`SidecarMetrics::totals_line`]):
    /// in a pod the container's `terminationMessagePath`, which the kubelet copies into the
    /// container's terminated state.
    pub termination_log: Option<PathBuf>,
}

impl SidecarArgs {
    /// The command line after the program name.
    pub fn to_args(&self) -> Vec<String> {
        let mut args = listener_flags(self.listen, self.admin_listen);
        args.extend([
            "--upstream".into(),
            self.upstream.clone(),
            "--max-concurrency".into(),
            self.max_concurrency.to_string(),
            "--queue-size".into(),
            self.queue_size.to_string(),
            "--queue-timeout".into(),
            duration_flag(self.queue_timeout),
            "--drain-delay".into(),
            duration_flag(self.drain_delay),
        ]);
        if let Some(r) = &self.readiness_on_saturation {
            args.extend([
                "--readiness-queue-above".into(),
                r.queue_above.to_string(),
                "--readiness-for".into(),
                duration_flag(r.sustained_for),
            ]);
        }
        if let Some(path) = &self.termination_log {
            args.extend(["--termination-log".into(), path.display().to_string()]);
        }
        args
    }
}

/// The first word of the line a sidecar writes with its final counters.
pub const TOTALS_PREFIX: &str = "sidecar-totals";

/// One scrape of a sidecar's destination-side metrics (gauges now, counters cumulative).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SidecarMetrics {
    pub in_flight: u64,
    pub queue_depth: u64,
    pub received: u64,
    pub admitted: u64,
    pub rejected_queue_full: u64,
    pub rejected_queue_timeout: u64,
}

impl SidecarMetrics {
    /// Picks the sidecar's series out of its Prometheus (OpenMetrics) text; a missing series
    /// reads as 0.
    pub fn parse(text: &str) -> SidecarMetrics {
        let mut m = SidecarMetrics::default();
        for sample in prometheus::samples(text) {
            let value = sample.value.max(0.0) as u64;
            match (sample.name, sample.label("reason")) {
                (IN_FLIGHT, _) => m.in_flight = value,
                (QUEUE_DEPTH, _) => m.queue_depth = value,
                (RECEIVED_TOTAL, _) => m.received = value,
                (ADMITTED_TOTAL, _) => m.admitted = value,
                (REJECTED_TOTAL, Some(REASON_QUEUE_FULL)) => m.rejected_queue_full = value,
                (REJECTED_TOTAL, Some(REASON_QUEUE_TIMEOUT)) => m.rejected_queue_timeout = value,
                _ => {}
            }
        }
        m
    }

    /// The counters as one line, what the sidecar writes when it exits:
    /// `sidecar-totals received=N admitted=N rejected_queue_full=N rejected_queue_timeout=N`.
    pub fn totals_line(&self) -> String {
        format!(
            "{TOTALS_PREFIX} received={} admitted={} rejected_queue_full={} rejected_queue_timeout={}",
            self.received, self.admitted, self.rejected_queue_full, self.rejected_queue_timeout
        )
    }

    /// The counters of the last totals line in `text` (gauges read 0: nothing is in flight
    /// any more); `None` without a complete one.
    pub fn parse_totals(text: &str) -> Option<SidecarMetrics> {
        text.lines().rev().find_map(|line| {
            let rest = line.trim().strip_prefix(TOTALS_PREFIX)?;
            let mut m = SidecarMetrics::default();
            let mut seen = 0;
            for pair in rest.split_whitespace() {
                let (key, value) = pair.split_once('=')?;
                let value: u64 = value.parse().ok()?;
                let slot = match key {
                    "received" => &mut m.received,
                    "admitted" => &mut m.admitted,
                    "rejected_queue_full" => &mut m.rejected_queue_full,
                    "rejected_queue_timeout" => &mut m.rejected_queue_timeout,
                    _ => continue,
                };
                *slot = value;
                seen += 1;
            }
            (seen == 4).then_some(m)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_sidecar_series() {
        let text = "# HELP sidecar_in_flight x\n# TYPE sidecar_in_flight gauge\nsidecar_in_flight 7\n\
                    sidecar_queue_depth 3\nsidecar_received_total 1300\nsidecar_admitted_total 1200\n\
                    sidecar_rejected_total{reason=\"queue_full\"} 4\n\
                    sidecar_rejected_total{reason=\"queue_timeout\"} 9\n\
                    sidecar_request_duration_seconds_bucket{le=\"0.1\"} 5\n# EOF\n";
        assert_eq!(
            SidecarMetrics::parse(text),
            SidecarMetrics {
                in_flight: 7,
                queue_depth: 3,
                received: 1300,
                admitted: 1200,
                rejected_queue_full: 4,
                rejected_queue_timeout: 9,
            }
        );
    }

    #[test]
    fn totals_read_back_from_the_line_written() {
        let totals = SidecarMetrics {
            received: 488,
            admitted: 470,
            rejected_queue_full: 0,
            rejected_queue_timeout: 18,
            ..SidecarMetrics::default()
        };
        let log = format!("INFO draining\n{}\n", totals.totals_line());
        assert_eq!(SidecarMetrics::parse_totals(&log), Some(totals));
        assert_eq!(
            SidecarMetrics::parse_totals("sidecar-totals received=1"),
            None
        );
        assert_eq!(SidecarMetrics::parse_totals(""), None);
    }

    #[test]
    fn args_carry_every_setting() {
        let args = SidecarArgs {
            listen: "127.0.0.1:0".parse().unwrap(),
            admin_listen: "127.0.0.1:0".parse().unwrap(),
            upstream: "http://127.0.0.1:81".into(),
            max_concurrency: 8,
            queue_size: 0,
            queue_timeout: Duration::from_millis(250),
            drain_delay: Duration::from_secs(3),
            readiness_on_saturation: Some(ReadinessOnSaturation {
                queue_above: 5,
                sustained_for: Duration::from_secs(2),
            }),
            termination_log: Some("/dev/termination-log".into()),
        };
        assert_eq!(
            args.to_args().join(" "),
            "--listen 127.0.0.1:0 --admin-listen 127.0.0.1:0 --upstream http://127.0.0.1:81 \
             --max-concurrency 8 --queue-size 0 --queue-timeout 250ms --drain-delay 3000ms \
             --readiness-queue-above 5 --readiness-for 2000ms --termination-log /dev/termination-log"
        );
    }
}

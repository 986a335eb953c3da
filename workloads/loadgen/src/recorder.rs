//! Where outcomes are counted: totals, per backend (the `x-pod` of the response), per second of
//! intended send time, and latency histograms; the live Prometheus counters move alongside.
//!
//! Every request is attributed to the second of its *intended* send time, so a timeline row's
//! `attempted` equals its responses plus transport errors even when the outcome arrived later.
//! One short critical section per outcome: at tens of thousands of outcomes per second the lock is
//! held for well under 1% of the time.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use hdrhistogram::Histogram;
use prometheus_client::metrics::counter::Counter;
use tokio::time::Instant;

use crate::error_kind::ErrorKind;
use crate::metrics::Metrics;
use crate::report::ByteCounts;

/// Largest latency recorded, in µs (1 h); longer ones are recorded as 1 h.
pub(crate) const MAX_LATENCY_US: u64 = 3_600_000_000;
/// Significant digits of the run and per-backend histograms.
pub(crate) const SIGFIG: u8 = 3;
/// Significant digits of the per-second histograms (enough for a p99 line, 10× smaller).
pub(crate) const TIMELINE_SIGFIG: u8 = 2;
/// Backend name for responses without an `x-pod` header.
pub const UNKNOWN_POD: &str = "unknown";
/// Backend name for responses once 256 distinct pod names were seen.
pub const OTHER_PODS: &str = "(other)";
const MAX_BACKENDS: usize = 256;

/// What became of one attempted request.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Outcome<'a> {
    Response {
        status: u16,
        pod: Option<&'a str>,
        latency: Duration,
        /// The request's bytes and its answer's.
        bytes: ByteCounts,
    },
    Transport {
        kind: ErrorKind,
        /// The pod that last answered on the connection the request failed on (keep-alive).
        conn_pod: Option<&'a str>,
        /// What was written and read before it failed: nobody's (unattributed).
        bytes: ByteCounts,
    },
}

/// Counts per status code; a short vector because a run sees a handful of codes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct StatusCounts(pub Vec<(u16, u64)>);

impl StatusCounts {
    fn add(&mut self, code: u16) {
        match self.0.iter_mut().find(|(c, _)| *c == code) {
            Some((_, n)) => *n += 1,
            None => self.0.push((code, 1)),
        }
    }

    pub(crate) fn total(&self) -> u64 {
        self.0.iter().map(|(_, n)| n).sum()
    }
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Counts {
    pub attempted: u64,
    pub responses: StatusCounts,
    pub errors: [u64; 4],
    pub dropped: u64,
}

pub(crate) struct BackendAcc {
    pub name: String,
    pub responses: StatusCounts,
    pub errors: [u64; 4],
    pub latency: Histogram<u64>,
    /// Bytes of the requests this backend answered and of its answers.
    pub bytes: ByteCounts,
    /// Bytes of the SSE streams it served.
    pub stream_bytes: ByteCounts,
}

impl BackendAcc {
    /// Whether it answered or failed a request (a backend known only from SSE streams is
    /// not one of the report's `by_backend`).
    pub fn had_requests(&self) -> bool {
        !self.responses.0.is_empty() || self.errors.iter().any(|&n| n > 0)
    }
}

pub(crate) struct SecondAcc {
    pub counts: Counts,
    /// Responses per backend, indexed like [`Acc::backends`].
    pub by_backend: Vec<u64>,
    /// Non-2xx responses per backend, indexed like [`Acc::backends`].
    pub non_2xx_by_backend: Vec<u64>,
    /// Bytes per backend (requests and SSE streams), indexed like [`Acc::backends`].
    pub bytes_by_backend: Vec<ByteCounts>,
    pub latency: Histogram<u32>,
}

/// Adds `n` at `i`, growing `v` as needed.
fn add_at<T: Copy + Default + std::ops::AddAssign>(v: &mut Vec<T>, i: usize, n: T) {
    if v.len() <= i {
        v.resize(i + 1, T::default());
    }
    v[i] += n;
}

/// Everything counted in a run.
pub(crate) struct Acc {
    pub totals: Counts,
    pub latency: Histogram<u64>,
    /// From intended to actual send, of every attempted request.
    pub send_delay: Histogram<u64>,
    pub backends: Vec<BackendAcc>,
    pub seconds: Vec<SecondAcc>,
    /// Bytes of requests and streams no pod answered.
    pub unattributed_bytes: ByteCounts,
    pods: HashMap<String, usize>,
    /// The backend of the last response: most responses come from the same few pods, so this
    /// spares hashing the name.
    last_backend: usize,
    code_counters: Vec<(u16, Counter)>,
}

pub(crate) fn run_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_US, SIGFIG).expect("static histogram bounds")
}

fn second_histogram() -> Histogram<u32> {
    Histogram::new(TIMELINE_SIGFIG).expect("static histogram precision")
}

pub(crate) fn micros(latency: Duration) -> u64 {
    u64::try_from(latency.as_micros())
        .unwrap_or(u64::MAX)
        .clamp(1, MAX_LATENCY_US)
}

impl Acc {
    fn new() -> Self {
        Self {
            totals: Counts::default(),
            latency: run_histogram(),
            send_delay: run_histogram(),
            backends: Vec::new(),
            seconds: Vec::new(),
            unattributed_bytes: ByteCounts::ZERO,
            pods: HashMap::new(),
            last_backend: 0,
            code_counters: Vec::new(),
        }
    }

    fn second(&mut self, sec: usize) -> &mut SecondAcc {
        while self.seconds.len() <= sec {
            self.seconds.push(SecondAcc {
                counts: Counts::default(),
                by_backend: Vec::new(),
                non_2xx_by_backend: Vec::new(),
                bytes_by_backend: Vec::new(),
                latency: second_histogram(),
            });
        }
        &mut self.seconds[sec]
    }

    fn backend(&mut self, pod: &str) -> usize {
        if self
            .backends
            .get(self.last_backend)
            .is_some_and(|b| b.name == pod)
        {
            return self.last_backend;
        }
        if let Some(&i) = self.pods.get(pod) {
            self.last_backend = i;
            return i;
        }
        let name = if self.pods.len() >= MAX_BACKENDS {
            if let Some(&i) = self.pods.get(OTHER_PODS) {
                return i;
            }
            OTHER_PODS
        } else {
            pod
        };
        let i = self.backends.len();
        self.backends.push(BackendAcc {
            name: name.to_string(),
            responses: StatusCounts::default(),
            errors: [0; 4],
            latency: run_histogram(),
            bytes: ByteCounts::ZERO,
            stream_bytes: ByteCounts::ZERO,
        });
        self.pods.insert(name.to_string(), i);
        i
    }

    fn code_counter(&mut self, metrics: &Metrics, code: u16) -> &Counter {
        let i = match self.code_counters.iter().position(|(c, _)| *c == code) {
            Some(i) => i,
            None => {
                self.code_counters
                    .push((code, metrics.response_counter(code)));
                self.code_counters.len() - 1
            }
        };
        &self.code_counters[i].1
    }
}

/// Thread-safe accumulator shared by the workers of a run.
pub(crate) struct Recorder {
    start: Instant,
    metrics: Metrics,
    error_counters: [Counter; 4],
    acc: Mutex<Acc>,
}

impl Recorder {
    pub(crate) fn new(start: Instant, metrics: Metrics) -> Self {
        let error_counters = ErrorKind::ALL.map(|k| metrics.error_counter(k));
        Self {
            start,
            metrics,
            error_counters,
            acc: Mutex::new(Acc::new()),
        }
    }

    pub(crate) fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    fn second_of(&self, intended: Instant) -> usize {
        usize::try_from(intended.saturating_duration_since(self.start).as_secs()).unwrap_or(0)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Acc> {
        self.acc
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Counts one attempted request intended at `intended` and sent `send_delay` later.
    pub(crate) fn record(&self, intended: Instant, send_delay: Duration, outcome: Outcome<'_>) {
        let sec = self.second_of(intended);
        let mut acc = self.lock();
        let acc = &mut *acc;
        acc.totals.attempted += 1;
        acc.send_delay.saturating_record(micros(send_delay));
        match outcome {
            Outcome::Response {
                status,
                pod,
                latency,
                bytes,
            } => {
                let us = micros(latency);
                acc.totals.responses.add(status);
                acc.latency.saturating_record(us);
                let b = acc.backend(pod.unwrap_or(UNKNOWN_POD));
                let backend = &mut acc.backends[b];
                backend.responses.add(status);
                backend.latency.saturating_record(us);
                backend.bytes += bytes;
                let second = acc.second(sec);
                second.counts.attempted += 1;
                second.counts.responses.add(status);
                // Auto-resizing: `saturating_record` would clamp instead of growing it.
                if second.latency.record(us).is_err() {
                    second.latency.saturating_record(us);
                }
                add_at(&mut second.by_backend, b, 1);
                if !(200..300).contains(&status) {
                    add_at(&mut second.non_2xx_by_backend, b, 1);
                }
                add_at(&mut second.bytes_by_backend, b, bytes);
                acc.code_counter(&self.metrics, status).inc();
            }
            Outcome::Transport {
                kind,
                conn_pod,
                bytes,
            } => {
                acc.totals.errors[kind.index()] += 1;
                acc.unattributed_bytes += bytes;
                if let Some(pod) = conn_pod {
                    let b = acc.backend(pod);
                    acc.backends[b].errors[kind.index()] += 1;
                }
                let second = acc.second(sec);
                second.counts.attempted += 1;
                second.counts.errors[kind.index()] += 1;
                self.error_counters[kind.index()].inc();
            }
        }
    }

    /// Counts one arrival that was never sent.
    pub(crate) fn dropped(&self, intended: Instant) {
        let sec = self.second_of(intended);
        let mut acc = self.lock();
        acc.totals.dropped += 1;
        acc.second(sec).counts.dropped += 1;
        self.metrics.dropped.inc();
    }

    /// Counts bytes of an SSE stream that crossed the wire at `at`: the pod's that serves
    /// it, or nobody's (`None`: the stream failed before a response head named one).
    pub(crate) fn stream_bytes(&self, pod: Option<&str>, bytes: ByteCounts, at: Instant) {
        if bytes.is_zero() {
            return;
        }
        let sec = self.second_of(at);
        let mut acc = self.lock();
        let acc = &mut *acc;
        match pod {
            Some(pod) => {
                let b = acc.backend(pod);
                acc.backends[b].stream_bytes += bytes;
                add_at(&mut acc.second(sec).bytes_by_backend, b, bytes);
            }
            None => acc.unattributed_bytes += bytes,
        }
    }

    /// Takes the counts out (the run is over).
    pub(crate) fn finish(&self) -> Acc {
        std::mem::replace(&mut *self.lock(), Acc::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_land_in_totals_backends_and_seconds() {
        let start = Instant::now();
        let rec = Recorder::new(start, Metrics::new());
        let ok = Outcome::Response {
            status: 200,
            pod: Some("a"),
            latency: Duration::from_millis(3),
            bytes: ByteCounts {
                sent: 40,
                received: 100,
            },
        };
        rec.record(start, Duration::ZERO, ok);
        rec.record(start + Duration::from_millis(2500), Duration::ZERO, ok);
        rec.record(
            start + Duration::from_millis(2600),
            Duration::from_millis(2),
            Outcome::Response {
                status: 503,
                pod: None,
                latency: Duration::from_millis(40),
                bytes: ByteCounts {
                    sent: 40,
                    received: 60,
                },
            },
        );
        rec.record(
            start + Duration::from_millis(100),
            Duration::ZERO,
            Outcome::Transport {
                kind: ErrorKind::Reset,
                conn_pod: Some("a"),
                bytes: ByteCounts {
                    sent: 40,
                    received: 3,
                },
            },
        );
        rec.dropped(start + Duration::from_millis(1200));
        rec.stream_bytes(
            Some("s"),
            ByteCounts {
                sent: 70,
                received: 500,
            },
            start + Duration::from_millis(1900),
        );
        let acc = rec.finish();
        assert_eq!(acc.totals.attempted, 4);
        assert_eq!(acc.totals.responses.0, vec![(200, 2), (503, 1)]);
        assert_eq!(acc.totals.errors, [0, 1, 0, 0]);
        assert_eq!(acc.totals.dropped, 1);
        assert_eq!(acc.latency.len(), 3);
        assert_eq!(acc.send_delay.len(), 4);
        assert_eq!(
            acc.send_delay.max(),
            acc.send_delay.highest_equivalent(2_000)
        );
        assert_eq!(acc.backends.len(), 3);
        assert_eq!(acc.backends[0].name, "a");
        assert_eq!(acc.backends[0].errors, [0, 1, 0, 0]);
        assert_eq!(acc.backends[1].name, UNKNOWN_POD);
        assert_eq!(acc.seconds.len(), 3);
        assert_eq!(acc.seconds[0].counts.attempted, 2);
        assert_eq!(acc.seconds[1].counts.dropped, 1);
        assert_eq!(acc.seconds[2].by_backend, vec![1, 1]);
        assert_eq!(acc.seconds[2].non_2xx_by_backend, vec![0, 1]);
        // Bytes: each answer's to its pod, the reset's to nobody, the stream's to its pod in
        // the second it crossed (a backend of its own, known only from the stream).
        let b = |sent, received| ByteCounts { sent, received };
        assert_eq!(acc.backends[0].bytes, b(80, 200));
        assert_eq!(acc.backends[1].bytes, b(40, 60));
        assert_eq!(acc.unattributed_bytes, b(40, 3));
        assert_eq!(
            (acc.backends[2].name.as_str(), acc.backends[2].stream_bytes),
            ("s", b(70, 500))
        );
        assert!(!acc.backends[2].had_requests());
        assert_eq!(acc.seconds[0].bytes_by_backend, vec![b(40, 100)]);
        assert_eq!(
            acc.seconds[1].bytes_by_backend,
            vec![b(0, 0), b(0, 0), b(70, 500)]
        );
        assert_eq!(acc.seconds[2].bytes_by_backend, vec![b(40, 100), b(40, 60)]);
        assert_eq!(acc.seconds[2].latency.len(), 2);
        // 2 significant digits: 40 ms within 1%.
        let max = acc.seconds[2].latency.max();
        assert!((39_600..=40_400).contains(&max), "{max}");
        assert_eq!(acc.latency.max(), acc.latency.highest_equivalent(40_000));
    }
}

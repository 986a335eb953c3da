//! Server-sent-event streams: `--sse-streams K` slots, each holding one stream open on its own
//! TCP connection (`GET` with `accept: text/event-stream`) for the whole run, reconnecting with
//! exponential backoff (100 ms doubling to 5 s, jittered, reset after a stream that delivered
//! events). Events are counted per pod (the stream response's `x-pod`), as are streams that
//! failed to open or ended before the run did, and the stream's bytes: to the pod once its
//! response head names it (per second as they cross, in the run's [`Recorder`]), to nobody's
//! before that. Long-lived streams are what held the sidecar's
//! concurrency budget in incident 1.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::BodyExt;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use workload_common::identity::POD_HEADER;

use crate::client::connect;
use crate::config::Target;
use crate::counting::WireCounter;
use crate::error_kind::classify_hyper;
use crate::metrics::Metrics;
use crate::recorder::{Recorder, UNKNOWN_POD};
use crate::report::{SseBackend, SseReport};

const INITIAL_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// Counts events in an SSE byte stream: an event is dispatched at a blank line after at least one
/// `data` field; comment lines (`:`…) and other fields alone dispatch nothing.
#[derive(Debug, Default)]
pub(crate) struct EventCounter {
    line_len: usize,
    /// First bytes of the current line, to recognise `data` and comments.
    head: [u8; 5],
    after_cr: bool,
    has_data: bool,
}

impl EventCounter {
    /// Feeds a chunk; returns the number of events it completed.
    pub(crate) fn feed(&mut self, chunk: &[u8]) -> u64 {
        let mut events = 0;
        for &b in chunk {
            match b {
                b'\n' if self.after_cr => self.after_cr = false,
                b'\n' | b'\r' => {
                    self.after_cr = b == b'\r';
                    events += self.end_line();
                }
                _ => {
                    self.after_cr = false;
                    if self.line_len < self.head.len() {
                        self.head[self.line_len] = b;
                    }
                    self.line_len += 1;
                }
            }
        }
        events
    }

    fn end_line(&mut self) -> u64 {
        let len = self.line_len;
        self.line_len = 0;
        if len == 0 {
            return u64::from(std::mem::take(&mut self.has_data));
        }
        let head = &self.head[..len.min(self.head.len())];
        if head == b"data" || head == b"data:" {
            self.has_data = true;
        }
        0
    }
}

#[derive(Default)]
struct Acc {
    report: SseReport,
}

/// SSE counts shared by the stream slots.
pub(crate) struct SseStats {
    metrics: Metrics,
    acc: Mutex<Acc>,
}

impl SseStats {
    pub(crate) fn new(metrics: Metrics, streams: usize) -> Self {
        let mut acc = Acc::default();
        acc.report.streams = streams as u64;
        Self {
            metrics,
            acc: Mutex::new(acc),
        }
    }

    fn with<R>(&self, f: impl FnOnce(&mut SseReport) -> R) -> R {
        f(&mut self.acc.lock().unwrap_or_else(|p| p.into_inner()).report)
    }

    fn backend<'a>(r: &'a mut SseReport, pod: &str) -> &'a mut SseBackend {
        r.by_backend.entry(pod.to_string()).or_default()
    }

    fn opened(&self, pod: &str) {
        self.with(|r| {
            r.streams_opened += 1;
            Self::backend(r, pod).opened += 1;
        });
        self.metrics.sse_streams_open.inc();
    }

    fn events(&self, pod: &str, n: u64) {
        self.with(|r| {
            r.events += n;
            Self::backend(r, pod).events += n;
        });
        self.metrics.sse_events.inc_by(n);
    }

    fn failed(&self, reason: &str, pod: Option<&str>) {
        self.with(|r| {
            r.streams_failed += 1;
            *r.failures.entry(reason.to_string()).or_default() += 1;
            if let Some(pod) = pod {
                Self::backend(r, pod).failed += 1;
            }
        });
    }

    fn reconnect(&self) {
        self.with(|r| r.reconnects += 1);
    }

    pub(crate) fn finish(&self) -> SseReport {
        self.with(|r| r.clone())
    }
}

enum StreamEnd {
    /// The run stopped (not a failure).
    Stopped,
    Failed {
        reason: String,
        pod: Option<String>,
        events: u64,
    },
}

/// What one stream slot needs.
pub(crate) struct StreamSlot {
    pub index: usize,
    pub addr: SocketAddr,
    pub target: Arc<Target>,
    pub timeout: Duration,
    pub stop: CancellationToken,
    pub stats: Arc<SseStats>,
    /// Where the stream's bytes are counted.
    pub rec: Arc<Recorder>,
    pub seed: u64,
}

impl StreamSlot {
    /// Keeps a stream open until the stop, reconnecting after failures.
    pub(crate) async fn run(self) {
        let mut rng = SmallRng::seed_from_u64(
            self.seed ^ (self.index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        let mut backoff = INITIAL_BACKOFF;
        let mut first = true;
        while !self.stop.is_cancelled() {
            if !std::mem::take(&mut first) {
                self.stats.reconnect();
            }
            match self.one_stream().await {
                StreamEnd::Stopped => break,
                StreamEnd::Failed {
                    reason,
                    pod,
                    events,
                } => {
                    self.stats.failed(&reason, pod.as_deref());
                    if events > 0 {
                        backoff = INITIAL_BACKOFF;
                    }
                }
            }
            let delay = backoff.mul_f64(rng.random_range(0.5..=1.0));
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = self.stop.cancelled() => break,
            }
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    async fn one_stream(&self) -> StreamEnd {
        let wire = Arc::new(WireCounter::default());
        let (end, pod) = self.one_stream_counted(&wire).await;
        // What crossed after the last count: the pod's if the head named one.
        self.rec
            .stream_bytes(pod.as_deref(), wire.take(), Instant::now());
        end
    }

    /// The stream's end and the pod its response head named, if it got that far.
    async fn one_stream_counted(&self, wire: &Arc<WireCounter>) -> (StreamEnd, Option<String>) {
        let failed = |reason: &str, pod: Option<String>, events| StreamEnd::Failed {
            reason: reason.to_string(),
            pod,
            events,
        };
        let opening = async {
            let (mut sender, conn) = connect(self.addr, wire.clone()).await?;
            tokio::spawn(async move {
                if let Err(e) = conn.await {
                    tracing::debug!("stream connection ended: {e}");
                }
            });
            let response = sender
                .send_request(self.target.request())
                .await
                .map_err(|e| classify_hyper(&e))?;
            Ok::<_, crate::error_kind::ErrorKind>((sender, response))
        };
        let deadline = Instant::now() + self.timeout;
        let opened = tokio::select! {
            r = tokio::time::timeout_at(deadline, opening) => r,
            () = self.stop.cancelled() => return (StreamEnd::Stopped, None),
        };
        let (_sender, response) = match opened {
            Err(_) => return (failed("timeout", None, 0), None),
            Ok(Err(kind)) => return (failed(kind.as_str(), None, 0), None),
            Ok(Ok(pair)) => pair,
        };
        let pod = response
            .headers()
            .get(POD_HEADER)
            .and_then(|v| v.to_str().ok())
            .unwrap_or(UNKNOWN_POD)
            .to_string();
        self.rec
            .stream_bytes(Some(&pod), wire.take(), Instant::now());
        if !response.status().is_success() {
            let reason = format!("status_{}", response.status().as_u16());
            return (failed(&reason, Some(pod.clone()), 0), Some(pod));
        }
        self.stats.opened(&pod);
        let mut body = response.into_body();
        let mut counter = EventCounter::default();
        let mut events = 0;
        let end = loop {
            tokio::select! {
                biased;
                () = self.stop.cancelled() => break StreamEnd::Stopped,
                frame = body.frame() => match frame {
                    None => break failed("ended", Some(pod.clone()), events),
                    Some(Err(e)) => {
                        break failed(classify_hyper(&e).as_str(), Some(pod.clone()), events)
                    }
                    Some(Ok(frame)) => {
                        let n = frame.data_ref().map_or(0, |d| counter.feed(d));
                        if n > 0 {
                            events += n;
                            self.stats.events(&pod, n);
                        }
                        self.rec.stream_bytes(Some(&pod), wire.take(), Instant::now());
                    }
                },
            }
        };
        self.stats.metrics.sse_streams_open.dec();
        (end, Some(pod))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_events_not_comments_or_partial_ones() {
        let mut c = EventCounter::default();
        assert_eq!(c.feed(b": ping\n\n"), 0);
        assert_eq!(c.feed(b"event: flag\ndata: {\"a\":1}\n\n"), 1);
        assert_eq!(c.feed(b"id: 7\n\n"), 0);
        // Split across chunks and CRLF line ends.
        assert_eq!(c.feed(b"da"), 0);
        assert_eq!(c.feed(b"ta: x\r"), 0);
        assert_eq!(c.feed(b"\n\r\ndata\n\ndata: y\n"), 2);
        assert_eq!(c.feed(b"\n"), 1);
        // A field named "database" is not data.
        assert_eq!(c.feed(b"database: z\n\n"), 0);
    }
}

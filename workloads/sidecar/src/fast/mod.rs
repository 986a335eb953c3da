//! The main listener's raw HTTP/1 keep-alive fast path. Each client connection is one task
//! that parses request heads with `httparse` from a reused buffer, admits each request through
//! the same admission queue and concurrency slots as the tower stack ([`crate::queue`],
//! [`crate::limit`]), sends it over a pooled upstream connection ([`pool`]) and relays the
//! response through small reused buffers — counting every metric exactly like the general path.
//!
//! What the fast path cannot carry ([`head`] says what) goes to the general path: the
//! connection, with the bytes read so far ([`rewind`]), is served by hyper with the tower stack
//! ([`crate::edge`]) from then on. [`serve`] is the accept loop with the drain-then-stop
//! shutdown of `workload_common::serve`.

mod chunked;
mod conn;
mod head;
mod io;
mod local;
mod pool;
mod relay;
mod rewind;
pub(crate) mod serve;
mod state;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use hyper::server::conn::http1;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use workload_common::identity::IdentityHeaders;
use workload_common::serve::ServeOptions;

use crate::edge::Edge;
use crate::metrics::{CodeLabel, Metrics, OutcomeLabel};
use crate::queue::QueueHandle;
use prometheus_client::metrics::counter::Counter;

use self::local::LocalReplies;
use self::pool::Pool;

/// Largest upstream response head accepted (hyper's client reads heads up to ~400 KiB; a
/// larger one is a 502 `other` here).
const MAX_RESPONSE_HEAD: usize = 64 * 1024;

/// Everything the connections share.
pub(crate) struct FastPath {
    /// False: every connection goes to the general path at once.
    pub(crate) enabled: bool,
    pub(crate) semaphore: Arc<Semaphore>,
    pub(crate) queue: QueueHandle,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) pool: Pool,
    pub(crate) upstream_timeout: Option<Duration>,
    pub(crate) header_read_timeout: Duration,
    pub(crate) max_head: usize,
    /// See [`FastPathConfig::host`].
    pub(crate) host: String,
    /// Cancelled when accepting stops: idle connections close, streams end cleanly.
    pub(crate) closing: CancellationToken,
    pub(crate) replies: LocalReplies,
    /// The general path.
    pub(crate) edge: Edge,
    pub(crate) http1: http1::Builder,
    /// `sidecar_requests_total{outcome="upstream"}`, looked up once.
    upstream_outcome: Counter,
    /// `sidecar_upstream_responses_total{code}` by code (100..=599), each looked up once, on
    /// its first response (so a series appears with its first count, as on the general path).
    codes: Box<[OnceLock<Counter>]>,
}

/// What [`FastPath::new`] needs beyond the shared pieces.
pub(crate) struct FastPathConfig {
    pub(crate) enabled: bool,
    /// `host:port` of the upstream, to connect to.
    pub(crate) authority: String,
    /// The `Host` header for requests that came without one: the upstream URI's authority as
    /// written (what hyper-util's client sets).
    pub(crate) host: String,
    pub(crate) connect_timeout: Duration,
    pub(crate) upstream_timeout: Option<Duration>,
    pub(crate) serve: ServeOptions,
}

impl FastPath {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        config: FastPathConfig,
        semaphore: Arc<Semaphore>,
        queue: QueueHandle,
        metrics: Arc<Metrics>,
        closing: CancellationToken,
        identity: &IdentityHeaders,
        edge: Edge,
    ) -> Self {
        Self {
            enabled: config.enabled,
            semaphore,
            queue,
            metrics: metrics.clone(),
            pool: Pool::new(config.authority, config.connect_timeout),
            upstream_timeout: config.upstream_timeout,
            header_read_timeout: config.serve.header_read_timeout,
            max_head: config.serve.max_head(),
            host: config.host,
            closing,
            replies: LocalReplies::new(identity),
            edge,
            http1: config.serve.http1_builder(),
            upstream_outcome: metrics
                .requests
                .get_or_create(&OutcomeLabel {
                    outcome: "upstream",
                })
                .clone(),
            codes: (100..600).map(|_| OnceLock::new()).collect(),
        }
    }

    /// Counts a response head from the upstream: `upstream_responses{code}` and
    /// `requests{outcome="upstream"}`, without the label lookups of the general path.
    pub(crate) fn count_response(&self, code: u16) {
        match self.codes.get(usize::from(code).wrapping_sub(100)) {
            Some(cell) => {
                let counter = cell.get_or_init(|| {
                    self.metrics
                        .upstream_responses
                        .get_or_create(&CodeLabel { code })
                        .clone()
                });
                counter.inc();
            }
            None => self.metrics.upstream_response(code),
        };
        self.upstream_outcome.inc();
    }
}

//! The data plane of an ALB-like load balancer in IP target mode (incident §4, "Rolling-update
//! 502s behind a load balancer"): an HTTP/1 reverse proxy on loopback that sends each request
//! straight to a pod, round robin over its routable targets.
//!
//! Which targets are routable is decided by the target group ([`crate::target_group`], run by
//! [`crate::controller`]: registration, deregistration, draining lags) and pushed here with
//! [`LoadBalancer::set_targets`]; a draining
//! target is simply absent from the routable set, and requests already sent to it go on.
//! Connections to targets are kept alive and pooled per target; client connections are kept
//! alive too. Response bodies (SSE, chunked) are relayed frame by frame without buffering.
//!
//! Failures are reported the way an ALB reports them, with `x-lb-target: <pod>` on every
//! response relayed from or generated for a chosen target:
//! - connection to the target refused → 502 `x-lb-error: connect` ("upstream connect error");
//! - target closed/reset the connection before a response head → 502 `x-lb-error: reset`
//!   (an unparsable head → 502 `malformed`);
//! - no response head within the target timeout (default 60 s) → 504 `x-lb-error: timeout`
//!   (TCP connect not done within the connect timeout → 504 `connect-timeout`); after the head
//!   was relayed, the same idle timeout between body frames cuts the stream;
//! - no routable target → 503 `x-lb-error: no-target`, no `x-lb-target`.
//!
//! Accounting ([`LoadBalancer::snapshot`], see [`stats`]): per pod, requests sent, responses by
//! status, the balancer's errors by reason, and buckets (`bucket` wide, counted from the epoch
//! given at start) of the time each request was sent in, plus the pod's routable-set membership
//! changes — enough to answer "errors inside each pod's termination window" and "requests that
//! reached a pod after its endpoint was removed".

pub mod relay;
pub mod stats;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use workload_common::headers::strip_hop_by_hop;

use http::header::{HeaderName, HeaderValue};
use http::uri::{PathAndQuery, Scheme, Uri};
use http::{Request, Response, Version};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

pub use relay::{ERROR_HEADER, LbBody, TARGET_HEADER};
use relay::{RelayBody, Ticket};
use stats::State;
pub use stats::{Counts, LbErrorReason, LbStats, Outcome, PodStats, RoutableChange};

/// A pod the balancer can route to (IP target mode: the pod's own address).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodTarget {
    pub pod: String,
    pub addr: SocketAddr,
}

/// Timeouts of the balancer; the defaults are the ALB's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LbConfig {
    /// Longest wait for a target's response head, and longest silence between frames of a
    /// relayed body (the ALB idle timeout, 60 s).
    pub target_timeout: Duration,
    /// Longest wait for the TCP connection to a target (ALB: 10 s).
    pub connect_timeout: Duration,
    /// How long an idle pooled connection to a target is kept.
    pub pool_idle_timeout: Duration,
    /// A client connection that does not deliver a complete request head within this time is
    /// closed.
    pub client_header_timeout: Duration,
    /// Width of the accounting buckets (default 1 s; finer for time-scaled runs).
    pub bucket: Duration,
}

impl Default for LbConfig {
    fn default() -> Self {
        LbConfig {
            bucket: Duration::from_secs(1),
            target_timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
            pool_idle_timeout: Duration::from_secs(60),
            client_header_timeout: Duration::from_secs(60),
        }
    }
}

/// State shared by the handle, the connections and the in-flight requests.
struct Shared {
    epoch: Instant,
    /// The epoch on the wall clock (Unix µs), for readers on another clock.
    epoch_unix_us: u64,
    config: LbConfig,
    client: Client<HttpConnector, Incoming>,
    state: Mutex<State>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn since_epoch(&self) -> Duration {
        Instant::now().saturating_duration_since(self.epoch)
    }
}

/// Handle of a running balancer; clones share it.
#[derive(Clone)]
pub struct LoadBalancer {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for LoadBalancer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadBalancer")
            .field("addr", &self.addr)
            .field("config", &self.shared.config)
            .finish_non_exhaustive()
    }
}

impl LoadBalancer {
    /// Binds 127.0.0.1:0 and serves until `stop` is cancelled. Time buckets count from
    /// `epoch`. No target is routable until [`LoadBalancer::set_targets`].
    pub async fn start(
        epoch: Instant,
        config: LbConfig,
        stop: CancellationToken,
    ) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        Self::serve(listener, epoch, config, stop)
    }

    /// Serves clients on `listener` until `stop` is cancelled (as [`LoadBalancer::start`]).
    pub fn serve(
        listener: TcpListener,
        epoch: Instant,
        config: LbConfig,
        stop: CancellationToken,
    ) -> std::io::Result<Self> {
        let addr = listener.local_addr()?;
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(config.connect_timeout));
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(config.pool_idle_timeout)
            .pool_timer(TokioTimer::new())
            .build(connector);
        let bucket_ms = (config.bucket.as_millis() as u64).max(1);
        let shared = Arc::new(Shared {
            epoch,
            epoch_unix_us: unix_us_at(epoch),
            config,
            client,
            state: Mutex::new(State::with_bucket_ms(bucket_ms)),
        });
        let lb = LoadBalancer { addr, shared };
        let worker = lb.clone();
        tokio::spawn(async move { worker.accept_loop(listener, stop).await });
        Ok(lb)
    }

    /// The address clients send to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Replaces the routable set; requests in flight to removed targets are not touched.
    pub fn set_targets(&self, targets: Vec<PodTarget>) {
        let since = self.shared.since_epoch();
        self.shared.lock().set_targets(targets, since);
    }

    /// The routable set.
    pub fn targets(&self) -> Vec<PodTarget> {
        self.shared.lock().targets.clone()
    }

    /// The accounting so far.
    pub fn snapshot(&self) -> LbStats {
        let since = self.shared.since_epoch();
        self.shared
            .lock()
            .snapshot(since, self.shared.epoch_unix_us)
    }

    async fn accept_loop(self, listener: TcpListener, stop: CancellationToken) {
        loop {
            let accepted = tokio::select! {
                () = stop.cancelled() => return,
                accepted = listener.accept() => accepted,
            };
            let Ok((stream, peer)) = accepted else {
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            };
            let _ = stream.set_nodelay(true);
            self.shared.lock().connections += 1;
            let shared = self.shared.clone();
            let stop = stop.clone();
            let port = self.addr.port();
            tokio::spawn(async move {
                let header_timeout = shared.config.client_header_timeout;
                let service = service_fn(move |req| {
                    let shared = shared.clone();
                    async move { Ok::<_, Infallible>(handle(shared, req, peer, port).await) }
                });
                let conn = hyper::server::conn::http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(header_timeout)
                    .keep_alive(true)
                    .serve_connection(TokioIo::new(stream), service);
                tokio::select! {
                    () = stop.cancelled() => {}
                    _ = conn => {}
                }
            });
        }
    }
}

/// Routes one client request: picks the next routable target and relays, or answers itself.
async fn handle(
    shared: Arc<Shared>,
    mut req: Request<Incoming>,
    peer: SocketAddr,
    port: u16,
) -> Response<LbBody> {
    let since = shared.since_epoch();
    let Some((target, bucket)) = shared.lock().pick(since) else {
        return relay::no_target_response();
    };
    let mut ticket = Ticket::new(shared.clone(), target.pod, bucket);

    let path = req
        .uri()
        .path_and_query()
        .cloned()
        .unwrap_or_else(|| PathAndQuery::from_static("/"));
    let uri = Uri::builder()
        .scheme(Scheme::HTTP)
        .authority(target.addr.to_string())
        .path_and_query(path)
        .build();
    match uri {
        Ok(uri) => *req.uri_mut() = uri,
        Err(_) => {
            // Unreachable for a SocketAddr authority and a parsed path; answer as a bad target.
            ticket.record(Outcome::LbError(LbErrorReason::Malformed));
            return relay::error_response(LbErrorReason::Malformed, ticket.pod());
        }
    }
    *req.version_mut() = Version::HTTP_11;
    let headers = req.headers_mut();
    strip_hop_by_hop(headers);
    let forwarded_for = match headers.get("x-forwarded-for").and_then(|v| v.to_str().ok()) {
        Some(previous) => format!("{previous}, {}", peer.ip()),
        None => peer.ip().to_string(),
    };
    for (name, value) in [
        ("x-forwarded-for", forwarded_for),
        ("x-forwarded-proto", "http".to_string()),
        ("x-forwarded-port", port.to_string()),
    ] {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(HeaderName::from_static(name), value);
        }
    }

    let timeout = shared.config.target_timeout;
    let reason = match tokio::time::timeout(timeout, shared.client.request(req)).await {
        Ok(Ok(response)) => {
            ticket.record(Outcome::Relayed(response.status().as_u16()));
            let (mut parts, body) = response.into_parts();
            strip_hop_by_hop(&mut parts.headers);
            if let Ok(value) = HeaderValue::from_str(ticket.pod()) {
                parts.headers.insert(TARGET_HEADER, value);
            }
            let body = RelayBody::new(body, timeout, ticket);
            return Response::from_parts(parts, http_body_util::BodyExt::boxed_unsync(body));
        }
        Ok(Err(error)) => relay::classify(&error),
        Err(_elapsed) => LbErrorReason::Timeout,
    };
    ticket.record(Outcome::LbError(reason));
    relay::error_response(reason, ticket.pod())
}

/// The wall-clock time (Unix µs) of `at`, an instant of the monotonic clock.
fn unix_us_at(at: Instant) -> u64 {
    let now = Instant::now();
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let at_wall = if at <= now {
        wall.saturating_sub(now - at)
    } else {
        wall + (at - now)
    };
    u64::try_from(at_wall.as_micros()).unwrap_or(u64::MAX)
}

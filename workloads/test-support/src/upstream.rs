//! A small hyper HTTP/1 server playing the workload behind the sidecar. It counts, at the
//! upstream, ordinary requests in flight (current and maximum), open streams, the most of both at
//! once (what the sidecar's limit bounds), requests and stream requests received, and
//! connections accepted.
//!
//! Routes:
//! - `/stream`: an SSE stream, event `hello` at once, then `data: beat N` every 200 ms, at most
//!   300 events;
//! - `/sse?beat_ms=N`: an SSE stream, event `hello` at once, then a heartbeat comment
//!   (`: beat N`) every N ms (default 5000), unending;
//! - `/gate`: waits for a permit of [`Upstream::gate`];
//! - `/work?ms=N` (default 10) and `/slow?ms=N` (default 100): sleep N ms, body `work`/`slow`;
//! - `/status/N`: status N; `/big?bytes=N`: a body of N bytes `x`; `/echo`: reads the whole
//!   request body, answers its length; `/headers`: the request's header names, sorted,
//!   comma-separated; `/host`: the request's `Host`;
//! - anything else: 200 `fast`.
//!
//! Every response carries `x-pod: upstream-pod` ([`UPSTREAM_POD`]).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

/// The `x-pod` of every response.
pub const UPSTREAM_POD: &str = "upstream-pod";

/// What the upstream saw.
#[derive(Debug, Default)]
pub struct Counters {
    /// Ordinary (non-stream) requests being handled right now.
    pub in_flight: AtomicUsize,
    /// Most ordinary requests handled at once.
    pub max_in_flight: AtomicUsize,
    /// Streams whose body is alive.
    pub streams_open: AtomicUsize,
    /// Most ordinary requests + open streams at once (what the sidecar's limit bounds).
    pub max_total: AtomicUsize,
    /// Ordinary requests received.
    pub requests: AtomicUsize,
    /// Stream requests received.
    pub stream_requests: AtomicUsize,
    /// Connections accepted.
    pub connections: AtomicUsize,
}

/// A running upstream; stops accepting when dropped.
pub struct Upstream {
    pub addr: SocketAddr,
    pub counters: Arc<Counters>,
    /// `/gate` requests wait for one permit each.
    pub gate: Arc<Semaphore>,
    task: JoinHandle<()>,
}

impl Drop for Upstream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Upstream {
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let counters = Arc::new(Counters::default());
        let gate = Arc::new(Semaphore::new(0));
        let (c, g) = (counters.clone(), gate.clone());
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                c.connections.fetch_add(1, Ordering::SeqCst);
                let (c, g) = (c.clone(), g.clone());
                let svc = service_fn(move |req| handle(req, c.clone(), g.clone()));
                tokio::spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), svc)
                        .await;
                });
            }
        });
        Self {
            addr,
            counters,
            gate,
            task,
        }
    }

    pub fn uri(&self) -> http::Uri {
        format!("http://{}", self.addr).parse().unwrap()
    }

    pub fn in_flight(&self) -> usize {
        self.counters.in_flight.load(Ordering::SeqCst)
    }

    pub fn max_in_flight(&self) -> usize {
        self.counters.max_in_flight.load(Ordering::SeqCst)
    }

    pub fn max_total(&self) -> usize {
        self.counters.max_total.load(Ordering::SeqCst)
    }

    pub fn streams_open(&self) -> usize {
        self.counters.streams_open.load(Ordering::SeqCst)
    }

    /// Ordinary (non-stream) requests received.
    pub fn requests(&self) -> usize {
        self.counters.requests.load(Ordering::SeqCst)
    }

    pub fn stream_requests(&self) -> usize {
        self.counters.stream_requests.load(Ordering::SeqCst)
    }

    pub fn connections(&self) -> usize {
        self.counters.connections.load(Ordering::SeqCst)
    }

    /// Starts a new measurement window for the maxima.
    pub fn reset_maxima(&self) {
        self.counters.max_in_flight.store(0, Ordering::SeqCst);
        self.counters.max_total.store(0, Ordering::SeqCst);
    }
}

fn note_total(c: &Counters) {
    let total = c.in_flight.load(Ordering::SeqCst) + c.streams_open.load(Ordering::SeqCst);
    c.max_total.fetch_max(total, Ordering::SeqCst);
}

/// One ordinary request in flight at the upstream while alive.
struct InFlight(Arc<Counters>);

impl InFlight {
    fn enter(c: &Arc<Counters>) -> Self {
        let now = c.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        c.max_in_flight.fetch_max(now, Ordering::SeqCst);
        note_total(c);
        Self(c.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// One open stream while its response body is alive.
struct StreamOpen(Arc<Counters>);

impl StreamOpen {
    fn enter(c: &Arc<Counters>) -> Self {
        c.streams_open.fetch_add(1, Ordering::SeqCst);
        note_total(c);
        Self(c.clone())
    }
}

impl Drop for StreamOpen {
    fn drop(&mut self) {
        self.0.streams_open.fetch_sub(1, Ordering::SeqCst);
    }
}

type Body = BoxBody<Bytes, Infallible>;

/// A 200 with `body`, carrying the upstream's `x-pod`.
fn ok(body: impl Into<Bytes>) -> Response<Body> {
    let mut resp = Response::new(Full::new(body.into()).boxed());
    resp.headers_mut()
        .insert("x-pod", http::HeaderValue::from_static(UPSTREAM_POD));
    resp
}

fn text(status: StatusCode, body: &'static str) -> Response<Body> {
    let mut resp = ok(Bytes::from_static(body.as_bytes()));
    *resp.status_mut() = status;
    resp
}

fn param(req: &Request<Incoming>, key: &str) -> Option<u64> {
    req.uri().query()?.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == key).then(|| v.parse().ok()).flatten()
    })
}

async fn handle(
    req: Request<Incoming>,
    c: Arc<Counters>,
    gate: Arc<Semaphore>,
) -> Result<Response<Body>, Infallible> {
    let path = req.uri().path().to_string();
    match path.as_str() {
        "/stream" => {
            c.stream_requests.fetch_add(1, Ordering::SeqCst);
            let beat = |n| Bytes::from(format!("data: beat {n}\n\n"));
            let every = Duration::from_millis(200);
            return Ok(stream(StreamOpen::enter(&c), every, beat, Some(300)));
        }
        "/sse" => {
            c.stream_requests.fetch_add(1, Ordering::SeqCst);
            let beat = |n| Bytes::from(format!(": beat {n}\n\n"));
            let every = Duration::from_millis(param(&req, "beat_ms").unwrap_or(5000));
            return Ok(stream(StreamOpen::enter(&c), every, beat, None));
        }
        _ => {}
    }
    c.requests.fetch_add(1, Ordering::SeqCst);
    let _in_flight = InFlight::enter(&c);
    Ok(match path.as_str() {
        "/gate" => {
            gate.acquire().await.expect("gate never closes").forget();
            text(StatusCode::OK, "gate")
        }
        "/work" => {
            let ms = param(&req, "ms").unwrap_or(10);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            text(StatusCode::OK, "work")
        }
        "/slow" => {
            let ms = param(&req, "ms").unwrap_or(100);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            text(StatusCode::OK, "slow")
        }
        "/big" => {
            let n = param(&req, "bytes").unwrap_or(1 << 20) as usize;
            ok(vec![b'x'; n])
        }
        "/echo" => match req.into_body().collect().await {
            Ok(body) => ok(body.to_bytes().len().to_string()),
            Err(_) => text(StatusCode::BAD_REQUEST, "broken body"),
        },
        "/host" => {
            let host = req.headers().get("host").and_then(|h| h.to_str().ok());
            ok(host.unwrap_or("").to_string())
        }
        "/headers" => {
            let mut names: Vec<&str> = req.headers().keys().map(|k| k.as_str()).collect();
            names.sort_unstable();
            ok(names.join(","))
        }
        p if p.starts_with("/status/") => {
            let code = p["/status/".len()..].parse().unwrap_or(500);
            text(StatusCode::from_u16(code).unwrap(), "status")
        }
        _ => text(StatusCode::OK, "fast"),
    })
}

/// An SSE response: `data: hello` at once, then `beat(n)` every `every`, `limit` events in all
/// (`None`: unending). Counted open while the body is alive.
fn stream(
    guard: StreamOpen,
    every: Duration,
    beat: fn(u64) -> Bytes,
    limit: Option<u64>,
) -> Response<Body> {
    let events = futures::stream::unfold((guard, 0u64), move |(guard, n)| async move {
        if limit.is_some_and(|limit| n >= limit) {
            return None;
        }
        if n > 0 {
            tokio::time::sleep(every).await;
        }
        let chunk = if n == 0 {
            Bytes::from_static(b"data: hello\n\n")
        } else {
            beat(n)
        };
        Some((Ok::<_, Infallible>(Frame::data(chunk)), (guard, n + 1)))
    });
    let mut resp = Response::new(StreamBody::new(events).boxed());
    let headers = resp.headers_mut();
    headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/event-stream"),
    );
    headers.insert("x-pod", http::HeaderValue::from_static(UPSTREAM_POD));
    resp
}

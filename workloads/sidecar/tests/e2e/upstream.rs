//! A small hyper server playing the workload behind the sidecar. It counts, at the upstream,
//! ordinary requests in flight (current and maximum), open SSE streams and requests received.
//!
//! Routes: `/gate` (waits for a permit of [`Upstream::gate`]), `/slow?ms=N`, `/sse?beat_ms=N`
//! (event `hello` at once, then a heartbeat every N ms), `/status/N`, `/big?bytes=N` (a body of
//! N bytes `x`), `/echo` (reads the whole request body, answers its length), `/headers` (the
//! request's header names, sorted, comma-separated), `/host` (the request's `Host`), anything else
//! 200 `fast`.
//! Every response carries `x-pod: upstream-pod`.

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

#[derive(Default)]
pub struct Counters {
    pub in_flight: AtomicUsize,
    pub max_in_flight: AtomicUsize,
    pub streams_open: AtomicUsize,
    pub requests: AtomicUsize,
    /// Connections accepted.
    pub connections: AtomicUsize,
}

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
                    let io = TokioIo::new(stream);
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, svc)
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

    pub fn streams_open(&self) -> usize {
        self.counters.streams_open.load(Ordering::SeqCst)
    }

    pub fn requests(&self) -> usize {
        self.counters.requests.load(Ordering::SeqCst)
    }

    pub fn connections(&self) -> usize {
        self.counters.connections.load(Ordering::SeqCst)
    }
}

/// Counts one ordinary request in flight at the upstream while alive.
struct InFlight(Arc<Counters>);

impl InFlight {
    fn enter(c: &Arc<Counters>) -> Self {
        let now = c.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        c.max_in_flight.fetch_max(now, Ordering::SeqCst);
        Self(c.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Counts one open SSE stream while the response body is alive.
struct StreamOpen(Arc<Counters>);

impl Drop for StreamOpen {
    fn drop(&mut self) {
        self.0.streams_open.fetch_sub(1, Ordering::SeqCst);
    }
}

type Body = BoxBody<Bytes, Infallible>;

fn text(status: StatusCode, body: &'static str) -> Response<Body> {
    let mut resp = Response::new(Full::new(Bytes::from_static(body.as_bytes())).boxed());
    *resp.status_mut() = status;
    resp.headers_mut()
        .insert("x-pod", http::HeaderValue::from_static("upstream-pod"));
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
    c.requests.fetch_add(1, Ordering::SeqCst);
    let path = req.uri().path().to_string();
    if path == "/sse" {
        return Ok(sse(param(&req, "beat_ms").unwrap_or(5000), c));
    }
    let _in_flight = InFlight::enter(&c);
    Ok(match path.as_str() {
        "/gate" => {
            gate.acquire().await.expect("gate never closes").forget();
            text(StatusCode::OK, "gate")
        }
        "/slow" => {
            let ms = param(&req, "ms").unwrap_or(100);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            text(StatusCode::OK, "slow")
        }
        "/big" => {
            let n = param(&req, "bytes").unwrap_or(1 << 20) as usize;
            let mut resp = Response::new(Full::new(Bytes::from(vec![b'x'; n])).boxed());
            resp.headers_mut()
                .insert("x-pod", http::HeaderValue::from_static("upstream-pod"));
            resp
        }
        "/echo" => match req.into_body().collect().await {
            Ok(body) => {
                let len = body.to_bytes().len();
                let mut resp = Response::new(Full::new(Bytes::from(len.to_string())).boxed());
                resp.headers_mut()
                    .insert("x-pod", http::HeaderValue::from_static("upstream-pod"));
                resp
            }
            Err(_) => text(StatusCode::BAD_REQUEST, "broken body"),
        },
        "/host" => {
            let host = req.headers().get("host").and_then(|h| h.to_str().ok());
            let mut resp =
                Response::new(Full::new(Bytes::from(host.unwrap_or("").to_string())).boxed());
            resp.headers_mut()
                .insert("x-pod", http::HeaderValue::from_static("upstream-pod"));
            resp
        }
        "/headers" => {
            let mut names: Vec<&str> = req.headers().keys().map(|k| k.as_str()).collect();
            names.sort_unstable();
            let mut resp = Response::new(Full::new(Bytes::from(names.join(","))).boxed());
            resp.headers_mut()
                .insert("x-pod", http::HeaderValue::from_static("upstream-pod"));
            resp
        }
        p if p.starts_with("/status/") => {
            let code = p["/status/".len()..].parse().unwrap_or(500);
            text(StatusCode::from_u16(code).unwrap(), "status")
        }
        _ => text(StatusCode::OK, "fast"),
    })
}

fn sse(beat_ms: u64, c: Arc<Counters>) -> Response<Body> {
    c.streams_open.fetch_add(1, Ordering::SeqCst);
    let guard = StreamOpen(c);
    let events = futures::stream::unfold((guard, 0u64), move |(guard, n)| async move {
        if n > 0 {
            tokio::time::sleep(Duration::from_millis(beat_ms)).await;
        }
        let chunk = if n == 0 {
            Bytes::from_static(b"data: hello\n\n")
        } else {
            Bytes::from(format!(": beat {n}\n\n"))
        };
        Some((Ok::<_, Infallible>(Frame::data(chunk)), (guard, n + 1)))
    });
    let mut resp = Response::new(StreamBody::new(events).boxed());
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/event-stream"),
    );
    resp.headers_mut()
        .insert("x-pod", http::HeaderValue::from_static("upstream-pod"));
    resp
}

//! The data plane in-process on loopback for the cross-workload tests: flagsvc and the sidecar
//! (their real `serve` functions on 127.0.0.1:0), a counting hyper upstream for measurements at
//! the upstream side, a bounded one-shot HTTP client, metric scraping and a bounded wait.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Empty, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, oneshot};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use workload_common::identity::Identity;
use workload_common::serve::{ServeOptions, ServeSummary};

/// Everything waits at most this long for a server to stop.
const STOP_LIMIT: Duration = Duration::from_secs(10);

/// An identity whose pod is `pod` (node `node-a`, zone `zone-a`).
pub fn identity(pod: &str) -> Identity {
    let pod = pod.to_string();
    Identity::from_lookup(move |key| {
        Some(match key {
            "POD_NAME" => pod.clone(),
            "NODE_NAME" => "node-a".to_string(),
            _ => "zone-a".to_string(),
        })
    })
}

pub async fn bind() -> TcpListener {
    TcpListener::bind("127.0.0.1:0").await.unwrap()
}

/// A running flagsvc.
pub struct Flagsvc {
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<ServeSummary>,
}

impl Flagsvc {
    /// flagsvc as pod `pod`, with this service time and no flag flips.
    pub async fn start(pod: &str, service_time: flagsvc::ServiceTime) -> Self {
        let listener = bind().await;
        let addr = listener.local_addr().unwrap();
        let config = flagsvc::Config {
            service_time,
            sse_heartbeat: Duration::from_secs(1),
            flag_change_interval: Duration::ZERO,
            identity: identity(pod),
            serve: ServeOptions::default(),
        };
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(flagsvc::serve(listener, config, async {
            let _ = rx.await;
        }));
        Self {
            addr,
            stop: Some(tx),
            task,
        }
    }

    pub fn uri(&self) -> http::Uri {
        format!("http://{}", self.addr).parse().unwrap()
    }

    /// Signals shutdown and waits (bounded) for the serve loop to end.
    pub async fn stop(mut self) -> ServeSummary {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        tokio::time::timeout(STOP_LIMIT, &mut self.task)
            .await
            .expect("flagsvc stops within 10 s")
            .unwrap()
    }
}

impl Drop for Flagsvc {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A sidecar config in front of `upstream` with `max` slots, identity `sidecar-0`.
pub fn sidecar_config(upstream: http::Uri, max: usize) -> sidecar::Config {
    sidecar::Config {
        upstream,
        max_concurrency: max,
        identity: identity("sidecar-0"),
        ..sidecar::Config::default()
    }
}

/// A running sidecar.
pub struct Sidecar {
    pub addr: SocketAddr,
    pub admin: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<Result<sidecar::Summary, sidecar::SidecarError>>,
}

impl Sidecar {
    pub async fn start(config: sidecar::Config) -> Self {
        let (listener, admin_listener) = (bind().await, bind().await);
        let addr = listener.local_addr().unwrap();
        let admin = admin_listener.local_addr().unwrap();
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(sidecar::serve(listener, admin_listener, config, async {
            let _ = rx.await;
        }));
        Self {
            addr,
            admin,
            stop: Some(tx),
            task,
        }
    }

    pub fn url(&self, path: &str) -> http::Uri {
        format!("http://{}{path}", self.addr).parse().unwrap()
    }

    /// One scrape of the admin `/metrics`.
    pub async fn scrape(&self) -> Scrape {
        let reply = get(self.admin, "/metrics").await.expect("scrape /metrics");
        assert_eq!(reply.status, 200, "{}", reply.body);
        Scrape(reply.body)
    }

    /// One sample, scraped now.
    pub async fn metric(&self, series: &str) -> u64 {
        self.scrape().await.get(series)
    }

    /// Signals shutdown and waits (bounded) for both listeners to finish.
    pub async fn stop(mut self) -> sidecar::Summary {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        tokio::time::timeout(STOP_LIMIT, &mut self.task)
            .await
            .expect("sidecar stops within 10 s")
            .unwrap()
            .unwrap()
    }
}

impl Drop for Sidecar {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The text of one `/metrics` scrape.
#[derive(Debug, Clone)]
pub struct Scrape(pub String);

impl Scrape {
    /// The integer value of `series` (name with labels, as exposed); panics when absent.
    pub fn get(&self, series: &str) -> u64 {
        self.find(series)
            .unwrap_or_else(|| panic!("no sample {series} in:\n{}", self.0))
    }

    /// The integer value of `series`, `None` when it is not exposed.
    pub fn find(&self, series: &str) -> Option<u64> {
        self.0.lines().find_map(|line| {
            let value = line.strip_prefix(series)?.strip_prefix(' ')?;
            let v: f64 = value.trim().parse().ok()?;
            assert!(v >= 0.0 && v.fract() == 0.0, "{series} is not a count: {v}");
            Some(v as u64)
        })
    }

    /// Every `name{label="value"}` sample of a one-label family, by label value.
    pub fn family(&self, name: &str, label: &str) -> BTreeMap<String, u64> {
        let prefix = format!("{name}{{{label}=\"");
        self.0
            .lines()
            .filter_map(|line| {
                let rest = line.strip_prefix(&prefix)?;
                let (value, sample) = rest.split_once("\"} ")?;
                let n: f64 = sample.trim().parse().ok()?;
                Some((value.to_string(), n as u64))
            })
            .collect()
    }
}

#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: http::HeaderMap,
    pub body: String,
}

/// `GET path` on a fresh connection, whole body read; bounded to 20 s.
pub async fn get(addr: SocketAddr, path: &str) -> Result<Reply, String> {
    let attempt = async {
        let stream = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| e.to_string())?;
        tokio::spawn(conn);
        let req = Request::get(path)
            .header("host", addr.to_string())
            .body(Empty::<Bytes>::new())
            .unwrap();
        let resp = sender.send_request(req).await.map_err(|e| e.to_string())?;
        let (parts, body) = resp.into_parts();
        let body = body.collect().await.map_err(|e| e.to_string())?;
        Ok(Reply {
            status: parts.status.as_u16(),
            headers: parts.headers,
            body: String::from_utf8_lossy(&body.to_bytes()).into_owned(),
        })
    };
    tokio::time::timeout(Duration::from_secs(20), attempt)
        .await
        .map_err(|_| "request took over 20 s".to_string())?
}

/// Polls `check` every 10 ms until it holds; panics after `limit`. Returns the time it took.
pub async fn wait_until<F, Fut>(what: &str, limit: Duration, mut check: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let started = Instant::now();
    loop {
        if check().await {
            return started.elapsed();
        }
        assert!(started.elapsed() < limit, "not within {limit:?}: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// What the counting upstream saw.
#[derive(Debug, Default)]
pub struct Counters {
    /// Ordinary (non-stream) requests being handled right now.
    pub in_flight: AtomicUsize,
    /// Most ordinary requests handled at once.
    pub max_in_flight: AtomicUsize,
    /// SSE streams whose body is alive.
    pub streams_open: AtomicUsize,
    /// Most ordinary requests + open streams at once (what the sidecar's limit bounds).
    pub max_total: AtomicUsize,
    /// Ordinary requests received.
    pub requests: AtomicUsize,
    /// Stream requests received.
    pub stream_requests: AtomicUsize,
}

/// A hyper HTTP/1 upstream that counts, at the upstream, ordinary requests in flight and open
/// SSE streams. Routes: `/stream` (event `hello` at once, then `data: beat N` every 200 ms,
/// at most 300 events), `/gate` (waits for a permit of [`CountingUpstream::gate`]),
/// `/work?ms=N` (sleeps N ms), anything else 200 at once. Responses carry `x-pod: upstream-0`.
pub struct CountingUpstream {
    pub addr: SocketAddr,
    pub counters: Arc<Counters>,
    pub gate: Arc<Semaphore>,
    task: JoinHandle<()>,
}

impl Drop for CountingUpstream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub const UPSTREAM_POD: &str = "upstream-0";

impl CountingUpstream {
    pub async fn start() -> Self {
        let listener = bind().await;
        let addr = listener.local_addr().unwrap();
        let counters = Arc::new(Counters::default());
        let gate = Arc::new(Semaphore::new(0));
        let (c, g) = (counters.clone(), gate.clone());
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
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

    pub fn requests(&self) -> usize {
        self.counters.requests.load(Ordering::SeqCst)
    }

    pub fn stream_requests(&self) -> usize {
        self.counters.stream_requests.load(Ordering::SeqCst)
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

/// One open stream while its body is alive.
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

fn text(status: StatusCode, body: &'static str) -> Response<Body> {
    let mut resp = Response::new(Full::new(Bytes::from_static(body.as_bytes())).boxed());
    *resp.status_mut() = status;
    resp.headers_mut()
        .insert("x-pod", http::HeaderValue::from_static(UPSTREAM_POD));
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
    if path == "/stream" {
        c.stream_requests.fetch_add(1, Ordering::SeqCst);
        return Ok(stream(StreamOpen::enter(&c)));
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
        _ => text(StatusCode::OK, "fast"),
    })
}

fn stream(guard: StreamOpen) -> Response<Body> {
    const EVENTS: u64 = 300;
    let events = futures::stream::unfold((guard, 0u64), |(guard, n)| async move {
        if n >= EVENTS {
            return None;
        }
        if n > 0 {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let chunk = if n == 0 {
            Bytes::from_static(b"data: hello\n\n")
        } else {
            Bytes::from(format!("data: beat {n}\n\n"))
        };
        Some((Ok::<_, Infallible>(Frame::data(chunk)), (guard, n + 1)))
    });
    let mut resp = Response::new(BodyExt::boxed(StreamBody::new(events)));
    let headers = resp.headers_mut();
    headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/event-stream"),
    );
    headers.insert("x-pod", http::HeaderValue::from_static(UPSTREAM_POD));
    resp
}

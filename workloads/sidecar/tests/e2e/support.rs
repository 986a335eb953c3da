//! Running a sidecar on loopback, and the clients the tests use against it: one-shot HTTP/1
//! requests, raw TCP streams for SSE (so a test decides exactly when the client closes), metric
//! scrapes and a bounded wait-until helper.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Request};
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::TokioIo;
use sidecar::{Config, SidecarError, Summary};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use workload_common::identity::Identity;

/// A sidecar config for `upstream` with `max` slots and the test identity.
pub fn config(upstream: http::Uri, max: usize) -> Config {
    Config {
        upstream,
        max_concurrency: max,
        identity: Identity::from_lookup(|key| {
            Some(
                match key {
                    "POD_NAME" => "sidecar-pod",
                    "NODE_NAME" => "node-a",
                    _ => "zone-a",
                }
                .to_string(),
            )
        }),
        ..Config::default()
    }
}

pub struct Running {
    pub addr: SocketAddr,
    pub admin: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<Result<Summary, SidecarError>>,
}

pub async fn start(config: Config) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let admin_listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let (addr, admin) = (
        listener.local_addr().unwrap(),
        admin_listener.local_addr().unwrap(),
    );
    let (tx, rx) = oneshot::channel::<()>();
    let task = tokio::spawn(sidecar::serve(listener, admin_listener, config, async {
        let _ = rx.await;
    }));
    Running {
        addr,
        admin,
        stop: Some(tx),
        task,
    }
}

impl Running {
    /// Sends the shutdown signal (what SIGTERM does in the binary).
    pub fn stop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }

    /// Waits (at most 10 s) for the sidecar to finish after [`Running::stop`].
    pub async fn finish(self) -> Summary {
        tokio::time::timeout(Duration::from_secs(10), self.task)
            .await
            .expect("sidecar stops within 10 s")
            .unwrap()
            .unwrap()
    }

    pub async fn get(&self, path: &str) -> Reply {
        get(self.addr, path).await.unwrap()
    }

    /// Scrapes the admin port and returns the sample `series`.
    pub async fn metric(&self, series: &str) -> f64 {
        sample(&self.metrics_text().await, series)
    }

    pub async fn metrics_text(&self) -> String {
        let reply = get(self.admin, "/metrics").await.unwrap();
        assert_eq!(reply.status, 200);
        reply.body
    }
}

#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
}

/// One request on a fresh connection, bounded to 20 s.
pub async fn get(addr: SocketAddr, path: &str) -> Result<Reply, String> {
    let attempt = async {
        let stream = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| e.to_string())?;
        tokio::spawn(conn);
        let req = Request::get(path)
            .header("host", "sidecar.test")
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

/// `get` in a task.
pub fn spawn_get(addr: SocketAddr, path: &'static str) -> JoinHandle<Result<Reply, String>> {
    tokio::spawn(get(addr, path))
}

/// A client on a raw TCP connection: the test drops it to close the connection.
pub struct RawClient {
    pub stream: TcpStream,
    pub received: String,
}

impl RawClient {
    /// Sends `GET path` and returns without reading.
    pub async fn send(addr: SocketAddr, path: &str) -> Self {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        let head = format!("GET {path} HTTP/1.1\r\nhost: sidecar.test\r\n\r\n");
        stream.write_all(head.as_bytes()).await.unwrap();
        Self {
            stream,
            received: String::new(),
        }
    }

    /// Opens an SSE stream and reads until the first event arrived.
    pub async fn sse(addr: SocketAddr, beat_ms: u64) -> Self {
        let mut client = Self::send(addr, &format!("/sse?beat_ms={beat_ms}")).await;
        client
            .read_until("data: hello", Duration::from_secs(5))
            .await;
        client
    }

    /// Reads until `needle` was received; panics after `limit`.
    pub async fn read_until(&mut self, needle: &str, limit: Duration) {
        let deadline = Instant::now() + limit;
        let mut buf = [0u8; 4096];
        while !self.received.contains(needle) {
            let n = tokio::time::timeout_at(deadline, self.stream.read(&mut buf))
                .await
                .unwrap_or_else(|_| panic!("no {needle:?} within {limit:?}: {:?}", self.received))
                .unwrap();
            assert!(n > 0, "closed before {needle:?}: {:?}", self.received);
            self.received.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    }
}

/// Free loopback port with nothing listening (bound, then released).
pub async fn closed_port() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    listener.local_addr().unwrap()
}

/// The value of the sample `series` (name and labels, as exposed) in `text`.
pub fn sample(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or_else(|| panic!("no sample {series} in:\n{text}"))
}

/// Polls `check` every 10 ms until it holds; returns how long that took. Panics after `limit`.
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

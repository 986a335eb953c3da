//! Running a sidecar on loopback, and the clients the tests use against it: one-shot HTTP/1
//! requests naming `Host: sidecar.test`, raw TCP streams for SSE (so a test decides exactly when
//! the client closes) and metric scrapes. The upstream, the request itself and the bounded wait
//! are `workload_test_support`'s.

use std::net::SocketAddr;
use std::time::Duration;

use sidecar::{Config, SidecarError, Summary};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::Instant;
pub use workload_test_support::{Reply, wait_until};
use workload_test_support::{Upstream, get_with_host, identity};

/// A sidecar config for `upstream` with `max` slots and the test identity.
pub fn config(upstream: http::Uri, max: usize) -> Config {
    Config {
        upstream,
        max_concurrency: max,
        identity: identity("sidecar-pod"),
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

/// The host the tests' requests name.
const HOST: &str = "sidecar.test";

/// One request on a fresh connection (`Host: sidecar.test`), bounded to 20 s.
pub async fn get(addr: SocketAddr, path: &str) -> Result<Reply, String> {
    get_with_host(addr, path, HOST).await
}

/// `get` in a task.
pub fn spawn_get(addr: SocketAddr, path: &'static str) -> Pending {
    tokio::spawn(get(addr, path))
}

/// A request running in a task ([`spawn_get`]).
pub type Pending = JoinHandle<Result<Reply, String>>;

/// A sidecar with one slot and a queue of one (300 ms timeout) in front of `upstream`, where A
/// (`/gate`) holds the slot and B (`/fast`) waits in the queue: the sidecar, A and B.
pub async fn one_holding_one_queued(upstream: &Upstream) -> (Running, Pending, Pending) {
    let mut cfg = config(upstream.uri(), 1);
    cfg.queue_size = Some(1);
    cfg.queue_timeout = Some(Duration::from_millis(300));
    let sidecar = start(cfg).await;
    let a = spawn_get(sidecar.addr, "/gate");
    wait_until("A admitted", Duration::from_secs(5), || async {
        upstream.in_flight() == 1
    })
    .await;
    let b = spawn_get(sidecar.addr, "/fast");
    wait_until("B queued", Duration::from_secs(5), || async {
        sidecar.metric("sidecar_queue_depth").await == 1.0
    })
    .await;
    (sidecar, a, b)
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
        let head = format!("GET {path} HTTP/1.1\r\nhost: {HOST}\r\n\r\n");
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

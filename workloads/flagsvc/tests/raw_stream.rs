//! The raw `GET /stream` path in-process, read byte for byte: the same head as the general
//! (hyper) path, chunked events in order at the heartbeat interval's count, the terminating
//! chunk on shutdown, and a client leaving closes its stream (the gauge returns to 0).

mod support;

use std::net::SocketAddr;
use std::time::Duration;

use flagsvc::{Config, ServiceTime};
use support::Conn;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use workload_common::identity::Identity;
use workload_common::serve::{ServeOptions, ServeSummary};

const RAW_GET: &[u8] = b"GET /stream HTTP/1.1\r\nhost: x\r\n\r\n";
/// A `GET /stream` the raw path leaves to hyper (it declares a body, if an empty one).
const GENERAL_GET: &[u8] = b"GET /stream HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n";

struct Running {
    addr: SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<ServeSummary>,
}

async fn start() -> Running {
    let config = Config {
        service_time: ServiceTime::Fixed(Duration::ZERO),
        sse_heartbeat: Duration::from_millis(20),
        flag_change_interval: Duration::ZERO,
        identity: Identity {
            pod: "pod-3".into(),
            node: "node-b".into(),
            zone: "zone-c".into(),
        },
        serve: ServeOptions {
            shutdown_timeout: Duration::from_secs(5),
            ..ServeOptions::default()
        },
    };
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, rx) = tokio::sync::oneshot::channel();
    let task = tokio::spawn(flagsvc::serve(listener, config, async {
        let _ = rx.await;
    }));
    Running { addr, stop, task }
}

/// One SSE client reading the raw bytes: the head, then one event per chunk.
struct Client {
    socket: TcpStream,
    buf: Vec<u8>,
}

impl Client {
    async fn open(addr: SocketAddr, request: &[u8]) -> Client {
        let mut socket = TcpStream::connect(addr).await.unwrap();
        socket.write_all(request).await.unwrap();
        Client {
            socket,
            buf: Vec::new(),
        }
    }

    /// Reads more bytes; false at EOF.
    async fn fill(&mut self) -> bool {
        let mut chunk = [0u8; 4096];
        let n = tokio::time::timeout(Duration::from_secs(5), self.socket.read(&mut chunk))
            .await
            .expect("the server sends within 5 s")
            .unwrap();
        self.buf.extend_from_slice(&chunk[..n]);
        n > 0
    }

    async fn head(&mut self) -> (String, Vec<(String, String)>) {
        loop {
            if let Some(end) = find(&self.buf, b"\r\n\r\n") {
                let head = String::from_utf8(self.buf[..end].to_vec()).unwrap();
                self.buf.drain(..end + 4);
                let mut lines = head.split("\r\n");
                let status = lines.next().unwrap().to_string();
                let fields = lines
                    .map(|l| {
                        let (n, v) = l.split_once(": ").unwrap();
                        (n.to_ascii_lowercase(), v.to_string())
                    })
                    .collect();
                return (status, fields);
            }
            assert!(self.fill().await, "EOF before the response head");
        }
    }

    /// The next chunk's data; `None` for the terminating chunk.
    async fn chunk(&mut self) -> Option<String> {
        loop {
            if let Some(line_end) = find(&self.buf, b"\r\n") {
                let size = std::str::from_utf8(&self.buf[..line_end]).unwrap();
                let size = usize::from_str_radix(size, 16).unwrap();
                let total = line_end + 2 + size + 2;
                if self.buf.len() >= total {
                    assert_eq!(&self.buf[total - 2..total], b"\r\n", "chunk framing");
                    let data = String::from_utf8(self.buf[line_end + 2..total - 2].to_vec());
                    self.buf.drain(..total);
                    return (size > 0).then(|| data.unwrap());
                }
            }
            assert!(self.fill().await, "EOF inside a chunk");
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// `(id, event name)` of one SSE event.
fn id_and_name(event: &str) -> (u64, String) {
    let mut lines = event.lines();
    let id = lines.next().unwrap().strip_prefix("id: ").unwrap();
    let name = lines.next().unwrap().strip_prefix("event: ").unwrap();
    assert!(event.ends_with("\n\n"), "{event:?}");
    (id.parse().unwrap(), name.to_string())
}

async fn metrics(addr: SocketAddr) -> String {
    let reply = Conn::open(addr)
        .await
        .unwrap()
        .get("/metrics")
        .await
        .unwrap();
    String::from_utf8(reply.body.to_vec()).unwrap()
}

fn value(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or(f64::NAN)
}

#[tokio::test]
async fn the_raw_head_is_the_general_one_and_events_arrive_in_order() {
    // The two requests take the two paths.
    assert_eq!(
        flagsvc::raw_sse::stream_head_len(RAW_GET),
        Some(RAW_GET.len())
    );
    assert_eq!(flagsvc::raw_sse::stream_head_len(GENERAL_GET), None);
    let svc = start().await;
    let mut raw = Client::open(svc.addr, RAW_GET).await;
    let mut general = Client::open(svc.addr, GENERAL_GET).await;
    let (raw_status, raw_fields) = raw.head().await;
    let (general_status, general_fields) = general.head().await;
    assert_eq!(raw_status, "HTTP/1.1 200 OK");
    assert_eq!(raw_status, general_status);
    let without_date = |fields: &[(String, String)]| {
        let mut f: Vec<_> = fields
            .iter()
            .filter(|(n, _)| n != "date")
            .cloned()
            .collect();
        f.sort();
        f
    };
    assert_eq!(without_date(&raw_fields), without_date(&general_fields));
    for (name, value) in [
        ("content-type", "text/event-stream"),
        ("cache-control", "no-cache"),
        ("transfer-encoding", "chunked"),
        ("x-pod", "pod-3"),
        ("x-node", "node-b"),
        ("x-zone", "zone-c"),
    ] {
        assert!(
            raw_fields.iter().any(|(n, v)| n == name && v == value),
            "{name}: {value} missing in {raw_fields:?}"
        );
    }
    assert!(raw_fields.iter().any(|(n, _)| n == "date"));

    // A snapshot, then heartbeats (no flag changes configured), ids counting up from 1.
    for expected in 1..=8u64 {
        let raw_event = id_and_name(&raw.chunk().await.expect("an event"));
        let general_event = id_and_name(&general.chunk().await.expect("an event"));
        let name = if expected == 1 {
            "snapshot"
        } else {
            "heartbeat"
        };
        assert_eq!(raw_event, (expected, name.to_string()));
        assert_eq!(
            general_event, raw_event,
            "both paths send the same sequence"
        );
    }
    let text = metrics(svc.addr).await;
    assert_eq!(value(&text, "flagsvc_sse_streams_open"), 2.0);
    assert_eq!(
        value(
            &text,
            "flagsvc_requests_total{route=\"stream\",code=\"200\"}"
        ),
        2.0
    );

    // Shutdown: a `shutdown` event, the terminating chunk, then the connection closes.
    svc.stop.send(()).unwrap();
    let mut last = String::new();
    while let Some(event) = raw.chunk().await {
        last = event;
    }
    assert_eq!(id_and_name(&last).1, "shutdown");
    assert!(!raw.fill().await, "closed after the last chunk");
    drop(general);
    assert!(svc.task.await.unwrap().finished_cleanly);
}

#[tokio::test]
async fn a_client_leaving_frees_its_raw_stream() {
    let svc = start().await;
    let mut clients = Vec::new();
    for _ in 0..4 {
        let mut c = Client::open(svc.addr, RAW_GET).await;
        c.head().await;
        assert_eq!(id_and_name(&c.chunk().await.unwrap()).1, "snapshot");
        clients.push(c);
    }
    assert_eq!(
        value(&metrics(svc.addr).await, "flagsvc_sse_streams_open"),
        4.0
    );
    // Two leave with a FIN, two with a reset.
    for (i, c) in clients.into_iter().enumerate() {
        if i % 2 == 1 {
            c.socket.set_zero_linger().unwrap();
        }
        drop(c);
    }
    let mut open = f64::NAN;
    let mut scrapes = 1;
    for _ in 0..100 {
        scrapes += 1;
        open = value(&metrics(svc.addr).await, "flagsvc_sse_streams_open");
        if open == 0.0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(open, 0.0, "every stream closed when its client left");
    svc.stop.send(()).unwrap();
    let summary = svc.task.await.unwrap();
    assert!(summary.finished_cleanly);
    assert_eq!(summary.connections, 4 + scrapes, "{summary:?}");
}

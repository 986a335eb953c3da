//! flagsvc against hostile clients: malformed request lines (400), heads over the limit sent
//! slowly (431), slowloris clients (closed at the header read timeout while the others are
//! served), clients vanishing mid-request and mid-stream (the SSE stream is closed and
//! `flagsvc_sse_streams_open` returns to 0). The parser's refusals never count as requests.

mod support;

use std::net::SocketAddr;
use std::time::Duration;

use flagsvc::{Config, ServiceTime};
use support::Conn;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use workload_common::identity::Identity;
use workload_common::serve::{ServeOptions, ServeSummary};
use workload_test_support::raw::{dribble, exchange, head_over_the_limit, vanish};

fn config() -> Config {
    Config {
        service_time: ServiceTime::Fixed(Duration::from_millis(100)),
        sse_heartbeat: Duration::from_millis(50),
        flag_change_interval: Duration::ZERO,
        identity: Identity {
            pod: "pod-h".into(),
            node: "node-h".into(),
            zone: "zone-h".into(),
        },
        serve: ServeOptions {
            header_read_timeout: Duration::from_millis(500),
            max_header_bytes: 8 * 1024,
            shutdown_timeout: Duration::from_secs(5),
            ..ServeOptions::default()
        },
    }
}

struct Running {
    addr: SocketAddr,
    _stop: tokio::sync::oneshot::Sender<()>,
    _task: JoinHandle<ServeSummary>,
}

async fn start() -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let task = tokio::spawn(flagsvc::serve(listener, config(), async {
        let _ = rx.await;
    }));
    Running {
        addr,
        _stop: tx,
        _task: task,
    }
}

async fn metrics(addr: SocketAddr) -> String {
    let mut conn = Conn::open(addr).await.unwrap();
    let reply = conn.get("/metrics").await.unwrap();
    String::from_utf8_lossy(&reply.body).into_owned()
}

/// The sum of every `flagsvc_requests_total` sample except the `/metrics` route's ("other").
fn requests_total(text: &str, route: &str) -> u64 {
    text.lines()
        .filter(|l| l.starts_with(&format!("flagsvc_requests_total{{route=\"{route}\"")))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

fn gauge(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {text}"))
}

/// Polls `check` every 20 ms, at most 5 s.
async fn eventually(what: &str, mut check: impl AsyncFnMut() -> bool) {
    for _ in 0..250 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("not within 5 s: {what}");
}

#[tokio::test]
async fn malformed_request_lines_get_400_and_count_as_no_request() {
    let svc = start().await;
    for case in [
        &b"GARBAGE\r\n\r\n"[..],
        b"GET\r\n\r\n",
        b"GET /flags/a HTTP/1.1\r\nno colon here\r\n\r\n",
        b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03",
    ] {
        let reply = exchange(svc.addr, case).await;
        assert!(
            reply.starts_with("HTTP/1.1 400 Bad Request\r\n"),
            "{:?} -> {reply:?}",
            String::from_utf8_lossy(case)
        );
    }
    let text = metrics(svc.addr).await;
    assert_eq!(requests_total(&text, "flags"), 0);
    assert_eq!(requests_total(&text, "stream"), 0);
}

#[tokio::test]
async fn a_head_over_the_limit_sent_slowly_gets_431() {
    let svc = start().await;
    // 16 KiB in 160 ms: over 8 KiB long before the 500 ms header timeout.
    let start = b"GET /flags/a HTTP/1.1\r\nhost: x\r\n";
    let reply = head_over_the_limit(svc.addr, start, 16, Duration::from_millis(10)).await;
    assert!(
        reply.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"),
        "{reply:?}"
    );
    assert_eq!(requests_total(&metrics(svc.addr).await, "flags"), 0);
}

#[tokio::test]
async fn slowloris_clients_are_closed_and_the_others_are_served() {
    let svc = start().await;
    let addr = svc.addr;
    let slow: Vec<JoinHandle<String>> = (0..8)
        .map(|_| {
            tokio::spawn(async move {
                // 60 bytes, one every 50 ms: 3 s for a head the server allows 500 ms.
                let head = format!("GET /flags/a HTTP/1.1\r\nx: {}\r\n\r\n", "s".repeat(30));
                dribble(addr, head.as_bytes(), Duration::from_millis(50))
                    .await
                    .1
            })
        })
        .collect();
    let mut conn = Conn::open(addr).await.unwrap();
    for _ in 0..10 {
        assert_eq!(conn.get("/flags/a").await.unwrap().status, 200);
    }
    for task in slow {
        let reply = task.await.unwrap();
        assert!(
            !reply.contains(" 200 "),
            "a slow head was answered: {reply:?}"
        );
    }
    assert_eq!(requests_total(&metrics(addr).await, "flags"), 10);
}

#[tokio::test]
async fn clients_vanishing_mid_request_and_mid_stream_leave_nothing_open() {
    let svc = start().await;
    // Mid-request: the head arrived, the 100 ms service time is running, the client resets.
    for _ in 0..3 {
        let stream = TcpStream::connect(svc.addr).await.unwrap();
        let mut stream = stream;
        stream
            .write_all(b"GET /flags/a HTTP/1.1\r\nhost: x\r\n\r\n")
            .await
            .unwrap();
        vanish(stream);
    }
    // Mid-stream: five SSE clients read their first event, then reset.
    let mut streams = Vec::new();
    for _ in 0..5 {
        let mut s = TcpStream::connect(svc.addr).await.unwrap();
        s.write_all(b"GET /stream HTTP/1.1\r\nhost: x\r\n\r\n")
            .await
            .unwrap();
        let mut buf = [0u8; 1024];
        let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf))
            .await
            .unwrap()
            .unwrap();
        assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
        streams.push(s);
    }
    let addr = svc.addr;
    eventually("five streams open", async || {
        gauge(&metrics(addr).await, "flagsvc_sse_streams_open") == 5.0
    })
    .await;
    for s in streams {
        vanish(s);
    }
    eventually("every stream closed", async || {
        gauge(&metrics(addr).await, "flagsvc_sse_streams_open") == 0.0
    })
    .await;
    // And the service still answers.
    let mut conn = Conn::open(addr).await.unwrap();
    assert_eq!(conn.get("/flags/a").await.unwrap().status, 200);
}

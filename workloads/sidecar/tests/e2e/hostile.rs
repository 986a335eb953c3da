//! Hostile and broken peers on both sides of the sidecar. In front: malformed request lines,
//! heads over the limit (sent at once and slowly), slowloris clients dribbling a head, clients
//! vanishing mid-request and mid-stream. Behind: an upstream that truncates a chunked body,
//! resets mid-body, never answers, or answers with 1 MB bodies. Each gets its documented
//! status (docs/metrics.md, "Statuses the sidecar answers with"), every slot comes back, and the
//! counters add up: received = admitted + rejected, in flight and streams open back at 0.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use crate::support::{RawClient, Running, config, get, sample, start, wait_until};
use workload_test_support::Upstream;
use workload_test_support::raw::{dribble, exchange, head_over_the_limit, vanish};

/// Waits until nothing holds a slot or a stream, then checks that every request that
/// reached the sidecar was admitted or rejected; returns (received, admitted).
async fn assert_settled(sidecar: &Running) -> (f64, f64) {
    wait_until(
        "in flight and streams back to 0",
        Duration::from_secs(10),
        || async {
            let text = sidecar.metrics_text().await;
            sample(&text, "sidecar_in_flight") == 0.0
                && sample(&text, "sidecar_streams_open") == 0.0
                && sample(&text, "sidecar_queue_depth") == 0.0
        },
    )
    .await;
    let text = sidecar.metrics_text().await;
    let m = |s: &str| sample(&text, s);
    let received = m("sidecar_received_total");
    let admitted = m("sidecar_admitted_total");
    let rejected = m("sidecar_rejected_total{reason=\"queue_full\"}")
        + m("sidecar_rejected_total{reason=\"queue_timeout\"}");
    assert_eq!(
        received,
        admitted + rejected,
        "received = admitted + rejected:\n{text}"
    );
    (received, admitted)
}

#[tokio::test]
async fn malformed_request_lines_get_400_and_never_reach_the_upstream() {
    let upstream = Upstream::start().await;
    let sidecar = start(config(upstream.uri(), 2)).await;
    let cases: [&[u8]; 7] = [
        b"GARBAGE\r\n\r\n",
        b"GET /x HTTP/9.9\r\nhost: x\r\n\r\n",
        b"GET\r\n\r\n",
        b"GET /x HTTP/1.1 trailing\r\nhost: x\r\n\r\n",
        b"GET /x HTTP/1.1\r\nno colon here\r\n\r\n",
        b"G\x00T /x HTTP/1.1\r\nhost: x\r\n\r\n",
        b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03",
    ];
    for case in cases {
        let reply = exchange(sidecar.addr, case).await;
        assert!(
            reply.starts_with("HTTP/1.1 400 Bad Request\r\n"),
            "{:?} -> {reply:?}",
            String::from_utf8_lossy(case)
        );
    }
    // Nothing was a request: nothing received, nothing sent upstream, and the sidecar serves.
    assert_eq!(assert_settled(&sidecar).await, (0.0, 0.0));
    assert_eq!(upstream.requests(), 0);
    assert_eq!(sidecar.get("/fast").await.status, 200);
}

#[tokio::test]
async fn a_head_over_the_limit_sent_slowly_gets_431() {
    let upstream = Upstream::start().await;
    let mut cfg = config(upstream.uri(), 2);
    cfg.serve.max_header_bytes = 8 * 1024;
    cfg.serve.header_read_timeout = Duration::from_secs(5);
    let sidecar = start(cfg).await;
    // 1 KiB header lines, one every 20 ms: over the 8 KiB limit well before the timeout.
    let start = b"GET /fast HTTP/1.1\r\nhost: x\r\n";
    let reply = head_over_the_limit(sidecar.addr, start, 32, Duration::from_millis(20)).await;
    assert!(
        reply.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"),
        "{reply:?}"
    );
    assert_eq!(assert_settled(&sidecar).await, (0.0, 0.0));
    assert_eq!(upstream.requests(), 0);
}

#[tokio::test]
async fn slowloris_clients_are_closed_and_the_others_are_served() {
    let upstream = Upstream::start().await;
    let mut cfg = config(upstream.uri(), 4);
    cfg.serve.header_read_timeout = Duration::from_millis(500);
    let sidecar = start(cfg).await;
    let addr = sidecar.addr;
    // Ten clients send a head one byte every 50 ms (it would take 4 s to complete).
    let slow: Vec<JoinHandle<(bool, String)>> = (0..10)
        .map(|_| {
            tokio::spawn(async move {
                let head = format!("GET /fast HTTP/1.1\r\nx-slow: {}\r\n\r\n", "s".repeat(50));
                dribble(addr, head.as_bytes(), Duration::from_millis(50)).await
            })
        })
        .collect();
    // Meanwhile ordinary clients are answered at once.
    for _ in 0..20 {
        let reply = get(addr, "/fast").await.unwrap();
        assert_eq!(reply.status, 200);
        assert_eq!(reply.body, "fast");
    }
    for task in slow {
        let (write_failed, reply) = task.await.unwrap();
        assert!(
            write_failed || !reply.contains(" 200 "),
            "a slow head was closed, never answered: {reply:?}"
        );
    }
    let (received, admitted) = assert_settled(&sidecar).await;
    assert_eq!((received, admitted), (20.0, 20.0));
    assert_eq!(upstream.requests(), 20);
}

#[tokio::test]
async fn a_client_vanishing_mid_request_body_gives_its_slot_back() {
    let upstream = Upstream::start().await;
    let sidecar = start(config(upstream.uri(), 1)).await;
    for _ in 0..3 {
        let mut stream = TcpStream::connect(sidecar.addr).await.unwrap();
        let head = "POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 100000\r\n\r\n";
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.write_all(&[b'b'; 1000]).await.unwrap();
        wait_until(
            "the request holds the slot",
            Duration::from_secs(5),
            || async { sidecar.metric("sidecar_in_flight").await == 1.0 },
        )
        .await;
        vanish(stream);
        wait_until("the slot is back", Duration::from_secs(5), || async {
            sidecar.metric("sidecar_in_flight").await == 0.0
        })
        .await;
    }
    // One slot, three vanished clients: the next request still gets it.
    let reply = sidecar.get("/fast").await;
    assert_eq!(reply.status, 200);
    assert_eq!(assert_settled(&sidecar).await, (4.0, 4.0));
    wait_until("the upstream let go", Duration::from_secs(5), || async {
        upstream.in_flight() == 0
    })
    .await;
}

#[tokio::test]
async fn clients_vanishing_mid_stream_give_their_slots_back() {
    let upstream = Upstream::start().await;
    let sidecar = start(config(upstream.uri(), 4)).await;
    for round in 0..2 {
        let clients =
            futures::future::join_all((0..4).map(|_| RawClient::sse(sidecar.addr, 50))).await;
        assert_eq!(
            sidecar.metric("sidecar_streams_open").await,
            4.0,
            "round {round}"
        );
        for client in clients {
            vanish(client.stream);
        }
        wait_until("streams closed", Duration::from_secs(5), || async {
            sidecar.metric("sidecar_in_flight").await == 0.0 && upstream.streams_open() == 0
        })
        .await;
    }
    assert_eq!(assert_settled(&sidecar).await, (8.0, 8.0));
}

/// An upstream that runs `behave` on each of at most `n` connections (after reading the
/// request head).
fn raw_upstream<F, Fut>(listener: TcpListener, n: usize, behave: F) -> JoinHandle<()>
where
    F: Fn(TcpStream) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    tokio::spawn(async move {
        for _ in 0..n {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let mut head = Vec::new();
            let mut buf = [0u8; 4096];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(k) => head.extend_from_slice(&buf[..k]),
                }
            }
            tokio::spawn(behave(stream));
        }
    })
}

async fn sidecar_before<F, Fut>(behave: F, timeout: Option<Duration>) -> (Running, JoinHandle<()>)
where
    F: Fn(TcpStream) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let upstream = raw_upstream(listener, 8, behave);
    let mut cfg = config(format!("http://{addr}").parse().unwrap(), 2);
    cfg.upstream_timeout = timeout;
    (start(cfg).await, upstream)
}

/// The one request's body broke off at the upstream: one upstream failure `reset` in `text`,
/// and the slot came back.
async fn assert_one_reset_and_settled(sidecar: &Running, text: &str) {
    assert_eq!(
        sample(text, "sidecar_upstream_failures_total{reason=\"reset\"}"),
        1.0
    );
    assert_eq!(assert_settled(sidecar).await, (1.0, 1.0));
}

#[tokio::test]
async fn a_truncated_chunked_body_is_a_reset_and_the_slot_comes_back() {
    let (sidecar, upstream) = sidecar_before(
        |mut s| async move {
            let head = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n";
            let _ = s.write_all(head.as_bytes()).await;
            // No last chunk: the body ends with the connection.
        },
        Some(Duration::from_secs(5)),
    )
    .await;
    let result = get(sidecar.addr, "/chunked").await;
    assert!(
        result.is_err(),
        "the client sees an incomplete body: {result:?}"
    );
    let text = sidecar.metrics_text().await;
    assert_eq!(
        sample(&text, "sidecar_upstream_responses_total{code=\"200\"}"),
        1.0
    );
    assert_one_reset_and_settled(&sidecar, &text).await;
    upstream.abort();
}

#[tokio::test]
async fn a_reset_mid_body_is_a_reset_and_the_slot_comes_back() {
    let (sidecar, upstream) = sidecar_before(
        |mut s| async move {
            let head = "HTTP/1.1 200 OK\r\ncontent-length: 1000000\r\n\r\n";
            let _ = s.write_all(head.as_bytes()).await;
            let _ = s.write_all(&[b'x'; 65536]).await;
            tokio::time::sleep(Duration::from_millis(50)).await;
            vanish(s);
        },
        Some(Duration::from_secs(5)),
    )
    .await;
    let result = get(sidecar.addr, "/reset").await;
    assert!(result.is_err(), "the client sees a broken body: {result:?}");
    let text = sidecar.metrics_text().await;
    assert_one_reset_and_settled(&sidecar, &text).await;
    upstream.abort();
}

#[tokio::test]
async fn an_upstream_that_never_answers_is_a_504_timeout() {
    let (sidecar, upstream) = sidecar_before(
        |mut s| async move {
            // Hold the connection (bounded: 10 s) without a byte of answer.
            let mut buf = [0u8; 64];
            let _ = tokio::time::timeout(Duration::from_secs(10), s.read(&mut buf)).await;
        },
        Some(Duration::from_millis(300)),
    )
    .await;
    for _ in 0..3 {
        let reply = sidecar.get("/never").await;
        assert_eq!(reply.status, 504);
        assert_eq!(reply.header("x-sidecar-error"), "timeout");
        assert_eq!(reply.header("x-response-flags"), "UT");
    }
    let text = sidecar.metrics_text().await;
    assert_eq!(
        sample(&text, "sidecar_upstream_failures_total{reason=\"timeout\"}"),
        3.0
    );
    assert_eq!(
        sample(
            &text,
            "sidecar_requests_total{outcome=\"upstream_failure\"}"
        ),
        3.0
    );
    assert_eq!(assert_settled(&sidecar).await, (3.0, 3.0));
    upstream.abort();
}

#[tokio::test]
async fn one_megabyte_bodies_pass_whole_within_the_limit() {
    let upstream = Upstream::start().await;
    let sidecar = start(config(upstream.uri(), 2)).await;
    let addr = sidecar.addr;
    let replies =
        futures::future::join_all((0..8).map(|_| tokio::spawn(get(addr, "/big?bytes=1048576"))))
            .await;
    for reply in replies {
        let reply = reply.unwrap().unwrap();
        assert_eq!(reply.status, 200);
        assert_eq!(reply.header("content-length"), "1048576");
        assert_eq!(reply.body.len(), 1 << 20);
        assert!(reply.body.bytes().all(|b| b == b'x'));
    }
    assert!(
        upstream.max_in_flight() <= 2,
        "{}",
        upstream.max_in_flight()
    );
    assert_eq!(assert_settled(&sidecar).await, (8.0, 8.0));
}

#[tokio::test]
async fn a_refusing_upstream_is_a_502_connect_and_every_slot_comes_back() {
    let port = crate::support::closed_port().await;
    let sidecar = start(config(format!("http://{port}").parse().unwrap(), 2)).await;
    let addr = sidecar.addr;
    let replies =
        futures::future::join_all((0..6).map(|_| tokio::spawn(get(addr, "/refused")))).await;
    for reply in replies {
        let reply = reply.unwrap().unwrap();
        assert_eq!(reply.status, 502);
        assert_eq!(reply.header("x-sidecar-error"), "connect");
        assert_eq!(reply.header("x-response-flags"), "UF");
    }
    let text = sidecar.metrics_text().await;
    assert_eq!(
        sample(&text, "sidecar_upstream_failures_total{reason=\"connect\"}"),
        6.0
    );
    assert_eq!(assert_settled(&sidecar).await, (6.0, 6.0));
}

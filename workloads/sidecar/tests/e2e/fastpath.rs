//! The raw HTTP/1 fast path's edge cases end to end: keep-alive and pipelined requests on one
//! client connection over one pooled upstream connection, exact counts over many requests,
//! bodies both ways, `HEAD`, close-delimited responses re-framed as chunks, hop-by-hop headers
//! both ways, pooled connections the upstream closed meanwhile, `connection: close`, and the
//! handover to the general path (chunked request bodies, HTTP/1.0) on the same connection.
//! The counting tests also run with the fast path off, so both paths are held to the same
//! numbers.

use std::time::Duration;

use bytes::Bytes;
use http::Request;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::support::{Running, config, get, sample, start, wait_until};
use workload_test_support::Upstream;

/// Reads from `stream` until `done` holds for what was received (at most 5 s).
async fn read_until(stream: &mut TcpStream, done: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut received = String::new();
    let mut buf = [0u8; 4096];
    while !done(&received) {
        let n = tokio::time::timeout_at(deadline, stream.read(&mut buf))
            .await
            .unwrap_or_else(|_| panic!("timed out; received {received:?}"))
            .unwrap();
        assert!(n > 0, "closed early; received {received:?}");
        received.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    received
}

/// Waits until nothing is in flight and returns the counters the tests compare.
async fn counts(sidecar: &Running) -> [f64; 4] {
    wait_until("in flight back to 0", Duration::from_secs(5), || async {
        let text = sidecar.metrics_text().await;
        sample(&text, "sidecar_in_flight") == 0.0 && sample(&text, "sidecar_streams_open") == 0.0
    })
    .await;
    let text = sidecar.metrics_text().await;
    [
        "sidecar_received_total",
        "sidecar_admitted_total",
        "sidecar_requests_total{outcome=\"upstream\"}",
        "sidecar_upstream_responses_total{code=\"200\"}",
    ]
    .map(|s| sample(&text, s))
}

async fn pipelined_requests_share_one_upstream_connection(fast_path: bool) {
    let upstream = Upstream::start().await;
    let mut cfg = config(upstream.uri(), 4);
    cfg.fast_path = fast_path;
    let sidecar = start(cfg).await;
    let mut client = TcpStream::connect(sidecar.addr).await.unwrap();
    let one = "GET /fast HTTP/1.1\r\nhost: x\r\n\r\n";
    client.write_all(one.repeat(3).as_bytes()).await.unwrap();
    let got = read_until(&mut client, |r| r.matches("\r\n\r\nfast").count() == 3).await;
    assert_eq!(got.matches("HTTP/1.1 200 OK\r\n").count(), 3, "{got}");
    // The connection stays usable after the pipelined burst.
    client.write_all(one.as_bytes()).await.unwrap();
    read_until(&mut client, |r| r.ends_with("\r\n\r\nfast")).await;
    assert_eq!(counts(&sidecar).await, [4.0; 4]);
    assert_eq!(upstream.requests(), 4);
    assert_eq!(upstream.connections(), 1, "one pooled upstream connection");
}

#[tokio::test]
async fn pipelined_requests_are_answered_in_order_on_the_fast_path() {
    pipelined_requests_share_one_upstream_connection(true).await;
}

#[tokio::test]
async fn pipelined_requests_are_answered_in_order_on_the_general_path() {
    pipelined_requests_share_one_upstream_connection(false).await;
}

async fn keep_alive_clients_conserve_counts(fast_path: bool) {
    let upstream = Upstream::start().await;
    let mut cfg = config(upstream.uri(), 2);
    cfg.fast_path = fast_path;
    let sidecar = start(cfg).await;
    let addr = sidecar.addr;
    let clients = (0..4).map(|c| {
        tokio::spawn(async move {
            let stream = TcpStream::connect(addr).await.unwrap();
            let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
                .await
                .unwrap();
            tokio::spawn(conn);
            for i in 0..25 {
                let (path, status, len) = match (c + i) % 4 {
                    0 => ("/status/404", 404, 6),
                    1 => ("/big?bytes=100000", 200, 100_000),
                    _ => ("/fast", 200, 4),
                };
                let req = Request::get(path)
                    .header("host", "x")
                    .body(Full::new(Bytes::new()))
                    .unwrap();
                let resp = sender.send_request(req).await.unwrap();
                assert_eq!(resp.status(), status, "{path}");
                let body = resp.into_body().collect().await.unwrap().to_bytes();
                assert_eq!(body.len(), len, "{path}");
            }
        })
    });
    for client in futures::future::join_all(clients).await {
        client.unwrap();
    }
    let [received, admitted, upstream_outcome, ok] = counts(&sidecar).await;
    assert_eq!(
        (received, admitted, upstream_outcome),
        (100.0, 100.0, 100.0)
    );
    assert_eq!(ok, 75.0);
    assert_eq!(
        sidecar
            .metric("sidecar_upstream_responses_total{code=\"404\"}")
            .await,
        25.0
    );
    assert!(upstream.max_in_flight() <= 2);
    assert!(upstream.connections() <= 2, "{}", upstream.connections());
}

#[tokio::test]
async fn keep_alive_clients_conserve_counts_on_the_fast_path() {
    keep_alive_clients_conserve_counts(true).await;
}

#[tokio::test]
async fn keep_alive_clients_conserve_counts_on_the_general_path() {
    keep_alive_clients_conserve_counts(false).await;
}

#[tokio::test]
async fn request_bodies_pass_whole_buffered_and_streamed() {
    let upstream = Upstream::start().await;
    let sidecar = start(config(upstream.uri(), 2)).await;
    let stream = TcpStream::connect(sidecar.addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    for len in [5usize, 200_000, 0, 17] {
        let req = Request::post("/echo")
            .header("host", "x")
            .body(Full::new(Bytes::from(vec![b'b'; len])))
            .unwrap();
        let resp = sender.send_request(req).await.unwrap();
        assert_eq!(resp.status(), 200);
        let body = resp.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(body, len.to_string().as_bytes());
    }
    assert_eq!(counts(&sidecar).await, [4.0; 4]);
}

#[tokio::test]
async fn chunked_bodies_and_http_1_0_go_to_the_general_path_on_the_same_connection() {
    let upstream = Upstream::start().await;
    let sidecar = start(config(upstream.uri(), 2)).await;
    let mut client = TcpStream::connect(sidecar.addr).await.unwrap();
    // A plain request (fast path), a chunked one (handover), a plain one (general path now).
    let requests = "GET /fast HTTP/1.1\r\nhost: x\r\n\r\n\
        POST /echo HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n\
        GET /fast HTTP/1.1\r\nhost: x\r\n\r\n";
    client.write_all(requests.as_bytes()).await.unwrap();
    let got = read_until(&mut client, |r| r.matches("\r\n\r\nfast").count() == 2).await;
    assert!(
        got.contains("\r\n\r\n5HTTP/1.1"),
        "echo answered in order: {got}"
    );
    let mut old = TcpStream::connect(sidecar.addr).await.unwrap();
    old.write_all(b"GET /fast HTTP/1.0\r\nhost: x\r\n\r\n")
        .await
        .unwrap();
    let mut reply = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), old.read_to_end(&mut reply))
        .await
        .expect("HTTP/1.0: closed after the response")
        .unwrap();
    let reply = String::from_utf8_lossy(&reply);
    assert!(
        reply.contains(" 200 OK\r\n") && reply.ends_with("fast"),
        "{reply}"
    );
    assert_eq!(counts(&sidecar).await, [4.0; 4]);
}

#[tokio::test]
async fn hop_by_hop_request_headers_are_not_forwarded() {
    let upstream = Upstream::start().await;
    let sidecar = start(config(upstream.uri(), 2)).await;
    let mut client = TcpStream::connect(sidecar.addr).await.unwrap();
    let head = "GET /headers HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, X-Trace\r\n\
                X-Trace: 1\r\nKeep-Alive: 5\r\nTE: trailers\r\nProxy-Connection: x\r\nX-Keep: 1\r\n\r\n";
    client.write_all(head.as_bytes()).await.unwrap();
    let got = read_until(&mut client, |r| r.ends_with("host,x-keep")).await;
    assert!(got.starts_with("HTTP/1.1 200 OK\r\n"), "{got}");
}

#[tokio::test]
async fn a_request_without_host_gets_the_upstreams_authority() {
    let upstream = Upstream::start().await;
    let sidecar = start(config(upstream.uri(), 2)).await;
    let mut client = TcpStream::connect(sidecar.addr).await.unwrap();
    client
        .write_all(b"GET /host HTTP/1.1\r\n\r\n")
        .await
        .unwrap();
    let expected = upstream.addr.to_string();
    let got = read_until(&mut client, |r| r.ends_with(&expected)).await;
    assert!(got.starts_with("HTTP/1.1 200 OK\r\n"), "{got}");
}

#[tokio::test]
async fn connection_close_is_answered_and_honoured() {
    let upstream = Upstream::start().await;
    let sidecar = start(config(upstream.uri(), 2)).await;
    let mut client = TcpStream::connect(sidecar.addr).await.unwrap();
    client
        .write_all(b"GET /fast HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut reply = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), client.read_to_end(&mut reply))
        .await
        .expect("closed after the response")
        .unwrap();
    let reply = String::from_utf8_lossy(&reply).to_ascii_lowercase();
    assert!(reply.contains("connection: close\r\n"), "{reply}");
    assert!(reply.ends_with("\r\n\r\nfast"), "{reply}");
}

/// A raw upstream: on each of at most `n` connections, answers one request head after
/// another with the next of `answers`, closing the connection after an answer marked `true`.
fn scripted_upstream(
    listener: TcpListener,
    n: usize,
    answers: Vec<(&'static str, bool)>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        for _ in 0..n {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let answers = answers.clone();
            tokio::spawn(async move {
                let mut pending = Vec::new();
                let mut buf = [0u8; 4096];
                for (answer, close) in answers {
                    while !pending.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(k) => pending.extend_from_slice(&buf[..k]),
                        }
                    }
                    let end = pending.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
                    pending.drain(..end);
                    if stream.write_all(answer.as_bytes()).await.is_err() || close {
                        return;
                    }
                }
            });
        }
    })
}

async fn sidecar_before_script(n: usize, answers: Vec<(&'static str, bool)>) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let _upstream = scripted_upstream(listener, n, answers);
    start(config(format!("http://{addr}").parse().unwrap(), 2)).await
}

#[tokio::test]
async fn head_responses_have_no_body_and_response_hop_by_hop_headers_are_dropped() {
    let sidecar = sidecar_before_script(
        1,
        vec![
            (
                "HTTP/1.1 200 OK\r\ncontent-length: 42\r\nx-keep: 1\r\nkeep-alive: timeout=5\r\n\
                 connection: x-drop\r\nx-drop: 1\r\n\r\n",
                false,
            ),
            ("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok", false),
        ],
    )
    .await;
    let mut client = TcpStream::connect(sidecar.addr).await.unwrap();
    client
        .write_all(b"HEAD /x HTTP/1.1\r\nhost: x\r\n\r\nGET /y HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .unwrap();
    let got = read_until(&mut client, |r| r.ends_with("\r\n\r\nok")).await;
    let first = &got[..got.find("\r\n\r\n").unwrap()];
    assert!(
        first.contains("content-length: 42") && first.contains("x-keep: 1"),
        "{got}"
    );
    assert!(
        !first.contains("keep-alive") && !first.contains("x-drop") && !first.contains("connection"),
        "{got}"
    );
    assert_eq!(got.matches("HTTP/1.1 200 OK").count(), 2, "{got}");
    assert_eq!(counts(&sidecar).await, [2.0; 4]);
}

#[tokio::test]
async fn a_close_delimited_response_reaches_the_client_as_chunks() {
    let sidecar = sidecar_before_script(
        1,
        vec![("HTTP/1.1 200 OK\r\nx-pod: raw\r\n\r\nhello world", true)],
    )
    .await;
    let mut client = TcpStream::connect(sidecar.addr).await.unwrap();
    client
        .write_all(b"GET /stream HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .unwrap();
    let got = read_until(&mut client, |r| r.ends_with("\r\n0\r\n\r\n")).await;
    assert!(got.contains("transfer-encoding: chunked\r\n"), "{got}");
    assert!(
        got.ends_with("\r\n\r\nb\r\nhello world\r\n0\r\n\r\n"),
        "{got}"
    );
    assert_eq!(counts(&sidecar).await, [1.0; 4]);
}

#[tokio::test]
async fn pooled_connections_the_upstream_closed_are_replaced() {
    // Each upstream connection answers one request, then closes without saying so.
    let ok = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
    let sidecar = sidecar_before_script(8, vec![(ok, true)]).await;
    for _ in 0..4 {
        let reply = get(sidecar.addr, "/x").await.unwrap();
        assert_eq!((reply.status, reply.body.as_str()), (200, "ok"));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(counts(&sidecar).await, [4.0; 4]);
    assert_eq!(
        sidecar
            .metric("sidecar_upstream_failures_total{reason=\"reset\"}")
            .await,
        0.0
    );
}

//! Upstream failures become the sidecar's own 502/504 answers.

use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;

use crate::support::{closed_port, config, start};
use workload_test_support::Upstream;

#[tokio::test]
async fn connection_refused_is_a_502_connect() {
    let port = closed_port().await;
    let sidecar = start(config(format!("http://{port}").parse().unwrap(), 2)).await;
    let reply = sidecar.get("/anything").await;
    assert_eq!(reply.status, 502);
    assert_eq!(reply.header("x-sidecar-error"), "connect");
    assert_eq!(reply.header("x-response-flags"), "UF");
    assert_eq!(reply.header("x-pod"), "sidecar-pod");
    let text = sidecar.metrics_text().await;
    let m = |s: &str| crate::support::sample(&text, s);
    assert_eq!(
        m("sidecar_upstream_failures_total{reason=\"connect\"}"),
        1.0
    );
    assert_eq!(
        m("sidecar_requests_total{outcome=\"upstream_failure\"}"),
        1.0
    );
    assert_eq!(m("sidecar_admitted_total"), 1.0);
    assert_eq!(m("sidecar_in_flight"), 0.0, "the slot came back");
}

#[tokio::test]
async fn a_slow_upstream_is_a_504_at_the_upstream_timeout() {
    let upstream = Upstream::start().await;
    let mut cfg = config(upstream.uri(), 2);
    cfg.upstream_timeout = Some(Duration::from_millis(300));
    let sidecar = start(cfg).await;
    let started = Instant::now();
    let reply = sidecar.get("/slow?ms=5000").await;
    let took = started.elapsed();
    assert_eq!(reply.status, 504);
    assert_eq!(reply.header("x-sidecar-error"), "timeout");
    assert_eq!(reply.header("x-response-flags"), "UT");
    assert!(
        took >= Duration::from_millis(280) && took < Duration::from_secs(3),
        "answered after {took:?}"
    );
    assert_eq!(
        sidecar
            .metric("sidecar_upstream_failures_total{reason=\"timeout\"}")
            .await,
        1.0
    );
    assert_eq!(sidecar.metric("sidecar_in_flight").await, 0.0);
    // Fast requests still fit within the timeout.
    assert_eq!(sidecar.get("/fast").await.status, 200);
}

#[tokio::test]
async fn an_upstream_closing_mid_request_is_a_502_reset() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // Accepts, reads the request head, closes without answering (bounded: 3 connections).
    let closer = tokio::spawn(async move {
        for _ in 0..3 {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let mut buf = [0u8; 1024];
            let _ = stream.read(&mut buf).await;
        }
    });
    let sidecar = start(config(format!("http://{addr}").parse().unwrap(), 2)).await;
    let reply = sidecar.get("/x").await;
    assert_eq!(reply.status, 502);
    assert_eq!(reply.header("x-sidecar-error"), "reset");
    assert_eq!(reply.header("x-response-flags"), "UF");
    assert_eq!(
        sidecar
            .metric("sidecar_upstream_failures_total{reason=\"reset\"}")
            .await,
        1.0
    );
    closer.abort();
}

#[tokio::test]
async fn a_body_stalling_past_the_upstream_timeout_is_cut_off() {
    use tokio::io::AsyncWriteExt;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // Declares 10 bytes, sends 3, then stalls (bounded: 5 s).
    let staller = tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 1024];
        let _ = stream.read(&mut buf).await;
        let head = "HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc";
        stream.write_all(head.as_bytes()).await.unwrap();
        tokio::time::sleep(Duration::from_secs(5)).await;
    });
    let mut cfg = config(format!("http://{addr}").parse().unwrap(), 2);
    cfg.upstream_timeout = Some(Duration::from_millis(300));
    let sidecar = start(cfg).await;
    let started = Instant::now();
    let result = crate::support::get(sidecar.addr, "/partial").await;
    let took = started.elapsed();
    assert!(result.is_err(), "the client sees a broken body: {result:?}");
    assert!(took < Duration::from_secs(3), "cut off after {took:?}");
    let text = sidecar.metrics_text().await;
    let m = |s: &str| crate::support::sample(&text, s);
    assert_eq!(m("sidecar_upstream_responses_total{code=\"200\"}"), 1.0);
    assert_eq!(
        m("sidecar_upstream_failures_total{reason=\"timeout\"}"),
        1.0
    );
    assert_eq!(m("sidecar_in_flight"), 0.0);
    staller.abort();
}

//! The concurrency limit and the admission queue, seen from clients and from the upstream.

use std::time::{Duration, Instant};

use futures::future::join_all;

use crate::support::{config, spawn_get, start, wait_until};
use workload_test_support::Upstream;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn never_more_than_n_in_flight_under_tenfold_overload() {
    let upstream = Upstream::start().await;
    let sidecar = start(config(upstream.uri(), 4)).await;
    let clients = (0..40).map(|_| {
        let addr = sidecar.addr;
        tokio::spawn(async move {
            let mut statuses = Vec::new();
            for _ in 0..3 {
                let reply = crate::support::get(addr, "/slow?ms=30").await.unwrap();
                statuses.push(reply.status);
            }
            statuses
        })
    });
    let statuses: Vec<u16> = join_all(clients)
        .await
        .into_iter()
        .flat_map(|r| r.unwrap())
        .collect();
    assert_eq!(statuses.len(), 120);
    assert!(statuses.iter().all(|s| *s == 200), "{statuses:?}");
    assert_eq!(upstream.max_in_flight(), 4, "limit reached, never exceeded");
    assert_eq!(upstream.requests(), 120);
    assert_eq!(sidecar.metric("sidecar_admitted_total").await, 120.0);
    assert_eq!(sidecar.metric("sidecar_received_total").await, 120.0);
    assert_eq!(sidecar.metric("sidecar_in_flight").await, 0.0);
}

#[tokio::test]
async fn queue_full_rejections_happen_exactly_at_the_bound() {
    let upstream = Upstream::start().await;
    let mut cfg = config(upstream.uri(), 2);
    cfg.queue_size = Some(3);
    let sidecar = start(cfg).await;
    let mut pending: Vec<_> = (0..10).map(|_| spawn_get(sidecar.addr, "/gate")).collect();

    // Five answers come back at once, all rejections; five stay (2 in flight, 3 queued).
    let mut rejected = Vec::new();
    wait_until("five requests answered", Duration::from_secs(5), || {
        let done = pending.iter().filter(|h| h.is_finished()).count();
        async move { done >= 5 }
    })
    .await;
    let mut still = Vec::new();
    for handle in pending.drain(..) {
        if handle.is_finished() {
            rejected.push(handle.await.unwrap().unwrap());
        } else {
            still.push(handle);
        }
    }
    assert_eq!(rejected.len(), 5);
    for reply in &rejected {
        assert_eq!(reply.status, 503);
        assert_eq!(reply.header("x-sidecar-reject"), "queue-full");
        assert_eq!(reply.header("x-response-flags"), "UO");
        assert_eq!(reply.header("x-pod"), "sidecar-pod");
        assert_eq!(reply.header("x-zone"), "zone-a");
    }
    assert_eq!(sidecar.metric("sidecar_in_flight").await, 2.0);
    assert_eq!(sidecar.metric("sidecar_queue_depth").await, 3.0);
    assert_eq!(
        sidecar
            .metric("sidecar_rejected_total{reason=\"queue_full\"}")
            .await,
        5.0
    );
    assert_eq!(upstream.in_flight(), 2);

    upstream.gate.add_permits(5);
    for handle in still {
        let reply = handle.await.unwrap().unwrap();
        assert_eq!(reply.status, 200);
        assert_eq!(reply.body, "gate");
    }
    assert_eq!(upstream.max_in_flight(), 2);
    assert_eq!(upstream.requests(), 5);
}

#[tokio::test]
async fn queue_timeout_rejections_happen_at_the_timeout() {
    let upstream = Upstream::start().await;
    let mut cfg = config(upstream.uri(), 1);
    cfg.queue_timeout = Some(Duration::from_millis(300));
    let sidecar = start(cfg).await;
    let holder = spawn_get(sidecar.addr, "/gate");
    wait_until("holder at upstream", Duration::from_secs(5), || async {
        upstream.in_flight() == 1
    })
    .await;

    let started = Instant::now();
    let reply = sidecar.get("/fast").await;
    let waited = started.elapsed();
    assert_eq!(reply.status, 503);
    assert_eq!(reply.header("x-sidecar-reject"), "queue-timeout");
    assert_eq!(reply.header("x-response-flags"), "UO");
    assert!(
        waited >= Duration::from_millis(280) && waited < Duration::from_secs(3),
        "rejected after {waited:?}, timeout 300 ms"
    );
    assert_eq!(
        upstream.requests(),
        1,
        "the timed-out request never reached it"
    );

    upstream.gate.add_permits(1);
    assert_eq!(holder.await.unwrap().unwrap().status, 200);
    let text = sidecar.metrics_text().await;
    let sample = |s| crate::support::sample(&text, s);
    assert_eq!(
        sample("sidecar_rejected_total{reason=\"queue_timeout\"}"),
        1.0
    );
    assert_eq!(sample("sidecar_admitted_total"), 1.0);
}

#[tokio::test]
async fn unbounded_queue_without_timeout_holds_requests_until_slots_free() {
    let upstream = Upstream::start().await;
    let sidecar = start(config(upstream.uri(), 1)).await;
    let handles: Vec<_> = (0..5).map(|_| spawn_get(sidecar.addr, "/gate")).collect();
    wait_until("four queued", Duration::from_secs(5), || async {
        sidecar.metric("sidecar_queue_depth").await == 4.0
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(handles.iter().filter(|h| h.is_finished()).count(), 0);
    assert_eq!(sidecar.metric("sidecar_queue_depth").await, 4.0);
    assert_eq!(upstream.requests(), 1);

    upstream.gate.add_permits(5);
    for handle in handles {
        assert_eq!(handle.await.unwrap().unwrap().status, 200);
    }
    assert_eq!(upstream.max_in_flight(), 1);
    let text = sidecar.metrics_text().await;
    let m = |series: &str| crate::support::sample(&text, series);
    assert_eq!(m("sidecar_rejected_total{reason=\"queue_full\"}"), 0.0);
    assert_eq!(m("sidecar_rejected_total{reason=\"queue_timeout\"}"), 0.0);
    assert_eq!(m("sidecar_admitted_total"), 5.0);
}

#[tokio::test]
async fn oversized_and_slow_request_heads_are_refused() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let upstream = Upstream::start().await;
    let mut cfg = config(upstream.uri(), 2);
    cfg.serve.max_header_bytes = 8 * 1024;
    cfg.serve.header_read_timeout = Duration::from_millis(300);
    let sidecar = start(cfg).await;

    let mut client = tokio::net::TcpStream::connect(sidecar.addr).await.unwrap();
    let filler = "a".repeat(16 * 1024);
    let head = format!("GET /fast HTTP/1.1\r\nhost: x\r\nx-filler: {filler}\r\n\r\n");
    let _ = client.write_all(head.as_bytes()).await;
    let mut reply = Vec::new();
    let read = client.read_to_end(&mut reply);
    let _ = tokio::time::timeout(Duration::from_secs(5), read).await;
    let reply = String::from_utf8_lossy(&reply);
    assert!(reply.starts_with("HTTP/1.1 431"), "{reply}");

    // A head that never completes is dropped after the header read timeout.
    let mut slow = tokio::net::TcpStream::connect(sidecar.addr).await.unwrap();
    slow.write_all(b"GET /fast HTTP/1.1\r\nhost: x\r\n")
        .await
        .unwrap();
    let started = Instant::now();
    let mut buf = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(5), slow.read_to_end(&mut buf)).await;
    assert!(closed.is_ok(), "connection closed by the sidecar");
    assert!(
        started.elapsed() >= Duration::from_millis(250),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(upstream.requests(), 0);
}

//! Shutdown: the drain delay keeps serving with /readyz failing; then streams end cleanly.

use std::time::Duration;

use crate::support::{RawClient, config, get, start, wait_until};
use workload_test_support::Upstream;

#[tokio::test]
async fn during_the_drain_delay_requests_are_served_and_readyz_fails() {
    let upstream = Upstream::start().await;
    let mut cfg = config(upstream.uri(), 2);
    cfg.serve.drain_delay = Duration::from_millis(800);
    let mut sidecar = start(cfg).await;
    assert_eq!(sidecar.get("/readyz").await.status, 200);
    sidecar.stop();
    wait_until("readyz fails", Duration::from_secs(1), || async {
        sidecar.get("/readyz").await.status == 503
    })
    .await;
    let reply = sidecar.get("/readyz").await;
    assert_eq!(reply.body, "draining\n");
    // Still served (new connection, through the proxy) during the drain delay.
    let reply = sidecar.get("/fast").await;
    assert_eq!((reply.status, reply.body.as_str()), (200, "fast"));
    assert_eq!(sidecar.metric("sidecar_ready").await, 0.0);

    let addr = sidecar.addr;
    let summary = sidecar.finish().await;
    assert!(summary.main.finished_cleanly);
    assert!(summary.main.accepted_while_draining >= 2, "{summary:?}");
    assert!(get(addr, "/fast").await.is_err(), "closed after the drain");
    assert_eq!(upstream.requests(), 1);
}

#[tokio::test]
async fn shutdown_ends_open_streams_cleanly() {
    let upstream = Upstream::start().await;
    let mut sidecar = start(config(upstream.uri(), 2)).await;
    let mut client = RawClient::sse(sidecar.addr, 5000).await;
    sidecar.stop();
    // The chunked stream ends with its terminating chunk, well before the next heartbeat.
    client
        .read_until("\r\n0\r\n\r\n", Duration::from_secs(3))
        .await;
    let summary = sidecar.finish().await;
    assert!(summary.main.finished_cleanly, "{summary:?}");
    assert!(summary.admin.finished_cleanly, "{summary:?}");
    wait_until("upstream stream closed", Duration::from_secs(2), || async {
        upstream.streams_open() == 0
    })
    .await;
}

/// The counters at exit include what arrived during the drain, after the last scrape a
/// harness could take: a terminating pod's arrivals are never cut short.
#[tokio::test]
async fn the_totals_at_exit_count_every_request_of_the_drain() {
    let upstream = Upstream::start().await;
    let mut cfg = config(upstream.uri(), 2);
    cfg.serve.drain_delay = Duration::from_millis(600);
    let mut sidecar = start(cfg).await;
    for _ in 0..3 {
        assert_eq!(sidecar.get("/fast").await.status, 200);
    }
    let scraped = sidecar.metric("sidecar_received_total").await;
    assert_eq!(scraped, 3.0);
    sidecar.stop();
    wait_until("readyz fails", Duration::from_secs(1), || async {
        sidecar.get("/readyz").await.status == 503
    })
    .await;
    // Two more arrive while it drains.
    for _ in 0..2 {
        assert_eq!(sidecar.get("/fast").await.status, 200);
    }
    let summary = sidecar.finish().await;
    assert_eq!(summary.totals.received, 5, "{summary:?}");
    assert_eq!(summary.totals.admitted, 5);
    assert_eq!(summary.totals.rejected_queue_full, 0);
    assert_eq!(upstream.requests(), 5);
    let line = summary.totals.totals_line();
    assert_eq!(
        workload_contract::sidecar::SidecarMetrics::parse_totals(&line),
        Some(summary.totals)
    );
}

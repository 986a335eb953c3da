//! Streams through the sidecar: relayed as they arrive, holding a slot for their whole life,
//! and giving it back promptly when the client goes away.

use std::time::Duration;

use crate::support::{RawClient, config, spawn_get, start, wait_until};
use workload_test_support::Upstream;

#[tokio::test]
async fn sse_events_reach_the_client_while_the_stream_stays_open() {
    let upstream = Upstream::start().await;
    let sidecar = start(config(upstream.uri(), 2)).await;
    let mut client = RawClient::sse(sidecar.addr, 100).await;
    let head = client.received.to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(head.contains("content-type: text/event-stream"), "{head}");
    assert!(
        head.contains("x-pod: upstream-pod"),
        "upstream headers pass through: {head}"
    );
    // Heartbeats keep arriving one by one on the same open response.
    client.read_until(": beat 3", Duration::from_secs(5)).await;
    assert!(
        !client.received.contains("\r\n0\r\n\r\n"),
        "stream not ended"
    );
    assert_eq!(sidecar.metric("sidecar_streams_open").await, 1.0);
    assert_eq!(sidecar.metric("sidecar_in_flight").await, 1.0);
    assert_eq!(upstream.streams_open(), 1);
}

#[tokio::test]
async fn a_closed_client_frees_its_stream_slot_promptly() {
    let upstream = Upstream::start().await;
    let sidecar = start(config(upstream.uri(), 1)).await;
    // Heartbeat every 5 s: nothing is written in the window below, so a release can only come
    // from the server noticing the client's EOF, not from a failed write.
    let client = RawClient::sse(sidecar.addr, 5000).await;
    assert_eq!(sidecar.metric("sidecar_in_flight").await, 1.0);
    drop(client);
    let freed = wait_until("slot freed", Duration::from_secs(3), || async {
        sidecar.metric("sidecar_in_flight").await == 0.0
    })
    .await;
    eprintln!("slot came back {freed:?} after the client closed");
    assert!(freed < Duration::from_millis(500), "took {freed:?}");
    assert_eq!(sidecar.metric("sidecar_streams_open").await, 0.0);
    // The sidecar also dropped its upstream stream (closing that connection).
    wait_until("upstream stream closed", Duration::from_secs(1), || async {
        upstream.streams_open() == 0
    })
    .await;
    assert_eq!(sidecar.get("/fast").await.status, 200, "the slot is usable");
}

#[tokio::test]
async fn k_streams_leave_n_minus_k_slots_and_closing_them_frees_the_slots() {
    let upstream = Upstream::start().await;
    let sidecar = start(config(upstream.uri(), 3)).await;
    let streams = vec![
        RawClient::sse(sidecar.addr, 5000).await,
        RawClient::sse(sidecar.addr, 5000).await,
    ];
    let requests: Vec<_> = (0..4).map(|_| spawn_get(sidecar.addr, "/gate")).collect();
    wait_until("three queued", Duration::from_secs(5), || async {
        sidecar.metric("sidecar_queue_depth").await == 3.0
    })
    .await;
    assert_eq!(upstream.in_flight(), 1, "N - K = 1 ordinary request runs");
    assert_eq!(sidecar.metric("sidecar_in_flight").await, 3.0);
    assert_eq!(sidecar.metric("sidecar_streams_open").await, 2.0);

    drop(streams);
    let freed = wait_until(
        "queued requests got the slots",
        Duration::from_secs(3),
        || async { upstream.in_flight() == 3 },
    )
    .await;
    assert!(freed < Duration::from_secs(1), "took {freed:?}");
    assert_eq!(sidecar.metric("sidecar_streams_open").await, 0.0);
    assert_eq!(sidecar.metric("sidecar_queue_depth").await, 1.0);

    upstream.gate.add_permits(4);
    for r in requests {
        assert_eq!(r.await.unwrap().unwrap().status, 200);
    }
    assert_eq!(upstream.max_in_flight(), 3);
}

#[tokio::test]
async fn a_queued_client_that_goes_away_leaves_the_queue() {
    let upstream = Upstream::start().await;
    let sidecar = start(config(upstream.uri(), 1)).await;
    let holder = spawn_get(sidecar.addr, "/gate");
    wait_until("holder admitted", Duration::from_secs(5), || async {
        upstream.in_flight() == 1
    })
    .await;
    let queued = RawClient::send(sidecar.addr, "/gate").await;
    wait_until("queued", Duration::from_secs(5), || async {
        sidecar.metric("sidecar_queue_depth").await == 1.0
    })
    .await;
    drop(queued);
    let left = wait_until("queue empty", Duration::from_secs(3), || async {
        sidecar.metric("sidecar_queue_depth").await == 0.0
    })
    .await;
    assert!(left < Duration::from_secs(1), "took {left:?}");
    upstream.gate.add_permits(1);
    assert_eq!(holder.await.unwrap().unwrap().status, 200);
    assert_eq!(
        upstream.requests(),
        1,
        "the abandoned request never reached the upstream"
    );
    assert_eq!(sidecar.metric("sidecar_admitted_total").await, 1.0);
}

#[tokio::test]
async fn a_client_leaving_before_the_response_head_frees_the_slot_and_the_upstream() {
    let upstream = Upstream::start().await;
    let sidecar = start(config(upstream.uri(), 1)).await;
    let client = RawClient::send(sidecar.addr, "/gate").await;
    wait_until("at the upstream", Duration::from_secs(5), || async {
        upstream.in_flight() == 1
    })
    .await;
    drop(client);
    wait_until("slot freed", Duration::from_secs(3), || async {
        sidecar.metric("sidecar_in_flight").await == 0.0
    })
    .await;
    // The upstream request was cancelled too (its connection closed), not left running.
    wait_until("upstream cancelled", Duration::from_secs(3), || async {
        upstream.in_flight() == 0
    })
    .await;
    assert_eq!(upstream.gate.available_permits(), 0, "nothing released it");
    assert_eq!(sidecar.get("/fast").await.status, 200);
}

//! Coordinated omission: a server that pauses must show up in the open-loop percentiles.
//!
//! SLOW TEST: `open_loop_sees_the_stall_closed_loop_hides_it` runs two 20 s loads side by side
//! (about 21 s of wall time).

mod common;

use std::time::Duration;

use common::{config, full, http_server};
use loadgen::{RateSpec, ReportExt};
use tokio::time::Instant;

/// A server that is "paused" for 1 s of every 10 s (from its own start): a request arriving
/// in [4 s, 5 s) of a 10 s window is held until 5 s, like a process that was stopped and
/// continued. (The pause sits mid-window so a 20 s run ends well after its second pause.)
async fn stalling_server() -> common::TestServer {
    let epoch = Instant::now();
    http_server(move |_, _| async move {
        let now = epoch.elapsed();
        let window = now.as_secs() / 10;
        let phase = now.as_secs_f64() - (window * 10) as f64;
        if (4.0..5.0).contains(&phase) {
            tokio::time::sleep_until(epoch + Duration::from_secs(window * 10 + 5)).await;
        }
        full(200, "pausing", "")
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_loop_sees_the_stall_closed_loop_hides_it() {
    let (open_server, closed_server) = (stalling_server().await, stalling_server().await);

    // Open loop, 200 rps for 20 s on 20 connections: 4000 requests, two stalls at [4, 5) and
    // [14, 15). A request intended at 4 s + x waits until 5 s, so its latency is 1 s − x
    // (waiting requests queue behind the 20 stuck connections, latency still counted from the
    // intended time). Stalled requests are 2 × 200 = 400 (10%) with latencies spread uniformly
    // over (0, 1 s]; the slowest 1% (40 requests) are those with x < 40 / 400 s = 0.1 s, so
    // p99 ≈ 1 s − 0.1 s = 0.9 s.
    let open = config(open_server.url("/"), 200.0, Duration::from_secs(20), 20);

    // Closed loop on the same kind of server: only the one request in flight per connection
    // waits out a stall (4 slow samples per stall) while thousands of fast ones are recorded,
    // so p99 stays near the fast-path latency.
    let mut closed = config(closed_server.url("/"), 0.0, Duration::from_secs(20), 4);
    closed.rate = RateSpec::Max;

    let (open, closed) = tokio::join!(
        loadgen::run(open, std::future::pending()),
        loadgen::run(closed, std::future::pending()),
    );
    let (open, closed) = (open.unwrap(), closed.unwrap());
    open.check_invariants().unwrap();
    closed.check_invariants().unwrap();

    assert_eq!(open.attempted, 4000);
    assert_eq!(open.responses["200"], 4000);
    let p99 = open.latency_ms.p99;
    eprintln!(
        "open loop: {:?}\nclosed loop ({} requests): {:?}",
        open.latency_ms, closed.attempted, closed.latency_ms
    );
    assert!((500.0..=1100.0).contains(&p99), "open-loop p99 {p99} ms");
    assert!(open.latency_ms.max >= 900.0, "max {}", open.latency_ms.max);
    // The stalls are visible in the timeline rows of seconds 4 and 14.
    for t in [4, 14] {
        let row_p99 = open.timeline[t].latency_ms_p99.unwrap();
        assert!(row_p99 >= 500.0, "t={t} p99 {row_p99}");
    }

    assert!(
        closed.attempted > 1000,
        "closed loop sent {}",
        closed.attempted
    );
    let closed_p99 = closed.latency_ms.p99;
    assert!(
        closed_p99 < p99 / 2.0,
        "closed-loop p99 {closed_p99} ms vs open-loop {p99} ms"
    );
}

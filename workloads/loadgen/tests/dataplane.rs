//! The data plane end to end, in-process on loopback: loadgen → sidecar → flagsvc (or a counting
//! upstream). What the generator counted must equal what the sidecar counted, exactly; the
//! sidecar's concurrency limit must hold at the upstream with streams holding slots; overload
//! through a bounded queue must show up as 503s that the sidecar counted one for one.
//!
//! Every run is bounded (loadgen durations of a few seconds, per-request timeouts, bounded waits);
//! exact counts are asserted only where they are deterministic, timing bounds are generous.

mod common;
mod dataplane_support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use common::config as run_config;
use dataplane_support::{
    Flagsvc, Scrape, Sidecar, UPSTREAM_POD, Upstream, get, sidecar_config, wait_until,
};
use flagsvc::ServiceTime;
use loadgen::{ConnectionModel, Report, ReportExt, RunConfig};
use tokio_util::sync::CancellationToken;

const FLAGSVC_POD: &str = "flagsvc-0";
const SIDECAR_POD: &str = "sidecar-0";
/// No loadgen run in this file may take longer than this (duration + drain).
const RUN_LIMIT: Duration = Duration::from_secs(20);

async fn run(cfg: RunConfig) -> Report {
    let report = tokio::time::timeout(RUN_LIMIT, loadgen::run(cfg, std::future::pending()))
        .await
        .expect("the run ends within its limit")
        .expect("the run succeeds");
    report.check_invariants().unwrap();
    report
}

fn codes(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(c, n)| (c.to_string(), *n))
        .collect()
}

/// The sidecar's counters that must all be zero in a run without faults or overload.
fn assert_no_rejections_or_failures(m: &Scrape) {
    for reason in ["queue_full", "queue_timeout"] {
        assert_eq!(
            m.get(&format!("sidecar_rejected_total{{reason=\"{reason}\"}}")),
            0,
            "{reason}"
        );
    }
    for reason in ["connect", "timeout", "reset", "other"] {
        assert_eq!(
            m.get(&format!(
                "sidecar_upstream_failures_total{{reason=\"{reason}\"}}"
            )),
            0,
            "{reason}"
        );
    }
}

/// flagsvc + sidecar + loadgen, no faults: loadgen's counts equal the sidecar's, exactly.
async fn conservation(model: ConnectionModel) {
    let flags = Flagsvc::start(FLAGSVC_POD, ServiceTime::Fixed(Duration::ZERO)).await;
    let sidecar = Sidecar::start(sidecar_config(flags.uri(), 100)).await;

    let mut cfg = run_config(
        sidecar.url("/flags/demo"),
        300.0,
        Duration::from_secs(3),
        16,
    );
    cfg.connection_model = model;
    let report = run(cfg).await;

    // 300 rps × 3 s, every arrival sent and answered.
    assert_eq!(report.attempted, 900, "{model}");
    assert_eq!(report.dropped, 0, "{model}");
    assert_eq!(
        report.total_transport_errors(),
        0,
        "{model}: {:?}",
        report.transport_errors
    );
    assert!(!report.partial);
    let attempted = report.attempted;
    assert_eq!(report.total_responses(), attempted);
    assert_eq!(report.responses, codes(&[("200", attempted)]), "{model}");
    // Upstream responses pass through the sidecar untouched: all attributed to flagsvc's pod.
    assert_eq!(
        report.by_backend.keys().collect::<Vec<_>>(),
        vec![FLAGSVC_POD],
        "{model}"
    );
    let backend = &report.by_backend[FLAGSVC_POD];
    assert_eq!(backend.requests, attempted);
    assert_eq!(backend.responses, codes(&[("200", attempted)]));
    assert!(backend.transport_errors.is_empty());

    // The sidecar counted the same requests, exactly.
    let m = sidecar.scrape().await;
    assert_eq!(m.get("sidecar_received_total"), attempted, "{model}");
    assert_eq!(m.get("sidecar_admitted_total"), attempted, "{model}");
    assert_eq!(
        m.family("sidecar_upstream_responses_total", "code"),
        codes(&[("200", attempted)]),
        "{model}"
    );
    assert_eq!(
        m.get("sidecar_requests_total{outcome=\"upstream\"}"),
        attempted
    );
    assert_no_rejections_or_failures(&m);
    assert_eq!(m.get("sidecar_in_flight"), 0);
    assert_eq!(m.get("sidecar_queue_depth"), 0);
    assert_eq!(m.get("sidecar_streams_open"), 0);

    // Both stop cleanly; the sidecar accepted exactly the connections loadgen opened.
    let summary = sidecar.stop().await;
    assert!(summary.main.finished_cleanly, "{summary:?}");
    assert!(summary.admin.finished_cleanly, "{summary:?}");
    let expected_connections = match model {
        ConnectionModel::KeepAlive => 16,
        ConnectionModel::PerRequest => attempted,
    };
    assert_eq!(summary.main.connections, expected_connections, "{model}");
    let summary = flags.stop().await;
    assert!(summary.finished_cleanly, "{summary:?}");
    assert!(summary.connections >= 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_alive_counts_are_conserved_through_the_sidecar() {
    conservation(ConnectionModel::KeepAlive).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_request_counts_are_conserved_through_the_sidecar() {
    conservation(ConnectionModel::PerRequest).await;
}

/// K streams through the sidecar leave N - K slots for ordinary requests, measured at the
/// upstream; closing the stream clients gives the K slots back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_hold_slots_and_closing_them_frees_the_slots() {
    const N: usize = 6;
    const K: usize = 2;
    let upstream = Upstream::start().await;
    let sidecar = Sidecar::start(sidecar_config(upstream.uri(), N)).await;

    // K streams held open by a stream-only loadgen run (until `close_streams`).
    let close_streams = CancellationToken::new();
    let mut sse_cfg = run_config(sidecar.url("/"), 0.0, Duration::from_secs(30), 1);
    sse_cfg.sse_streams = K;
    let sse_run = tokio::spawn(loadgen::run(
        sse_cfg,
        close_streams.clone().cancelled_owned(),
    ));
    wait_until("K streams open", Duration::from_secs(5), || async {
        upstream.streams_open() == K && sidecar.metric("sidecar_streams_open").await == K as u64
    })
    .await;
    assert_eq!(sidecar.metric("sidecar_in_flight").await, K as u64);

    // Ordinary load wanting ~9 at once (300 rps × 30 ms) for 1.5 s, at most 8 outstanding at
    // the generator: far more than the N - K = 4 slots left.
    upstream.reset_maxima();
    let mut cfg = run_config(
        sidecar.url("/work?ms=30"),
        300.0,
        Duration::from_millis(1500),
        8,
    );
    cfg.max_in_flight = 8;
    let report = run(cfg).await;
    let attempted = report.attempted;
    assert!(attempted > 0);
    assert_eq!(
        report.total_transport_errors(),
        0,
        "{:?}",
        report.transport_errors
    );
    assert_eq!(report.responses, codes(&[("200", attempted)]));
    assert_eq!(report.by_backend[UPSTREAM_POD].requests, attempted);
    assert_eq!(upstream.requests() as u64, attempted);

    // At the upstream: never more than N - K ordinary requests at once (and the limit was
    // reached: the load wanted twice that), never more than N including the streams.
    assert!(
        upstream.max_in_flight() <= N - K,
        "{} ordinary requests ran at once beside {K} streams with {N} slots",
        upstream.max_in_flight()
    );
    assert_eq!(upstream.max_in_flight(), N - K);
    assert!(upstream.max_total() <= N, "{}", upstream.max_total());
    assert_eq!(upstream.streams_open(), K, "the streams stayed open");

    // The sidecar counted the streams and the requests, nothing rejected (unbounded queue).
    let m = sidecar.scrape().await;
    let proxied = attempted + K as u64;
    assert_eq!(m.get("sidecar_received_total"), proxied);
    assert_eq!(m.get("sidecar_admitted_total"), proxied);
    assert_eq!(
        m.family("sidecar_upstream_responses_total", "code"),
        codes(&[("200", proxied)])
    );
    assert_no_rejections_or_failures(&m);
    assert_eq!(m.get("sidecar_in_flight"), K as u64);
    assert_eq!(m.get("sidecar_streams_open"), K as u64);

    // Close the stream clients: the run stops, its streams were never failures.
    close_streams.cancel();
    let sse_report = tokio::time::timeout(RUN_LIMIT, sse_run)
        .await
        .expect("the stream run stops")
        .unwrap()
        .unwrap();
    let sse = &sse_report.sse;
    assert_eq!(sse_report.attempted, 0);
    assert!(sse_report.partial);
    assert_eq!(sse.streams_opened, K as u64);
    assert_eq!(sse.streams_failed, 0, "{:?}", sse.failures);
    assert_eq!(sse.reconnects, 0);
    assert_eq!(sse.by_backend[UPSTREAM_POD].opened, K as u64);
    assert!(sse.events >= K as u64, "{}", sse.events);
    assert_eq!(upstream.stream_requests(), K);

    // The slots come back, and the upstream streams are closed too.
    let freed = wait_until("stream slots freed", Duration::from_secs(3), || async {
        let m = sidecar.scrape().await;
        m.get("sidecar_in_flight") == 0 && m.get("sidecar_streams_open") == 0
    })
    .await;
    assert!(freed < Duration::from_secs(2), "took {freed:?}");
    wait_until(
        "upstream streams closed",
        Duration::from_secs(3),
        || async { upstream.streams_open() == 0 },
    )
    .await;

    // Now N ordinary requests run at once (the N + 1st waits in the queue).
    upstream.reset_maxima();
    let gated: Vec<_> = (0..=N)
        .map(|_| tokio::spawn(get(sidecar.addr, "/gate")))
        .collect();
    wait_until(
        "N at the upstream, one queued",
        Duration::from_secs(5),
        || async { upstream.in_flight() == N && sidecar.metric("sidecar_queue_depth").await == 1 },
    )
    .await;
    assert_eq!(sidecar.metric("sidecar_in_flight").await, N as u64);
    upstream.gate.add_permits(N + 1);
    for handle in gated {
        let reply = handle.await.unwrap().unwrap();
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(reply.body, "gate");
    }
    assert_eq!(upstream.max_in_flight(), N);
    assert_eq!(
        sidecar.metric("sidecar_admitted_total").await,
        proxied + N as u64 + 1
    );
}

/// 10× overload through the real sidecar with a bounded queue: the 503s loadgen saw are the
/// sidecar's rejections, one for one; its 200s are the sidecar's admissions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overload_rejections_are_counted_the_same_on_both_sides() {
    const N: usize = 4;
    const SERVICE: Duration = Duration::from_millis(50);
    let flags = Flagsvc::start(FLAGSVC_POD, ServiceTime::Fixed(SERVICE)).await;
    let mut sc = sidecar_config(flags.uri(), N);
    sc.queue_size = Some(8);
    sc.queue_timeout = Some(Duration::from_millis(100));
    let sidecar = Sidecar::start(sc).await;

    // Capacity N / 50 ms = 80 rps; offered 800 rps for 2 s.
    let cfg = run_config(
        sidecar.url("/flags/demo"),
        800.0,
        Duration::from_secs(2),
        64,
    );
    let started = Instant::now();
    let report = run(cfg).await;
    let elapsed = started.elapsed();

    let attempted = report.attempted;
    let ok = report.responses.get("200").copied().unwrap_or(0);
    let unavailable = report.responses.get("503").copied().unwrap_or(0);
    let errors = report.total_transport_errors();
    eprintln!(
        "overload: attempted {attempted} dropped {} 200 {ok} 503 {unavailable} errors {errors} \
         in {elapsed:?}",
        report.dropped
    );
    assert_eq!(attempted, report.total_responses() + errors);
    assert_eq!(errors, 0, "{:?}", report.transport_errors);
    assert_eq!(
        report.responses,
        codes(&[("200", ok), ("503", unavailable)])
    );
    assert!(unavailable > 0, "10× overload must be shed");
    assert!(ok > 0);
    // Each admitted request holds one of the N slots for at least the service time.
    let most = N as u64 * (elapsed.as_millis() / SERVICE.as_millis()) as u64;
    assert!(ok <= most, "{ok} admitted in {elapsed:?}, at most {most}");

    // By pod: the 200s are flagsvc's, the 503s the sidecar's own.
    assert_eq!(
        report.by_backend[FLAGSVC_POD].responses,
        codes(&[("200", ok)])
    );
    assert_eq!(
        report.by_backend[SIDECAR_POD].responses,
        codes(&[("503", unavailable)])
    );

    // The sidecar's counts, exactly.
    let m = sidecar.scrape().await;
    let full = m.get("sidecar_rejected_total{reason=\"queue_full\"}");
    let timed_out = m.get("sidecar_rejected_total{reason=\"queue_timeout\"}");
    eprintln!("sidecar rejected: queue_full {full} queue_timeout {timed_out}");
    assert_eq!(unavailable, full + timed_out);
    assert_eq!(m.get("sidecar_received_total"), attempted);
    assert_eq!(m.get("sidecar_admitted_total"), ok);
    assert_eq!(
        m.family("sidecar_upstream_responses_total", "code"),
        codes(&[("200", ok)])
    );
    assert_eq!(m.get("sidecar_requests_total{outcome=\"upstream\"}"), ok);
    assert_eq!(
        m.get("sidecar_requests_total{outcome=\"queue_full\"}"),
        full
    );
    assert_eq!(
        m.get("sidecar_requests_total{outcome=\"queue_timeout\"}"),
        timed_out
    );
    assert_eq!(
        m.get("sidecar_requests_total{outcome=\"upstream_failure\"}"),
        0
    );
    assert_eq!(m.get("sidecar_in_flight"), 0);
    assert_eq!(m.get("sidecar_queue_depth"), 0);

    let summary = sidecar.stop().await;
    assert!(summary.main.finished_cleanly, "{summary:?}");
    assert!(flags.stop().await.finished_cleanly);
}

//! SSE streams: events counted per pod, ended/failed streams counted and reconnected.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{config, full, http_server, sse_body};
use loadgen::{Metrics, RateSpec, ReportExt};

const EVENT: &[u8] = b"event: flags\ndata: {\"dark-mode\":true}\n\n: keep-alive comment\n\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ended_and_refused_streams_are_counted_and_reconnected() {
    // Stream requests in arrival order: #0 gets a 503 (from pod-x); #1..=#6 get 3 events each
    // from pod-(n % 2), then the stream ends; from #7 on the server never answers, so each slot's
    // last attempt is still opening when the run stops (not a failure).
    let requests = Arc::new(AtomicUsize::new(0));
    let counter = requests.clone();
    let server = http_server(move |_, _| {
        let n = counter.fetch_add(1, Ordering::SeqCst);
        async move {
            match n {
                0 => full(503, "pod-x", "busy"),
                1..=6 => {
                    let mut r = full(200, &format!("pod-{}", n % 2), "");
                    *r.body_mut() = sse_body(EVENT, Duration::from_millis(1), Some(3));
                    r
                }
                _ => std::future::pending().await,
            }
        }
    })
    .await;
    let metrics = Metrics::new();
    let mut cfg = config(server.url("/"), 0.0, Duration::from_secs(2), 1);
    cfg.rate = RateSpec::Constant(0.0);
    cfg.sse_streams = 2;
    let report = loadgen::run_with_metrics(cfg, metrics.clone(), std::future::pending())
        .await
        .unwrap();
    let sse = &report.sse;
    assert_eq!(report.attempted, 0);
    assert_eq!(sse.streams, 2);
    assert_eq!(sse.streams_opened, 6);
    assert_eq!(sse.events, 18);
    assert_eq!(sse.failures["ended"], 6);
    assert_eq!(sse.failures["status_503"], 1);
    assert_eq!(sse.streams_failed, 7);
    // 9 attempts (1 + 6 + the 2 left opening) over 2 slots.
    assert_eq!(requests.load(Ordering::SeqCst), 9);
    assert_eq!(sse.reconnects, 7);
    for pod in ["pod-0", "pod-1"] {
        let b = &sse.by_backend[pod];
        assert_eq!((b.opened, b.failed, b.events), (3, 3, 9), "{pod}");
    }
    assert_eq!(sse.by_backend["pod-x"].failed, 1);
    let text = metrics.encode();
    assert!(text.contains("loadgen_sse_streams_open 0"), "{text}");
    assert!(text.contains("loadgen_sse_events_total 18"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_stay_open_beside_request_load_on_their_own_connections() {
    // Per connection, the paths it carried; streams must not share the request pool.
    let paths: Arc<Mutex<BTreeMap<usize, BTreeSet<String>>>> = Arc::default();
    let streams_served = Arc::new(AtomicUsize::new(0));
    let (seen, served) = (paths.clone(), streams_served.clone());
    let server = http_server(move |conn, req| {
        let path = req.uri().path().to_string();
        seen.lock()
            .unwrap()
            .entry(conn)
            .or_default()
            .insert(path.clone());
        let served = served.clone();
        async move {
            if path == "/stream" {
                // One event at once, then one every 20 ms for as long as the client listens
                // (bounded at 500 events).
                served.fetch_add(1, Ordering::SeqCst);
                let mut r = full(200, &format!("sse-{}", conn % 2), "");
                *r.body_mut() = sse_body(b"data: tick\n\n", Duration::from_millis(20), Some(500));
                r
            } else {
                full(200, "api", "ok")
            }
        }
    })
    .await;
    let mut cfg = config(server.url("/flags"), 50.0, Duration::from_secs(1), 4);
    cfg.sse_streams = 3;
    let report = loadgen::run(cfg, std::future::pending()).await.unwrap();

    assert_eq!(report.attempted, 50);
    assert_eq!(report.responses["200"], 50);
    assert_eq!(report.by_backend["api"].requests, 50);
    report.check_invariants().unwrap();

    let sse = &report.sse;
    assert_eq!(sse.streams_opened, 3);
    assert_eq!(sse.streams_failed, 0, "{:?}", sse.failures);
    assert_eq!(sse.reconnects, 0);
    // At least the first event of each stream arrived; no more than 500 per stream were sent.
    assert!(sse.events >= 3 && sse.events <= 1500, "{}", sse.events);
    let per_pod: u64 = sse.by_backend.values().map(|b| b.events).sum();
    assert_eq!(per_pod, sse.events);
    assert_eq!(sse.by_backend.values().map(|b| b.opened).sum::<u64>(), 3);
    assert_eq!(streams_served.load(Ordering::SeqCst), 3);

    let paths = paths.lock().unwrap();
    let stream_conns = paths.values().filter(|p| p.contains("/stream")).count();
    assert_eq!(stream_conns, 3);
    assert!(paths.values().all(|p| p.len() == 1), "{paths:?}");
}

//! The report counts exactly what the server saw: per pod, per status, per second.

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{config, full, http_server};
use loadgen::{ConnectionModel, Metrics, RateSpec, Report, ReportExt};

type Seen = Arc<Mutex<BTreeMap<(String, u16), u64>>>;

/// Pods by connection: connection k is served by pod-(k % 4); pod-0 and pod-1 answer 200,
/// pod-2 and pod-3 answer 500. The server counts what it answered.
async fn pod_server() -> (common::TestServer, Seen) {
    let seen: Seen = Arc::default();
    let counts = seen.clone();
    let server = http_server(move |conn, _req| {
        let counts = counts.clone();
        async move {
            let pod = format!("pod-{}", conn % 4);
            let status = if conn % 4 < 2 { 200 } else { 500 };
            *counts
                .lock()
                .unwrap()
                .entry((pod.clone(), status))
                .or_default() += 1;
            full(status, &pod, "flags")
        }
    })
    .await;
    (server, seen)
}

fn assert_matches_server(report: &Report, seen: &BTreeMap<(String, u16), u64>) {
    let mut by_status: BTreeMap<String, u64> = BTreeMap::new();
    for ((pod, status), n) in seen {
        let backend = &report.by_backend[pod];
        assert_eq!(backend.responses[&status.to_string()], *n, "{pod} {status}");
        *by_status.entry(status.to_string()).or_default() += n;
    }
    let served_pods: std::collections::BTreeSet<&String> = seen.keys().map(|(p, _)| p).collect();
    assert_eq!(
        report
            .by_backend
            .keys()
            .collect::<std::collections::BTreeSet<_>>(),
        served_pods
    );
    assert_eq!(report.responses, by_status);
    let server_total: u64 = seen.values().sum();
    assert_eq!(report.attempted, server_total);
    let backend_sum: u64 = report.by_backend.values().map(|b| b.requests).sum();
    assert_eq!(backend_sum, report.total_responses());
    report.check_invariants().unwrap();
}

fn timeline_sums(report: &Report) -> (u64, u64, BTreeMap<String, u64>) {
    let mut by_backend = BTreeMap::new();
    for row in &report.timeline {
        for (pod, n) in &row.by_backend {
            *by_backend.entry(pod.clone()).or_default() += n;
        }
    }
    let attempted = report.timeline.iter().map(|r| r.attempted).sum();
    let responses = report
        .timeline
        .iter()
        .map(|r| r.responses.values().sum::<u64>())
        .sum();
    (attempted, responses, by_backend)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_alive_counts_equal_the_servers_counts() {
    let (server, seen) = pod_server().await;
    let metrics = Metrics::new();
    let cfg = config(server.url("/flags"), 400.0, Duration::from_secs(2), 8);
    let report = loadgen::run_with_metrics(cfg, metrics.clone(), std::future::pending())
        .await
        .unwrap();
    let seen = seen.lock().unwrap().clone();

    // 400 rps × 2 s, all answered by a local server.
    assert_eq!(report.attempted, 800);
    assert_eq!(report.dropped, 0);
    assert_eq!(report.total_transport_errors(), 0);
    assert!(!report.partial);
    assert_eq!(report.schema, "loadgen-report/v1");
    assert_matches_server(&report, &seen);
    // Keep-alive: 8 connections opened once (4 pods × 2 connections each).
    assert_eq!(server.accepted(), 8);

    let (attempted, responses, by_backend) = timeline_sums(&report);
    assert_eq!(report.timeline.len(), 2);
    assert_eq!(attempted, 800);
    assert_eq!(responses, 800);
    for (pod, b) in &report.by_backend {
        assert_eq!(by_backend[pod], b.requests, "{pod}");
    }
    assert_eq!(report.latency_ms.samples, 800);
    assert!(report.latency_ms.p50 <= report.latency_ms.p99);
    assert!(report.latency_ms.p99 <= report.latency_ms.max);

    // The source-side metrics counted the same.
    let text = metrics.encode();
    assert!(text.contains("loadgen_attempted_total 800"), "{text}");
    let ok = report.responses.get("200").copied().unwrap_or(0);
    assert!(
        text.contains(&format!("loadgen_responses_total{{code=\"200\"}} {ok}")),
        "{text}"
    );
    assert!(text.contains("loadgen_in_flight 0"), "{text}");
    assert!(text.contains("loadgen_dropped_total 0"), "{text}");

    // The JSON round-trips.
    let json = serde_json::to_string(&report).unwrap();
    let back: Report = serde_json::from_str(&json).unwrap();
    assert_eq!(back, report);
    assert!(json.contains("\"schema\":\"loadgen-report/v1\""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_request_opens_one_connection_per_request() {
    let (server, seen) = pod_server().await;
    let mut cfg = config(server.url("/"), 200.0, Duration::from_secs(1), 4);
    cfg.connection_model = ConnectionModel::PerRequest;
    let report = loadgen::run(cfg, std::future::pending()).await.unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(report.attempted, 200);
    assert_eq!(report.total_transport_errors(), 0);
    assert_matches_server(&report, &seen);
    assert_eq!(server.accepted(), 200);
    // Connections rotate over the pods: each gets a quarter.
    for pod in ["pod-0", "pod-1", "pod-2", "pod-3"] {
        assert_eq!(report.by_backend[pod].requests, 50, "{pod}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ramps_and_closed_loop_keep_the_invariants() {
    let (server, seen) = pod_server().await;
    // 0 → 100 rps over 2 s: r(t) = 50 t, N(t) = 25 t², so 25 arrivals in the first second
    // and 75 in the second.
    let mut cfg = config(server.url("/"), 0.0, Duration::from_secs(2), 4);
    cfg.rate = RateSpec::Ramp {
        from: 0.0,
        to: 100.0,
    };
    let report = loadgen::run(cfg, std::future::pending()).await.unwrap();
    assert_eq!(report.attempted, 100);
    assert_eq!(report.timeline.len(), 2);
    assert_eq!(report.timeline[0].attempted, 25);
    assert_eq!(report.timeline[1].attempted, 75);
    assert_matches_server(&report, &seen.lock().unwrap().clone());

    let (server, seen) = pod_server().await;
    let mut cfg = config(server.url("/"), 0.0, Duration::from_millis(500), 2);
    cfg.rate = RateSpec::Max;
    let report = loadgen::run(cfg, std::future::pending()).await.unwrap();
    assert!(report.attempted > 0);
    assert_eq!(report.dropped, 0);
    assert_matches_server(&report, &seen.lock().unwrap().clone());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_are_served_while_running() {
    let (server, _seen) = pod_server().await;
    let metrics = Metrics::new();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let metrics_addr = listener.local_addr().unwrap();
    let stop = tokio_util::sync::CancellationToken::new();
    let serving = tokio::spawn(loadgen::serve_metrics(
        listener,
        metrics.clone(),
        stop.clone().cancelled_owned(),
    ));
    let cfg = config(server.url("/"), 100.0, Duration::from_millis(500), 2);
    let report = loadgen::run_with_metrics(cfg, metrics, std::future::pending())
        .await
        .unwrap();
    let (status, body) = common::get(metrics_addr, "/metrics").await;
    assert_eq!(status, 200);
    assert!(
        body.contains(&format!("loadgen_attempted_total {}", report.attempted)),
        "{body}"
    );
    assert!(
        body.contains("loadgen_transport_errors_total{kind=\"reset\"} 0"),
        "{body}"
    );
    assert!(body.contains("loadgen_sse_streams_open 0"), "{body}");
    let (status, _) = common::get(metrics_addr, "/other").await;
    assert_eq!(status, 404);
    stop.cancel();
    tokio::time::timeout(Duration::from_secs(5), serving)
        .await
        .unwrap()
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_signal_ends_the_run_early_with_a_partial_report() {
    let (server, seen) = pod_server().await;
    let cfg = config(server.url("/"), 100.0, Duration::from_secs(30), 4);
    let stop = tokio::time::sleep(Duration::from_millis(500));
    let report = loadgen::run(cfg, stop).await.unwrap();
    assert!(report.partial);
    assert!(report.duration_s < 29.0, "{}", report.duration_s);
    // Every arrival intended before the stop was attempted: N = ceil(100 × duration).
    let expected = (100.0 * report.duration_s).ceil() as u64;
    assert!(
        report.attempted + report.dropped >= expected.saturating_sub(1)
            && report.attempted + report.dropped <= expected + 1,
        "attempted {} dropped {} expected {expected}",
        report.attempted,
        report.dropped
    );
    assert_matches_server(&report, &seen.lock().unwrap().clone());
}

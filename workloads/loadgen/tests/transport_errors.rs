//! Requests without a response are classified by kind, and arrivals over `--max-in-flight` are
//! counted as dropped, never skipped.

mod common;

use std::time::Duration;

use common::{Misbehave, config, full, http_server, raw_server};
use loadgen::{ConnectionModel, Metrics, Report, ReportExt};

fn errors(report: &Report) -> [u64; 4] {
    ["connect_refused", "reset", "timeout", "other"].map(|k| report.transport_errors[k])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_connections_are_connect_refused() {
    // A port that was just bound and released: nothing listens there.
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    for model in [ConnectionModel::KeepAlive, ConnectionModel::PerRequest] {
        let url = format!("http://{dead}/").parse().unwrap();
        let mut cfg = config(url, 20.0, Duration::from_secs(1), 2);
        cfg.connection_model = model;
        let report = loadgen::run(cfg, std::future::pending()).await.unwrap();
        assert_eq!(report.attempted, 20, "{model}");
        assert_eq!(errors(&report), [20, 0, 0, 0], "{model}");
        assert_eq!(report.total_responses(), 0);
        report.check_invariants().unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closed_without_response_is_reset() {
    let server = raw_server(Misbehave::CloseWithoutResponse).await;
    for model in [ConnectionModel::KeepAlive, ConnectionModel::PerRequest] {
        let mut cfg = config(server.url("/"), 20.0, Duration::from_secs(1), 2);
        cfg.connection_model = model;
        let report = loadgen::run(cfg, std::future::pending()).await.unwrap();
        assert_eq!(report.attempted, 20, "{model}");
        assert_eq!(errors(&report), [0, 20, 0, 0], "{model}");
        report.check_invariants().unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_answer_within_the_timeout_is_timeout() {
    let server = raw_server(Misbehave::NeverAnswer).await;
    let mut cfg = config(server.url("/"), 10.0, Duration::from_secs(1), 20);
    cfg.timeout = Duration::from_millis(200);
    let report = loadgen::run(cfg, std::future::pending()).await.unwrap();
    assert_eq!(report.attempted, 10);
    assert_eq!(errors(&report), [0, 0, 10, 0]);
    assert_eq!(report.latency_ms.samples, 0);
    report.check_invariants().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arrivals_over_max_in_flight_are_dropped_not_skipped() {
    let server = raw_server(Misbehave::NeverAnswer).await;
    let metrics = Metrics::new();
    // 50 rps for 2 s = 100 scheduled arrivals. At most 5 may be outstanding; each hangs until
    // its 1 s timeout, so roughly 5 are admitted per second and the rest are dropped.
    let mut cfg = config(server.url("/"), 50.0, Duration::from_secs(2), 16);
    cfg.max_in_flight = 5;
    cfg.timeout = Duration::from_secs(1);
    let report = loadgen::run_with_metrics(cfg, metrics.clone(), std::future::pending())
        .await
        .unwrap();
    assert_eq!(report.attempted + report.dropped, 100);
    assert!(report.attempted >= 5, "attempted {}", report.attempted);
    assert!(report.dropped >= 50, "dropped {}", report.dropped);
    assert_eq!(report.transport_errors["timeout"], report.attempted);
    let timeline_dropped: u64 = report.timeline.iter().map(|r| r.dropped).sum();
    assert_eq!(timeline_dropped, report.dropped);
    report.check_invariants().unwrap();
    let text = metrics.encode();
    assert!(
        text.contains(&format!("loadgen_dropped_total {}", report.dropped)),
        "{text}"
    );
    assert!(text.contains("loadgen_in_flight 0"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_wait_for_a_busy_connection_and_count_the_wait() {
    // One connection, 50 ms per response: 20 rps of capacity for 40 rps of arrivals (one every
    // 25 ms). Requests queue (FIFO) instead of being skipped, and latency counts from the
    // intended time: request k is intended at 25k ms but cannot complete before (k + 1) × 50 ms,
    // so its latency is at least 25k + 50 ms. At most 1000 / 50 + 1 = 21 requests reach the
    // wire in the second; those still waiting when issuing stops are dropped.
    let server = http_server(|_, _| async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        full(200, "slow", "")
    })
    .await;
    let cfg = config(server.url("/"), 40.0, Duration::from_secs(1), 1);
    let report = loadgen::run(cfg, std::future::pending()).await.unwrap();
    assert_eq!(report.attempted + report.dropped, 40);
    assert!(
        (5..=21).contains(&report.attempted),
        "attempted {}",
        report.attempted
    );
    assert_eq!(report.responses["200"], report.attempted);
    let last = report.attempted - 1;
    let bound_ms = (25 * last + 50) as f64;
    assert!(
        report.latency_ms.max >= bound_ms - 1.0,
        "max {} < {bound_ms}",
        report.latency_ms.max
    );
    // The generator's own view: the last request sent waited ≥ 25 × last ms for the connection.
    assert!(report.send_delay_ms.max >= (25 * last) as f64 - 1.0);
    report.check_invariants().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_the_server_closes_are_reopened_without_errors() {
    // Every response says `connection: close`: keep-alive connections are reopened before the
    // next request, which is not an error.
    let server = http_server(|_, _| async {
        let mut r = full(200, "closer", "");
        r.headers_mut()
            .insert("connection", http::HeaderValue::from_static("close"));
        r
    })
    .await;
    let cfg = config(server.url("/"), 50.0, Duration::from_secs(1), 2);
    let report = loadgen::run(cfg, std::future::pending()).await.unwrap();
    assert_eq!(report.attempted, 50);
    assert_eq!(report.responses["200"], 50);
    assert_eq!(report.total_transport_errors(), 0);
    // One connection per request, plus at most the two opened ahead of the first requests.
    assert!(
        (50..=52).contains(&server.accepted()),
        "{}",
        server.accepted()
    );
}

//! The Prometheus exposition after a known workload.

use crate::support::{get, one_holding_one_queued, sample};
use workload_test_support::Upstream;

#[tokio::test]
async fn metrics_count_a_known_workload() {
    let upstream = Upstream::start().await;
    // A holds the slot, B waits and times out, C finds the queue full.
    let (sidecar, a, b) = one_holding_one_queued(&upstream).await;
    let c = sidecar.get("/fast").await;
    assert_eq!(
        (c.status, c.header("x-sidecar-reject")),
        (503, "queue-full")
    );
    let b = b.await.unwrap().unwrap();
    assert_eq!(
        (b.status, b.header("x-sidecar-reject")),
        (503, "queue-timeout")
    );
    upstream.gate.add_permits(1);
    assert_eq!(a.await.unwrap().unwrap().status, 200);
    // D succeeds, E gets the upstream's own 404, passed through with its headers.
    let d = sidecar.get("/fast").await;
    assert_eq!((d.status, d.header("x-pod")), (200, "upstream-pod"));
    let e = sidecar.get("/status/404").await;
    assert_eq!((e.status, e.header("x-pod")), (404, "upstream-pod"));
    assert_eq!(e.header("x-sidecar-error"), "");

    let text = sidecar.metrics_text().await;
    let m = |series: &str| sample(&text, series);
    let sent = 5.0;
    let admitted = m("sidecar_admitted_total");
    let rejected = m("sidecar_rejected_total{reason=\"queue_full\"}")
        + m("sidecar_rejected_total{reason=\"queue_timeout\"}");
    assert_eq!(admitted, 3.0);
    assert_eq!(admitted + rejected, sent);
    assert_eq!(
        m("sidecar_received_total"),
        sent,
        "every arrival is counted"
    );
    assert_eq!(m("sidecar_rejected_total{reason=\"queue_full\"}"), 1.0);
    assert_eq!(m("sidecar_rejected_total{reason=\"queue_timeout\"}"), 1.0);
    assert_eq!(m("sidecar_upstream_responses_total{code=\"200\"}"), 2.0);
    assert_eq!(m("sidecar_upstream_responses_total{code=\"404\"}"), 1.0);
    assert_eq!(m("sidecar_requests_total{outcome=\"upstream\"}"), 3.0);
    assert_eq!(m("sidecar_requests_total{outcome=\"queue_full\"}"), 1.0);
    assert_eq!(m("sidecar_requests_total{outcome=\"queue_timeout\"}"), 1.0);
    assert_eq!(m("sidecar_request_duration_seconds_count"), 3.0);
    assert_eq!(m("sidecar_queue_wait_seconds_count"), 1.0, "only B waited");
    assert_eq!(m("sidecar_in_flight"), 0.0);
    assert_eq!(m("sidecar_queue_depth"), 0.0);
    assert_eq!(m("sidecar_max_concurrency"), 1.0);
    assert_eq!(m("sidecar_ready"), 1.0);
    assert_eq!(m("sidecar_streams_open"), 0.0);
    for reason in ["connect", "timeout", "reset", "other"] {
        let series = format!("sidecar_upstream_failures_total{{reason=\"{reason}\"}}");
        assert_eq!(m(&series), 0.0, "no failure: {series}");
    }
    assert_eq!(
        m("sidecar_requests_total{outcome=\"upstream_failure\"}"),
        0.0
    );
    for declared in [
        "# TYPE sidecar_in_flight gauge",
        "# TYPE sidecar_admitted counter",
        "# TYPE sidecar_rejected counter",
        "# TYPE sidecar_upstream_responses counter",
        "# TYPE sidecar_upstream_failures counter",
        "# TYPE sidecar_request_duration_seconds histogram",
    ] {
        assert!(text.contains(declared), "missing {declared:?} in\n{text}");
    }
    let reply = get(sidecar.admin, "/metrics").await.unwrap();
    assert!(
        reply
            .header("content-type")
            .starts_with("application/openmetrics-text")
    );
    assert_eq!(upstream.requests(), 3);
}

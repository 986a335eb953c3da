//! Readiness on saturation, and the sidecar's own health endpoints.

use std::time::{Duration, Instant};

use crate::support::{config, get, spawn_get, start, wait_until};
use sidecar::SaturationReadiness;
use workload_test_support::Upstream;

#[tokio::test]
async fn readyz_fails_after_the_queue_stays_above_the_threshold_and_recovers() {
    let upstream = Upstream::start().await;
    let mut cfg = config(upstream.uri(), 1);
    cfg.readiness = Some(SaturationReadiness {
        queue_above: 1,
        for_at_least: Duration::from_secs(1),
    });
    let sidecar = start(cfg).await;
    let requests: Vec<_> = (0..3).map(|_| spawn_get(sidecar.addr, "/gate")).collect();
    wait_until("two queued", Duration::from_secs(5), || async {
        sidecar.metric("sidecar_queue_depth").await == 2.0
    })
    .await;
    let above = Instant::now();
    assert_eq!(sidecar.get("/readyz").await.status, 200, "not yet for 1 s");

    wait_until("readyz fails", Duration::from_secs(5), || async {
        sidecar.get("/readyz").await.status == 503
    })
    .await;
    let after = above.elapsed();
    assert!(
        after >= Duration::from_millis(800),
        "failed after {after:?}"
    );
    let reply = sidecar.get("/readyz").await;
    assert!(reply.body.starts_with("saturated"), "{}", reply.body);
    assert_eq!(reply.header("x-pod"), "sidecar-pod");
    assert_eq!(sidecar.metric("sidecar_ready").await, 0.0);
    assert_eq!(get(sidecar.admin, "/readyz").await.unwrap().status, 503);

    // One finishes, one queued request is admitted: depth 1, at the threshold: ready again.
    upstream.gate.add_permits(1);
    wait_until("readyz recovers", Duration::from_secs(3), || async {
        sidecar.get("/readyz").await.status == 200
    })
    .await;
    assert_eq!(sidecar.metric("sidecar_queue_depth").await, 1.0);
    assert_eq!(sidecar.metric("sidecar_ready").await, 1.0);

    upstream.gate.add_permits(2);
    for r in requests {
        assert_eq!(r.await.unwrap().unwrap().status, 200);
    }
}

#[tokio::test]
async fn health_endpoints_are_answered_by_the_sidecar_not_proxied() {
    let upstream = Upstream::start().await;
    let sidecar = start(config(upstream.uri(), 1)).await;
    for path in ["/healthz", "/readyz"] {
        let reply = sidecar.get(path).await;
        assert_eq!(reply.status, 200, "{path}");
        assert_eq!(reply.header("x-pod"), "sidecar-pod");
        assert_eq!(reply.header("x-node"), "node-a");
    }
    assert_eq!(get(sidecar.admin, "/healthz").await.unwrap().status, 200);
    assert_eq!(get(sidecar.admin, "/nope").await.unwrap().status, 404);
    assert_eq!(upstream.requests(), 0);
    assert_eq!(sidecar.metric("sidecar_admitted_total").await, 0.0);
}

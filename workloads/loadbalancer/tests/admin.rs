//! The whole balancer as the binary runs it (`loadbalancer::serve` with the flags' config):
//! endpoints fed over the admin API register and deregister with their lags, health checks
//! keep a failing target out, and the accounting comes back as the contract's `LbStats`.

mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use support::{Running, pod_answering, request, routable};
use tokio::time::Instant;
use workload_contract::loadbalancer::{Endpoint, EndpointSet, LbStats};

/// A pod: `/` answers its name, `/readyz` answers `ready` (200 or 503).
async fn pod(name: &'static str, ready: bool) -> SocketAddr {
    pod_answering(name, Arc::new(AtomicBool::new(ready))).await
}

async fn get(addr: SocketAddr) -> (u16, String) {
    request(addr, "GET", "/", String::new()).await
}

async fn put_endpoints(admin: SocketAddr, pods: &[(&str, SocketAddr)]) {
    let set = EndpointSet {
        endpoints: pods
            .iter()
            .map(|(pod, addr)| Endpoint {
                pod: (*pod).into(),
                addr: *addr,
            })
            .collect(),
    };
    let (status, body) = request(
        admin,
        "PUT",
        "/endpoints",
        serde_json::to_string(&set).unwrap(),
    )
    .await;
    assert_eq!(status, 204, "{body}");
}

/// Polls `GET /` until it answers `want` (bounded); returns how long that took.
async fn until_answer(lb: SocketAddr, want: (u16, &str)) -> Duration {
    let started = Instant::now();
    loop {
        let (status, body) = get(lb).await;
        if status == want.0 && (want.1.is_empty() || body == want.1) {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "no {want:?} within 5 s (last {status} {body:?})"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn start(flags: &[&str]) -> Running {
    support::start_serving(flags, None).await
}

#[tokio::test]
async fn fed_endpoints_register_and_deregister_after_their_lags() {
    let lb = start(&[
        "--registration-lag",
        "300ms",
        "--deregistration-lag",
        "400ms",
        "--bucket",
        "100ms",
    ])
    .await;
    let a = pod("pod-a", true).await;
    assert_eq!(get(lb.addr).await.0, 503, "nothing registered yet");

    put_endpoints(lb.admin, &[("pod-a", a)]).await;
    assert_eq!(get(lb.addr).await.0, 503, "within the registration lag");
    assert!(routable(lb.admin).await.is_empty());
    let registered = until_answer(lb.addr, (200, "pod-a")).await;
    assert!(registered >= Duration::from_millis(250), "{registered:?}");
    assert_eq!(routable(lb.admin).await, vec!["pod-a"]);

    put_endpoints(lb.admin, &[]).await;
    assert_eq!(
        get(lb.addr).await,
        (200, "pod-a".to_string()),
        "the removed endpoint still gets requests until its deregistration"
    );
    let deregistered = until_answer(lb.addr, (503, "")).await;
    assert!(routable(lb.admin).await.is_empty());
    assert!(
        deregistered >= Duration::from_millis(350),
        "{deregistered:?}"
    );

    let (status, body) = request(lb.admin, "GET", "/stats", String::new()).await;
    assert_eq!(status, 200);
    let stats: LbStats = serde_json::from_str(&body).unwrap();
    let pod_a = stats.pod("pod-a").expect("pod-a was sent to");
    assert_eq!(pod_a.totals.status(200), pod_a.totals.sent);
    assert!(pod_a.totals.sent >= 2);
    assert_eq!(pod_a.bucket_sum(), pod_a.totals);
    assert_eq!(
        pod_a
            .routable
            .iter()
            .map(|c| c.routable)
            .collect::<Vec<_>>(),
        vec![true, false]
    );
    assert!(stats.no_target >= 3);
    assert_eq!(stats.bucket_ms, 100);
    let now_us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as u64;
    assert!(
        now_us - stats.epoch_unix_us < 30_000_000,
        "epoch within the test"
    );

    let (status, body) = request(lb.admin, "PUT", "/endpoints", "{\"pods\":[]}".into()).await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("not an endpoint set"), "{body}");
    let (status, metrics) = request(lb.admin, "GET", "/metrics", String::new()).await;
    assert_eq!(status, 200);
    assert!(
        metrics.contains(&format!(
            "loadbalancer_requests_total{{pod=\"pod-a\"}} {}",
            pod_a.totals.sent
        )),
        "{metrics}"
    );
    lb.stop.cancel();
}

#[tokio::test]
async fn a_target_failing_its_health_checks_gets_no_requests() {
    let lb = start(&[
        "--registration-lag",
        "0s",
        "--health-check-interval",
        "100ms",
        "--health-check-timeout",
        "500ms",
    ])
    .await;
    let (a, b) = (pod("pod-a", true).await, pod("pod-b", false).await);
    put_endpoints(lb.admin, &[("pod-a", a), ("pod-b", b)]).await;
    until_answer(lb.addr, (200, "pod-a")).await;
    for _ in 0..20 {
        assert_eq!(get(lb.addr).await, (200, "pod-a".to_string()));
    }
    assert_eq!(
        routable(lb.admin).await,
        vec!["pod-a"],
        "pod-b is unhealthy"
    );
    lb.stop.cancel();
}

//! The EndpointSlice watch (`--watch-service`) against a scripted API server reached through a
//! kubeconfig file: slices become targets after the registration lag, a removed endpoint is
//! still routed until the deregistration lag, and a dropped watch is resumed with a re-list
//! that changes nothing that did not change. Times are the balancer's own (`/stats`), and only
//! bounded from below by the lags.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use mock_apiserver::{ApiServer, Reply, list, status};
use serde_json::{Value, json};
use support::*;
use workload_contract::loadbalancer::LbStats;

const SLICES: &str = "/apis/discovery.k8s.io/v1/namespaces/harness-r1/endpointslices";

async fn stats(admin: std::net::SocketAddr) -> LbStats {
    serde_json::from_value(get_json(admin, "/stats").await).unwrap()
}

#[tokio::test]
async fn slices_register_after_the_lag_and_a_removed_endpoint_is_routed_until_deregistration() {
    let pod_addr = pod_server(Arc::new(AtomicBool::new(true))).await;
    let (live, _) = tokio::sync::broadcast::channel::<Value>(16);
    let live_tx = live.clone();
    let both = slice(
        "flagsvc-abc",
        "10",
        vec![
            endpoint("pod-0", "127.0.0.1", Some(true)),
            endpoint("pod-1", "127.0.0.1", None),
            endpoint("pod-2", "127.0.0.1", Some(false)),
        ],
    );
    let listed = both.clone();
    let server = ApiServer::start(move |seen| {
        if seen.path() != SLICES {
            return status(404, "NotFound", "not scripted");
        }
        if seen.is_watch() {
            Reply::Live {
                events: vec![],
                live: live_tx.subscribe(),
            }
        } else {
            list(
                "EndpointSliceList",
                "discovery.k8s.io/v1",
                vec![listed.clone()],
            )
        }
    })
    .await;
    let lb = start_watching(
        &server,
        pod_addr.port(),
        &[
            "--registration-lag",
            "300ms",
            "--deregistration-lag",
            "1500ms",
            "--deregistration-delay",
            "1s",
        ],
    )
    .await;
    let admin = lb.admin;
    wait_until("pod-0 and pod-1 routable", || async move {
        routable(admin).await == ["pod-0", "pod-1"]
    })
    .await;
    // Ready and unset-ready endpoints count, the not-ready one does not; IP:--target-port.
    let endpoints = get_json(admin, "/endpoints").await;
    assert_eq!(
        endpoints,
        json!({ "endpoints": [
            { "pod": "pod-0", "addr": pod_addr.to_string() },
            { "pod": "pod-1", "addr": pod_addr.to_string() },
        ] })
    );
    let first = stats(admin).await;
    for pod in ["pod-0", "pod-1"] {
        let changes = &first.pods[pod].routable;
        assert_eq!(changes.len(), 1, "{pod}: {changes:?}");
        assert!(changes[0].routable);
        assert!(
            changes[0].at_ms >= 300,
            "{pod} routable at {} ms, before the 300 ms registration lag",
            changes[0].at_ms
        );
    }
    let seen = server.seen();
    let slice_list = seen.iter().find(|s| s.path() == SLICES).unwrap();
    assert_eq!(
        slice_list.query("labelSelector").as_deref(),
        Some("kubernetes.io/service-name=flagsvc")
    );

    // pod-1 leaves the slice; until the deregistration lag is over it still gets requests.
    wait_until("the slice watch", || {
        let n = server.seen().iter().filter(|s| s.is_watch()).count();
        async move { n >= 1 }
    })
    .await;
    let before = stats(admin).await.elapsed_ms;
    let only_pod_0 = slice(
        "flagsvc-abc",
        "11",
        vec![endpoint("pod-0", "127.0.0.1", Some(true))],
    );
    live.send(watch_event("MODIFIED", only_pod_0)).unwrap();
    wait_until("pod-1 leaving the endpoints", || async move {
        endpoint_pods(admin).await == ["pod-0"]
    })
    .await;
    // Requests until pod-1 is deregistered: paced, so that the loop outlasts the 1.5 s lag
    // however fast the machine answers (at most 5000 × 2 ms plus the requests' own time).
    let mut sent = 0;
    for _ in 0..5000 {
        if routable(lb.admin).await == ["pod-0"] {
            break;
        }
        let (code, _) = request(lb.addr, "GET", "/", String::new()).await;
        assert_eq!(code, 200);
        sent += 1;
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    assert_eq!(routable(admin).await, ["pod-0"], "pod-1 deregistered");
    let after = stats(admin).await;
    let pod_1 = &after.pods["pod-1"];
    let off = pod_1.routable.last().unwrap();
    assert!(!off.routable);
    assert!(
        off.at_ms >= before + 1500,
        "pod-1 left the routable set at {} ms, the endpoint left after {before} ms: less than the 1.5 s lag",
        off.at_ms
    );
    assert!(sent > 0);
    assert!(
        pod_1.last_sent_ms.unwrap() >= before,
        "requests still reached pod-1 after its endpoint left"
    );
    assert_eq!(after.pods["pod-0"].routable.len(), 1, "pod-0 unchanged");
}

#[tokio::test]
async fn a_dropped_watch_is_resumed_without_registering_or_deregistering_anything() {
    let lists = Arc::new(AtomicUsize::new(0));
    let watches = Arc::new(AtomicUsize::new(0));
    let (l, w) = (lists.clone(), watches.clone());
    let slices = vec![slice(
        "flagsvc-abc",
        "10",
        vec![
            endpoint("pod-0", "10.1.0.1", Some(true)),
            endpoint("pod-1", "10.1.0.2", Some(true)),
        ],
    )];
    let server = ApiServer::start(move |seen| {
        if seen.path() != SLICES {
            return status(404, "NotFound", "not scripted");
        }
        if !seen.is_watch() {
            l.fetch_add(1, Ordering::SeqCst);
            return list("EndpointSliceList", "discovery.k8s.io/v1", slices.clone());
        }
        match w.fetch_add(1, Ordering::SeqCst) {
            // The first watch breaks: the resource version is too old, a re-list follows.
            0 => Reply::Watch {
                events: vec![json!({ "type": "ERROR", "object": {
                    "kind": "Status", "apiVersion": "v1", "status": "Failure",
                    "message": "too old resource version: 10 (12)", "reason": "Expired", "code": 410 } })],
                hold: false,
            },
            _ => Reply::Watch {
                events: vec![],
                hold: true,
            },
        }
    })
    .await;
    let lb = start_watching(
        &server,
        8081,
        &[
            "--registration-lag",
            "0s",
            "--deregistration-lag",
            "0s",
            "--deregistration-delay",
            "0s",
        ],
    )
    .await;
    let admin = lb.admin;
    wait_until("both pods routable", || async move {
        routable(admin).await == ["pod-0", "pod-1"]
    })
    .await;
    let (l, w) = (lists.clone(), watches.clone());
    wait_until("a re-list and a second watch", || {
        let done = l.load(Ordering::SeqCst) >= 2 && w.load(Ordering::SeqCst) >= 2;
        async move { done }
    })
    .await;
    // The re-list is applied before the second watch starts; a few controller ticks later
    // nothing has moved.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(endpoint_pods(admin).await, ["pod-0", "pod-1"]);
    assert_eq!(routable(admin).await, ["pod-0", "pod-1"]);
    let stats = stats(admin).await;
    for pod in ["pod-0", "pod-1"] {
        let changes = &stats.pods[pod].routable;
        assert_eq!(
            changes.len(),
            1,
            "{pod} was deregistered or registered again: {changes:?}"
        );
    }
}

#[tokio::test]
async fn put_endpoints_is_refused_while_the_watch_feeds_them() {
    let server = ApiServer::start(|seen| slices_then_quiet(seen, vec![one_ready_slice()])).await;
    let lb = start_watching(&server, 8081, &[]).await;
    let admin = lb.admin;
    wait_until("the watched endpoint", || async move {
        endpoint_pods(admin).await == ["pod-0"]
    })
    .await;
    let body = r#"{"endpoints":[{"pod":"pod-9","addr":"10.9.9.9:80"}]}"#.to_owned();
    let (code, message) = request(admin, "PUT", "/endpoints", body).await;
    assert_eq!(code, 409, "{message}");
    assert!(
        message.contains("EndpointSlice watch of Service harness-r1/flagsvc"),
        "{message}"
    );
    assert_eq!(
        endpoint_pods(admin).await,
        ["pod-0"],
        "the PUT changed nothing"
    );
}

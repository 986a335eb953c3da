//! The kind target's API calls against a scripted API server on 127.0.0.1: server-side apply in
//! apply order with field manager `harness`, label selectors, cleanup by label, the watchers'
//! events turned into timeline events (hints on, then off), a dropped watch noted and resumed,
//! and API errors (403, 404, 409, 422) turned into messages that say what to do.

mod support;

use std::time::Duration;

use harness_core::measure::EventKind;
use harness_kind::api::KubeApi;
use harness_kind::manifests::{self, RenderInput};
use harness_kind::observer::Observer;
use harness_kind::watch::{Recorder, spawn_watchers};
use serde_json::{Value, json};
use support::api_server::{ApiServer, Reply, list, status};
use support::fake_cluster::echo;
use support::files::{images, load};
use support::watchers::recorded;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn objects_are_applied_in_order_with_the_harness_field_manager() {
    let server = ApiServer::start(|seen| match seen.method.as_str() {
        "PATCH" => echo(&seen.body),
        _ => status(404, "NotFound", "not scripted"),
    })
    .await;
    let api = KubeApi::new(server.client());
    let scenario = load("scenarios/topology-skew.yaml", None);
    let images = images();
    let m = manifests::render(
        &scenario,
        &RenderInput {
            run_id: "r1",
            images: &images,
            service_host: "10.96.12.34".into(),
            lb_host: "10.96.12.35".into(),
            ingress_host: "10.96.0.12".into(),
            time_scale: harness_core::clock::TimeScale::REAL,
            seed: 1,
        },
    )
    .unwrap();
    api.apply_namespace(&m.namespace).await.unwrap();
    let svc = api.apply_namespaced(&m.service).await.unwrap();
    assert_eq!(svc.spec.unwrap().cluster_ip.as_deref(), Some("10.96.12.34"));
    api.apply_namespaced(&m.deployment).await.unwrap();
    api.apply_namespaced(&m.generators[0]).await.unwrap();

    let calls = server.calls();
    let paths: Vec<&str> = calls.iter().map(|c| c.path()).collect();
    assert_eq!(
        paths,
        [
            "/api/v1/namespaces/harness-r1",
            "/api/v1/namespaces/harness-r1/services/flagsvc",
            "/apis/apps/v1/namespaces/harness-r1/deployments/flagsvc",
            "/api/v1/namespaces/harness-r1/pods/gen-ingress-2a",
        ]
    );
    for call in &calls {
        assert_eq!(call.method, "PATCH");
        assert_eq!(call.query("fieldManager").as_deref(), Some("harness"));
        assert_eq!(call.query("force").as_deref(), Some("true"));
        assert_eq!(
            call.content_type.as_deref(),
            Some("application/apply-patch+yaml")
        );
    }
    // The body is the rendered object itself.
    assert_eq!(calls[2].json()["spec"]["replicas"], 4);
    assert_eq!(
        calls[0].json()["metadata"]["labels"]["pod-security.kubernetes.io/enforce"],
        "restricted"
    );
}

#[tokio::test]
async fn cleanup_selects_by_the_run_label_and_tolerates_what_is_gone() {
    let server = ApiServer::start(|seen| match (seen.method.as_str(), seen.path()) {
        ("GET", "/api/v1/namespaces") => list(
            "NamespaceList",
            "v1",
            vec![json!({ "metadata": { "name": "harness-r1", "labels": { "harness/run-id": "r1" } } })],
        ),
        ("DELETE", "/api/v1/namespaces/harness-r1") => Reply::Json(
            200,
            json!({ "kind": "Namespace", "apiVersion": "v1", "metadata": { "name": "harness-r1" },
                    "status": { "phase": "Terminating" } }),
        ),
        ("DELETE", _) => status(404, "NotFound", "namespaces \"harness-gone\" not found"),
        _ => status(404, "NotFound", "not scripted"),
    })
    .await;
    let api = KubeApi::new(server.client());
    let found = api
        .namespaces_labelled(&manifests::run_selector("r1"))
        .await
        .unwrap();
    assert_eq!(found, ["harness-r1"]);
    api.delete_namespace("harness-r1").await.unwrap();
    api.delete_namespace("harness-gone").await.unwrap();
    api.delete_node("harness-x-worker5").await.unwrap();
    let calls = server.calls();
    assert_eq!(
        calls[0].query("labelSelector").as_deref(),
        Some("harness/run-id=r1")
    );
    let deletes: Vec<(&str, &str)> = calls
        .iter()
        .filter(|c| c.method == "DELETE")
        .map(|c| (c.method.as_str(), c.path()))
        .collect();
    assert_eq!(
        deletes,
        [
            ("DELETE", "/api/v1/namespaces/harness-r1"),
            ("DELETE", "/api/v1/namespaces/harness-gone"),
            ("DELETE", "/api/v1/nodes/harness-x-worker5"),
        ]
    );
    // The namespace goes in the background (its objects with it).
    assert_eq!(calls[1].json()["propagationPolicy"], "Background");
}

#[tokio::test]
async fn api_errors_say_what_they_mean_for_the_run() {
    let server = ApiServer::start(|seen| match seen.path() {
        p if p.ends_with("/forbidden") => status(
            403,
            "Forbidden",
            "pods \"forbidden\" is forbidden: User \"dev\" cannot delete resource \"pods\"",
        ),
        p if p.ends_with("/gone") => status(404, "NotFound", "pods \"gone\" not found"),
        p if p.contains("/taken") => status(409, "Conflict", "Apply failed with 1 conflict"),
        p if p.contains("/bad") => status(
            422,
            "Invalid",
            "Deployment.apps \"bad\" is invalid: spec.replicas: Invalid value: -1",
        ),
        _ => status(500, "InternalError", "etcd is down"),
    })
    .await;
    let api = KubeApi::new(server.client());
    let e = api.delete_pod("ns", "forbidden").await.unwrap_err();
    assert_eq!(e.status, Some(403));
    let text = e.to_string();
    assert!(
        text.starts_with("deleting Pod ns/forbidden: HTTP 403"),
        "{text}"
    );
    assert!(text.contains("cannot delete resource"), "{text}");
    assert!(
        text.contains("docs/kind-target.md#rbac-for-a-shared-cluster"),
        "{text}"
    );

    let e = api.delete_pod("ns", "gone").await.unwrap_err();
    assert!(
        e.is_not_found() && e.to_string().contains("not found"),
        "{e}"
    );

    let e = api.scale("ns", "taken", 3).await.unwrap_err();
    assert!(
        e.to_string().contains("HTTP 409") && e.to_string().contains("field manager"),
        "{e}"
    );

    let e = api.scale("ns", "bad", 3).await.unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("HTTP 422") && text.contains("spec.replicas"),
        "{text}"
    );
    assert!(text.contains("harness plan FILE --target kind"), "{text}");

    let e = api.get_service("ns", "other").await.unwrap_err();
    assert!(e.to_string().contains("the API server failed"), "{e}");

    // Nothing listens: no status, the client's error.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let config = kube::Config::new(format!("http://{closed}").parse().unwrap());
    let api = KubeApi::new(kube::Client::try_from(config).unwrap());
    let e = api.get_pod("ns", "p").await.unwrap_err();
    assert_eq!(e.status, None);
    assert!(e.to_string().starts_with("reading Pod ns/p: "), "{e}");
}

const NS: &str = "harness-r1";

fn node(name: &str, zone: &str, cpu: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": { "name": name, "resourceVersion": "5",
                      "labels": { "topology.kubernetes.io/zone": zone } },
        "status": { "allocatable": { "cpu": cpu },
                    "conditions": [{ "type": "Ready", "status": "True" }] }
    })
}

fn slice(rv: &str, hinted: bool) -> Value {
    support::fake_cluster::hinted_slice("k", rv, hinted)
}

fn watch_event(kind: &str, object: Value) -> Value {
    json!({ "type": kind, "object": object })
}

async fn wait_for(recorder: &Recorder, what: &str, done: impl Fn(&[EventKind]) -> bool) {
    for _ in 0..500 {
        let events = recorded(recorder);
        if done(&events) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let events = recorded(recorder);
    panic!("{what} never happened; events: {events:#?}");
}

fn hints_events(events: &[EventKind]) -> Vec<bool> {
    events
        .iter()
        .filter_map(|e| match e {
            EventKind::Hints { enabled, .. } => Some(*enabled),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn watched_slices_become_hint_events_and_a_dropped_watch_is_noted() {
    let slice_watches = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = slice_watches.clone();
    let server = ApiServer::start(move |seen| {
        let path = seen.path();
        if path == "/api/v1/nodes" {
            return if seen.is_watch() {
                Reply::Watch { events: vec![], hold: true }
            } else {
                list(
                    "NodeList",
                    "v1",
                    vec![
                        node("k-worker", "ap-northeast-2a", "4"),
                        node("k-worker2", "ap-northeast-2a", "4"),
                        node("k-worker3", "ap-northeast-2c", "4"),
                        node("k-worker4", "ap-northeast-2c", "4"),
                    ],
                )
            };
        }
        if path.ends_with("/endpointslices") {
            if !seen.is_watch() {
                return list("EndpointSliceList", "discovery.k8s.io/v1", vec![]);
            }
            let n = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            return match n {
                // The first watch: hints on, then off, then the connection breaks.
                0 => Reply::Watch {
                    events: vec![
                        watch_event("ADDED", slice("10", true)),
                        watch_event("MODIFIED", slice("11", false)),
                        json!({ "type": "ERROR", "object": {
                            "kind": "Status", "apiVersion": "v1", "status": "Failure",
                            "message": "too old resource version: 10 (11)", "reason": "Expired", "code": 410 } }),
                    ],
                    hold: false,
                },
                // After the re-list: hints back on.
                _ => Reply::Watch {
                    events: vec![watch_event("MODIFIED", slice("12", true))],
                    hold: true,
                },
            };
        }
        if path.ends_with("/pods") || path.ends_with("/events") {
            return if seen.is_watch() {
                Reply::Watch { events: vec![], hold: true }
            } else {
                list("List", "v1", vec![])
            };
        }
        status(404, "NotFound", "not scripted")
    })
    .await;
    let client = server.client();
    let recorder = Recorder::new(Observer::new(vec![
        "ap-northeast-2a".into(),
        "ap-northeast-2c".into(),
    ]));
    let stop = CancellationToken::new();
    let tasks = spawn_watchers(&client, NS, "flagsvc", false, &recorder, &stop);
    wait_for(&recorder, "hints on, off, on", |e| {
        hints_events(e) == [true, false, true]
    })
    .await;
    let events = recorded(&recorder);
    assert!(
        events.iter().any(|e| matches!(e, EventKind::Note { message }
            if message.contains("EndpointSlices of Service harness-r1/flagsvc") && message.contains("dropped"))),
        "{events:#?}"
    );
    // Reachability from 2a: two pods with hints, four without.
    let reach: Vec<usize> = events
        .iter()
        .filter_map(|e| match e {
            EventKind::Reachability { zone, pods, .. } if zone == "ap-northeast-2a" => {
                Some(pods.len())
            }
            _ => None,
        })
        .collect();
    assert_eq!(reach, [2, 4, 2]);
    // The selectors the watchers used.
    let slice_list = server.first_to("/endpointslices");
    assert_eq!(
        slice_list.query("labelSelector").as_deref(),
        Some("kubernetes.io/service-name=flagsvc")
    );
    let pod_list = server.first_to("/pods");
    assert_eq!(
        pod_list.query("labelSelector").as_deref(),
        Some("harness/role=service")
    );
    assert!(slice_watches.load(std::sync::atomic::Ordering::SeqCst) >= 2);
    stop.cancel();
    for t in tasks {
        let _ = tokio::time::timeout(Duration::from_secs(2), t).await;
    }
}

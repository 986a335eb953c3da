//! The pod readiness gate (`--readiness-gate`) against a scripted API server: the Service's
//! selector finds the pods, a not-ready endpoint whose pod has the gate and ContainersReady is
//! registered (one without ContainersReady is not), and the gate's condition is patched on
//! `pods/{name}/status` with a strategic merge: `False` while registering, `True` once the
//! target is healthy, `False` with `Target.FailedHealthChecks` when it turns unhealthy.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use mock_apiserver::{ApiServer, Reply, Seen, list, status};
use serde_json::{Value, json};
use support::*;

const PODS: &str = "/api/v1/namespaces/harness-r1/pods";

fn patches(server: &ApiServer) -> Vec<Seen> {
    server
        .seen()
        .into_iter()
        .filter(|s| s.method == "PATCH")
        .collect()
}

fn conditions(patches: &[Seen]) -> Vec<(String, String)> {
    patches
        .iter()
        .map(|p| {
            let c = &p.json()["status"]["conditions"][0];
            (
                c["status"].as_str().unwrap_or("").to_owned(),
                c["reason"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_gated_pod_is_registered_before_ready_and_its_condition_follows_target_health() {
    let ready = Arc::new(AtomicBool::new(true));
    let pod_addr = pod_server(ready.clone()).await;
    let server = ApiServer::start(move |seen| {
        let path = seen.path();
        if path == "/api/v1/namespaces/harness-r1/services/flagsvc" {
            return Reply::Json(
                200,
                json!({
                    "apiVersion": "v1", "kind": "Service",
                    "metadata": { "name": "flagsvc", "namespace": NS },
                    "spec": { "selector": { "app": "flagsvc" }, "ports": [{ "port": 80 }] }
                }),
            );
        }
        if path.ends_with("/endpointslices") || path == PODS {
            if seen.is_watch() {
                return Reply::Watch {
                    events: vec![],
                    hold: true,
                };
            }
            return if path == PODS {
                list(
                    "PodList",
                    "v1",
                    vec![
                        pod("pod-0", "uid-0", true, true),
                        pod("pod-1", "uid-1", true, false),
                        pod("pod-2", "uid-2", false, true),
                    ],
                )
            } else {
                // Nothing is ready yet: the gate holds every pod back.
                list(
                    "EndpointSliceList",
                    "discovery.k8s.io/v1",
                    vec![slice(
                        "flagsvc-abc",
                        "10",
                        vec![
                            endpoint("pod-0", "127.0.0.1", Some(false)),
                            endpoint("pod-1", "127.0.0.1", Some(false)),
                            endpoint("pod-2", "127.0.0.1", Some(false)),
                        ],
                    )],
                )
            };
        }
        if seen.method == "PATCH" && path == "/api/v1/namespaces/harness-r1/pods/pod-0/status" {
            return Reply::Json(200, pod("pod-0", "uid-0", true, true));
        }
        status(404, "NotFound", "not scripted")
    })
    .await;
    let lb = start_watching(
        &server,
        pod_addr.port(),
        &[
            "--readiness-gate",
            GATE,
            "--registration-lag",
            "200ms",
            "--health-check-interval",
            "100ms",
            "--health-check-timeout",
            "1s",
            "--healthy-threshold",
            "1",
            "--unhealthy-threshold",
            "1",
        ],
    )
    .await;
    let admin = lb.admin;
    wait_until("pod-0 routable", || async move {
        routable(admin).await == ["pod-0"]
    })
    .await;
    assert_eq!(
        endpoint_pods(admin).await,
        ["pod-0"],
        "only the gated, ContainersReady pod"
    );
    let seen = server.seen();
    let pod_list = seen
        .iter()
        .find(|s| s.path() == PODS && !s.is_watch())
        .unwrap();
    assert_eq!(
        pod_list.query("labelSelector").as_deref(),
        Some("app=flagsvc")
    );

    wait_until("the condition set to True", || {
        let done = conditions(&patches(&server))
            .iter()
            .any(|(s, _)| s == "True");
        async move { done }
    })
    .await;
    let sent = patches(&server);
    let first = &sent[0];
    assert_eq!(
        first.content_type.as_deref(),
        Some("application/strategic-merge-patch+json")
    );
    let body: Value = first.json();
    assert_eq!(body["metadata"]["uid"], "uid-0");
    let condition = &body["status"]["conditions"][0];
    assert_eq!(condition["type"], GATE);
    assert_eq!(condition["status"], "False", "{body}");
    assert_eq!(condition["reason"], "Elb.RegistrationInProgress", "{body}");
    assert!(condition["lastTransitionTime"].is_string(), "{body}");
    let statuses = conditions(&sent);
    assert_eq!(
        statuses.last().unwrap(),
        &("True".to_owned(), String::new()),
        "{statuses:?}"
    );
    assert!(
        statuses[..statuses.len() - 1]
            .iter()
            .all(|(s, _)| s == "False"),
        "False until healthy: {statuses:?}"
    );

    // The pod starts failing its health checks: the condition turns False.
    ready.store(false, Ordering::SeqCst);
    wait_until("the condition set to False after unhealthy", || {
        let last = conditions(&patches(&server)).last().cloned();
        async move { last == Some(("False".to_owned(), "Target.FailedHealthChecks".to_owned())) }
    })
    .await;
    let statuses = conditions(&patches(&server));
    assert_eq!(
        statuses.iter().filter(|(s, _)| s == "True").count(),
        1,
        "True patched once: {statuses:?}"
    );
    // Only pod-0 (gated and an endpoint) was ever patched.
    assert!(
        patches(&server)
            .iter()
            .all(|p| p.path() == "/api/v1/namespaces/harness-r1/pods/pod-0/status")
    );
}

#[tokio::test]
async fn a_service_without_selector_stops_the_balancer_with_an_error() {
    let server = ApiServer::start(|seen| {
        if seen.path() == "/api/v1/namespaces/harness-r1/services/flagsvc" {
            return Reply::Json(
                200,
                json!({ "apiVersion": "v1", "kind": "Service",
                        "metadata": { "name": "flagsvc" }, "spec": {} }),
            );
        }
        slices_then_quiet(seen, vec![])
    })
    .await;
    let argv = ["loadbalancer"]
        .into_iter()
        .chain(LOOPBACK_LISTENERS)
        .chain(WATCH_FLAGSVC)
        .chain(["--namespace", NS, "--readiness-gate", GATE]);
    let cli = <loadbalancer::cli::Cli as clap::Parser>::try_parse_from(argv).unwrap();
    let listener = tokio::net::TcpListener::bind(cli.listen).await.unwrap();
    let admin = tokio::net::TcpListener::bind(cli.admin_listen)
        .await
        .unwrap();
    let result = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        loadbalancer::serve_with_client(
            listener,
            admin,
            cli.to_config().unwrap(),
            Some(client(&server).await),
            std::future::pending(),
        ),
    )
    .await
    .expect("the balancer stops on its own");
    let err = result.unwrap_err().to_string();
    assert!(
        err.contains("harness-r1/flagsvc has no spec.selector"),
        "{err}"
    );
}

#[tokio::test]
async fn a_relist_of_the_pods_reads_the_selector_again_and_follows_a_change() {
    use std::sync::atomic::AtomicUsize;
    let service_gets = Arc::new(AtomicUsize::new(0));
    let pod_watches = Arc::new(AtomicUsize::new(0));
    let (gets, watches) = (service_gets.clone(), pod_watches.clone());
    let server = ApiServer::start(move |seen| {
        let path = seen.path();
        if path == "/api/v1/namespaces/harness-r1/services/flagsvc" {
            // The selector changes after the first read.
            let app = if gets.fetch_add(1, Ordering::SeqCst) == 0 {
                "flagsvc"
            } else {
                "flagsvc-v2"
            };
            return Reply::Json(
                200,
                json!({ "apiVersion": "v1", "kind": "Service", "metadata": { "name": "flagsvc" },
                        "spec": { "selector": { "app": app } } }),
            );
        }
        if path == PODS && seen.is_watch() {
            return if watches.fetch_add(1, Ordering::SeqCst) == 0 {
                // The first pod watch expires: the watcher lists again.
                Reply::Watch {
                    events: vec![json!({ "type": "ERROR", "object": {
                        "kind": "Status", "apiVersion": "v1", "status": "Failure",
                        "message": "too old resource version", "reason": "Expired", "code": 410 } })],
                    hold: false,
                }
            } else {
                Reply::Watch {
                    events: vec![],
                    hold: true,
                }
            };
        }
        if seen.is_watch() {
            return Reply::Watch {
                events: vec![],
                hold: true,
            };
        }
        if path == PODS {
            return list("PodList", "v1", vec![pod("pod-0", "uid-0", true, true)]);
        }
        list("EndpointSliceList", "discovery.k8s.io/v1", vec![])
    })
    .await;
    let _lb = start_watching(&server, 8081, &["--readiness-gate", GATE]).await;
    wait_until("a pod list with the new selector", || {
        let found = server.seen().iter().any(|s| {
            s.path() == PODS
                && !s.is_watch()
                && s.query("labelSelector").as_deref() == Some("app=flagsvc-v2")
        });
        async move { found }
    })
    .await;
    let selectors: Vec<Option<String>> = server
        .seen()
        .iter()
        .filter(|s| s.path() == PODS && !s.is_watch())
        .map(|s| s.query("labelSelector"))
        .collect();
    assert_eq!(
        selectors[0].as_deref(),
        Some("app=flagsvc"),
        "{selectors:?}"
    );
    assert!(service_gets.load(Ordering::SeqCst) >= 2);
}

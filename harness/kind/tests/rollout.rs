//! A whole `harness run --target kind` of rollout-502's distroless variant (shortened by
//! `--set`, at its time scale 0.1) through the engine, against a scripted API server and
//! recording fakes of `kind` and `docker`: the load balancer's objects applied in order before
//! the service's Deployment, the `rollout` action as a strategic merge patch of the pod
//! template, the controller's Deployment status (watched) turned into `rolloutDuration`, the
//! old pods' deletion and the kubelet's `FailedPreStopHook` on the timeline and in the
//! explanation, the load balancer's accounting read through the pod proxy turned into
//! `terminationErrorRate`, `requestsAfterRemoval` and `minRoutableTargets`, and the real
//! timings stated as a note. A time scale whose whole-second fields do not scale is refused
//! before anything runs.
//!
//! The scripted watches of Pods, EndpointSlices, Events and the Deployment hold back what the
//! cluster does in a rollout until the harness has patched the template: until then each
//! watch request ends (after 100 ms) with nothing new, and kube-runtime watches again.

mod support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use harness_core::clock::TimeScale;
use harness_core::measure::{self, EventKind, TerminationStage, Window};
use harness_core::scenario::{Override, load_scenario_with};
use harness_kind::driver::{ClusterMode, KindOptions, KindTarget};
use serde_json::{Value, json};
use support::api_server::{ApiServer, Reply, Seen, list, status};
use support::fake_cluster::{finished_pod, node, report_log, service_with_cluster_ip};
use support::fakes::FakeTools;
use support::files::repo;
use support::kind_run::{self, calls_made, run_context, run_silently};

const NS: &str = "harness-r1";
const CLUSTER: &str = "harness-rollout-502";

fn unix_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as u64
}

/// When the template was patched (Unix µs; 0: not yet).
#[derive(Default)]
struct Cluster {
    patched_at_us: AtomicU64,
}

impl Cluster {
    fn patched(&self) -> Option<u64> {
        match self.patched_at_us.load(Ordering::SeqCst) {
            0 => None,
            t => Some(t),
        }
    }
}

fn pod(name: &str, role: &str, deleting: bool) -> Value {
    let mut meta = json!({ "name": name, "namespace": NS, "resourceVersion": "4",
                           "labels": { "harness/role": role } });
    if deleting {
        meta["deletionTimestamp"] = json!("2026-12-01T15:00:00Z");
    }
    json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": meta,
        "spec": { "nodeName": format!("{CLUSTER}-worker"), "containers": [{ "name": role }] },
        "status": { "phase": "Running", "conditions": [{ "type": "Ready", "status": "True" }] }
    })
}

fn slice(pods: &[&str]) -> Value {
    let endpoints: Vec<Value> = pods
        .iter()
        .enumerate()
        .map(|(i, p)| {
            json!({
                "addresses": [format!("10.244.1.{}", i + 2)],
                "conditions": { "ready": true, "serving": true, "terminating": false },
                "nodeName": format!("{CLUSTER}-worker"), "zone": "ap-northeast-2a",
                "targetRef": { "kind": "Pod", "name": p, "namespace": NS }
            })
        })
        .collect();
    json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": { "name": "flagsvc-abcde", "namespace": NS, "resourceVersion": "7",
                      "labels": { "kubernetes.io/service-name": "flagsvc" } },
        "addressType": "IPv4", "endpoints": endpoints
    })
}

fn deployment(
    generation: i64,
    observed: i64,
    updated: i32,
    replicas: i32,
    available: i32,
) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": { "name": "flagsvc", "namespace": NS, "generation": generation,
                      "resourceVersion": format!("{}", 10 + generation * 10 + i64::from(updated)) },
        "spec": { "replicas": 2, "selector": {}, "template": {} },
        "status": { "observedGeneration": observed, "updatedReplicas": updated,
                    "replicas": replicas, "availableReplicas": available, "readyReplicas": available }
    })
}

fn event(kind: &str, object: Value) -> Value {
    json!({ "type": kind, "object": object })
}

/// A watch that shows the rollout only once the template is patched.
fn gated(cluster: &Cluster, after: Vec<Value>) -> Reply {
    if cluster.patched().is_none() {
        tokio::task::block_in_place(|| std::thread::sleep(Duration::from_millis(100)));
        return Reply::Watch {
            events: vec![],
            hold: false,
        };
    }
    Reply::Watch {
        events: after,
        hold: true,
    }
}

/// The load balancer's accounting, placed around the patch: flagsvc-a-0 got 10 requests 1 s
/// after the patch, 4 of them 502s (after its deletion); flagsvc-a-1 got 5 before anything
/// (not in its termination); flagsvc-b-0, never deleted, 20. Routable: a-0 and a-1 from the
/// start, b-0 joins 0.5 s after the patch, a-0 and a-1 leave at 0.6 s and 0.7 s, b-1 joins at
/// 1.5 s: the fewest routable targets after the patch is 1.
fn lb_stats(patched_us: u64) -> Value {
    use std::collections::BTreeMap;
    use workload_contract::loadbalancer::{
        Counts, LbErrorReason, LbStats, PodStats, RoutableChange,
    };
    let bucket = |sent: u64, ok: u64, failed: u64| {
        let mut counts = Counts {
            sent,
            ..Counts::default()
        };
        counts.by_status.insert(200, ok);
        if failed > 0 {
            counts.by_status.insert(502, failed);
            counts.lb_errors.insert(LbErrorReason::Connect, failed);
        }
        counts
    };
    let change = |at_ms, routable| RoutableChange { at_ms, routable };
    let pod = |buckets: Vec<(u64, Counts)>, routable: Vec<RoutableChange>| PodStats {
        buckets: buckets.into_iter().collect(),
        routable,
        ..PodStats::default()
    };
    let stats = LbStats {
        epoch_unix_us: patched_us - 5_000_000,
        bucket_ms: 100,
        pods: BTreeMap::from([
            (
                "flagsvc-a-0".to_owned(),
                pod(
                    vec![(60, bucket(10, 6, 4))],
                    vec![change(0, true), change(5600, false)],
                ),
            ),
            (
                "flagsvc-a-1".to_owned(),
                pod(
                    vec![(0, bucket(5, 5, 0))],
                    vec![change(0, true), change(5700, false)],
                ),
            ),
            (
                "flagsvc-b-0".to_owned(),
                pod(vec![(60, bucket(20, 20, 0))], vec![change(5500, true)]),
            ),
            (
                "flagsvc-b-1".to_owned(),
                pod(vec![], vec![change(6500, true)]),
            ),
        ]),
        ..LbStats::default()
    };
    serde_json::to_value(stats).unwrap()
}

fn echo(seen: &Seen) -> Reply {
    let mut v: Value = serde_json::from_str(&seen.body).unwrap_or(Value::Null);
    if v["kind"] == "Service" {
        let ip = if v["metadata"]["name"] == "loadbalancer" {
            "10.96.12.99"
        } else {
            "10.96.12.34"
        };
        v["spec"]["clusterIP"] = json!(ip);
    }
    v["metadata"]["resourceVersion"] = json!("2");
    v["metadata"]["generation"] = json!(1);
    Reply::Json(200, v)
}

fn handler(cluster: &Cluster, seen: &Seen) -> Reply {
    let path = seen.path();
    let watch = seen.is_watch();
    let selector = seen.query("labelSelector").unwrap_or_default();
    let strategic = seen
        .content_type
        .as_deref()
        .is_some_and(|c| c.starts_with("application/strategic-merge-patch"));
    match (seen.method.as_str(), path) {
        ("PATCH", p) if p.ends_with("/deployments/flagsvc") && strategic => {
            cluster.patched_at_us.store(unix_us(), Ordering::SeqCst);
            Reply::Json(200, deployment(2, 1, 2, 2, 2))
        }
        ("PATCH", _) => echo(seen),
        ("GET", "/api/v1/nodes") if watch => Reply::Watch {
            events: vec![],
            hold: true,
        },
        ("GET", "/api/v1/nodes") => list(
            "NodeList",
            "v1",
            vec![
                node(&format!("{CLUSTER}-control-plane"), None, "8"),
                node(&format!("{CLUSTER}-worker"), Some("ap-northeast-2a"), "8"),
                node(&format!("{CLUSTER}-worker2"), Some("ap-northeast-2a"), "8"),
                node(&format!("{CLUSTER}-worker3"), Some("ap-northeast-2c"), "8"),
                node(&format!("{CLUSTER}-worker4"), Some("ap-northeast-2c"), "8"),
            ],
        ),
        ("GET", p) if p.ends_with("/endpointslices") && watch => gated(
            cluster,
            vec![event("MODIFIED", slice(&["flagsvc-b-0", "flagsvc-b-1"]))],
        ),
        ("GET", p) if p.ends_with("/endpointslices") => list(
            "EndpointSliceList",
            "discovery.k8s.io/v1",
            vec![slice(&["flagsvc-a-0", "flagsvc-a-1"])],
        ),
        ("GET", p) if p.ends_with("/pods") && watch => gated(
            cluster,
            vec![
                event("ADDED", pod("flagsvc-b-0", "service", false)),
                event("MODIFIED", pod("flagsvc-a-0", "service", true)),
                event("ADDED", pod("flagsvc-b-1", "service", false)),
                event("MODIFIED", pod("flagsvc-a-1", "service", true)),
                event("DELETED", pod("flagsvc-a-0", "service", true)),
                event("DELETED", pod("flagsvc-a-1", "service", true)),
            ],
        ),
        ("GET", p) if p.ends_with("/pods") && selector == "harness/role=loadbalancer" => list(
            "PodList",
            "v1",
            vec![pod("loadbalancer-7c9d8-x2x4z", "loadbalancer", false)],
        ),
        ("GET", p) if p.ends_with("/pods") => list(
            "PodList",
            "v1",
            vec![
                pod("flagsvc-a-0", "service", false),
                pod("flagsvc-a-1", "service", false),
            ],
        ),
        ("GET", p) if p.ends_with("/events") && watch => gated(
            cluster,
            vec![event(
                "ADDED",
                json!({
                    "apiVersion": "v1", "kind": "Event",
                    "metadata": { "name": "flagsvc-a-0.1", "namespace": NS, "uid": "e1",
                                  "resourceVersion": "8" },
                    "involvedObject": { "kind": "Pod", "name": "flagsvc-a-0", "namespace": NS },
                    "reason": "FailedPreStopHook", "type": "Warning", "count": 1,
                    "message": "PreStopHook failed: exec: \"sleep\": executable file not found in $PATH"
                }),
            )],
        ),
        ("GET", p) if p.ends_with("/events") => list("EventList", "v1", vec![]),
        ("GET", p) if p.ends_with("/deployments") && watch => gated(
            cluster,
            vec![
                event("MODIFIED", deployment(2, 2, 1, 3, 2)),
                event("MODIFIED", deployment(2, 2, 2, 2, 2)),
            ],
        ),
        ("GET", p) if p.ends_with("/deployments") => {
            list("DeploymentList", "apps/v1", vec![deployment(1, 1, 2, 2, 2)])
        }
        ("GET", p) if p.ends_with("/deployments/flagsvc") => {
            Reply::Json(200, deployment(1, 1, 2, 2, 2))
        }
        ("GET", p) if p.ends_with("/services/flagsvc") => {
            service_with_cluster_ip("flagsvc", "10.96.12.34")
        }
        ("GET", p) if p.ends_with("/services/loadbalancer") => {
            service_with_cluster_ip("loadbalancer", "10.96.12.99")
        }
        ("GET", p) if p.ends_with("/pods/gen-alb-clients") => finished_pod("gen-alb-clients"),
        ("GET", p) if p.ends_with("/pods/gen-alb-clients/log") => Reply::Text(200, report_log()),
        ("GET", p) if p.contains("gen-alb-clients:9091/proxy/metrics") => Reply::Text(
            200,
            "loadgen_attempted_total 10\nloadgen_responses_total{code=\"200\"} 10\n# EOF\n".into(),
        ),
        ("GET", p)
            if p == format!(
                "/api/v1/namespaces/{NS}/pods/loadbalancer-7c9d8-x2x4z:9901/proxy/stats"
            ) =>
        {
            match cluster.patched() {
                Some(t) => Reply::Json(200, lb_stats(t)),
                None => status(503, "ServiceUnavailable", "the rollout never happened"),
            }
        }
        ("DELETE", _) => Reply::Json(
            200,
            json!({ "kind": "Status", "apiVersion": "v1", "status": "Success" }),
        ),
        _ => status(
            404,
            "NotFound",
            &format!("not scripted: {} {}", seen.method, seen.uri),
        ),
    }
}

fn scenario() -> harness_core::scenario::Scenario {
    let overrides: Vec<Override> = [
        "service.replicas=2",
        "load.warmup=10s",
        "load.duration=40s",
        "timeline[deploy].at=10s",
    ]
    .iter()
    .map(|o| Override::parse(o).unwrap())
    .collect();
    load_scenario_with(
        &repo("scenarios/rollout-502.yaml"),
        Some("distroless"),
        &overrides,
    )
    .unwrap()
}

fn options(fakes: &FakeTools, kubeconfig: std::path::PathBuf) -> KindOptions {
    kind_run::options(
        fakes,
        ClusterMode::Create,
        kubeconfig,
        "harness/kind/tests/fixtures/images-lb.json",
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rollout_502_runs_behind_the_load_balancer_in_the_cluster() {
    let cluster = Arc::new(Cluster::default());
    let state = cluster.clone();
    let server = ApiServer::start(move |seen| handler(&state, seen)).await;
    let fakes = FakeTools::kind_and_docker(&[]);
    let out = tempfile::tempdir().unwrap();
    let scenario = scenario();
    let scale = TimeScale::new(scenario.time_scale).unwrap();
    let ctx = run_context(out.path(), scale);
    let mut target = KindTarget::with_client(
        options(&fakes, out.path().join("kubeconfig")),
        server.client(),
    );
    let outcome = run_silently(&mut target, &scenario, &ctx).await.unwrap();
    assert!(outcome.error.is_none(), "{:?}", outcome.error);

    // The API calls (watch lists, polls and proxies aside), in order: the load balancer's
    // objects between the Service and the Deployment, the template patch, the cleanup.
    let calls = calls_made(&server, |path| {
        path.ends_with("/deployments")
            || path.contains("/proxy/metrics")
            || path.ends_with("/deployments/flagsvc")
    });
    let calls: Vec<&str> = calls.iter().map(String::as_str).collect();
    assert_eq!(
        calls,
        [
            "PATCH /api/v1/namespaces/harness-r1",
            "PATCH /api/v1/namespaces/harness-r1/services/flagsvc",
            "PATCH /api/v1/namespaces/harness-r1/serviceaccounts/loadbalancer",
            "PATCH /apis/rbac.authorization.k8s.io/v1/namespaces/harness-r1/roles/loadbalancer",
            "PATCH /apis/rbac.authorization.k8s.io/v1/namespaces/harness-r1/rolebindings/loadbalancer",
            "PATCH /api/v1/namespaces/harness-r1/services/loadbalancer",
            "PATCH /apis/apps/v1/namespaces/harness-r1/deployments/loadbalancer",
            "PATCH /apis/apps/v1/namespaces/harness-r1/deployments/flagsvc",
            "GET /api/v1/namespaces/harness-r1/services/flagsvc",
            "GET /api/v1/namespaces/harness-r1/services/loadbalancer",
            "PATCH /api/v1/namespaces/harness-r1/pods/gen-alb-clients",
            "PATCH /apis/apps/v1/namespaces/harness-r1/deployments/flagsvc",
            "GET /api/v1/namespaces/harness-r1/pods/gen-alb-clients",
            "GET /api/v1/namespaces/harness-r1/pods/gen-alb-clients/log",
            "GET /api/v1/namespaces/harness-r1/pods/loadbalancer-7c9d8-x2x4z:9901/proxy/stats",
            "DELETE /api/v1/namespaces/harness-r1",
        ]
    );
    let seen = server.seen();
    // The rollout: a strategic merge patch of the template's annotation only (restart).
    let patch = seen
        .iter()
        .find(|s| {
            s.method == "PATCH"
                && s.path().ends_with("/deployments/flagsvc")
                && s.content_type.as_deref() == Some("application/strategic-merge-patch+json")
        })
        .expect("the rollout's patch");
    let body = patch.json();
    let annotations = body["spec"]["template"]["metadata"]["annotations"]
        .as_object()
        .unwrap();
    assert_eq!(annotations.len(), 1, "{body}");
    let at = annotations["harness.io/restarted-at"].as_str().unwrap();
    assert!(at.starts_with("20") && at.ends_with('Z'), "{at}");
    assert!(body["spec"]["template"].get("spec").is_none(), "{body}");
    // The Deployment as applied has the exec hook and the scaled grace period (60 s × 0.1).
    let applied = seen
        .iter()
        .find(|s| {
            s.method == "PATCH"
                && s.path().ends_with("/deployments/flagsvc")
                && s.content_type.as_deref() == Some("application/apply-patch+yaml")
        })
        .unwrap()
        .json();
    let pod = &applied["spec"]["template"]["spec"];
    assert_eq!(pod["terminationGracePeriodSeconds"], 6);
    assert_eq!(
        pod["containers"][0]["lifecycle"]["preStop"]["exec"]["command"],
        json!(["sleep", "30"])
    );
    // The generator sends to the load balancer's ClusterIP.
    let generator = seen
        .iter()
        .find(|s| s.method == "PATCH" && s.path().ends_with("/pods/gen-alb-clients"))
        .unwrap()
        .json();
    let args = generator["spec"]["containers"][0]["args"].clone();
    assert!(
        args.as_array()
            .unwrap()
            .contains(&json!("http://10.96.12.99:80/flags/demo")),
        "{args}"
    );

    // The timeline and the measurements, as locally.
    let data = &outcome.data;
    let deleted: Vec<&str> = data
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Termination {
                pod,
                stage: TerminationStage::Deleted,
            } => Some(pod.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deleted, ["flagsvc-a-0", "flagsvc-a-1"]);
    let stages: Vec<_> = data
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Rollout { revision, stage } => Some((*revision, *stage)),
            _ => None,
        })
        .collect();
    use harness_core::measure::RolloutStage;
    assert_eq!(
        stages,
        [(2, RolloutStage::Started), (2, RolloutStage::Complete)]
    );
    let whole = Window::whole(data);
    let rollout = measure::rollout_duration(data, whole);
    let took = rollout.value.expect("a completed rollout");
    assert!((0.0..4.0).contains(&took), "{took}: {}", rollout.evidence);
    assert!(rollout.evidence.starts_with("revision 2 rolled out"));
    let from_deploy = Window {
        from_s: data
            .events
            .iter()
            .find(|e| matches!(&e.kind, EventKind::Action { .. }))
            .unwrap()
            .t_s,
        to_s: data.duration_s,
    };
    let rate = measure::termination_error_rate(data, from_deploy);
    assert_eq!(rate.value, Some(0.4), "{}", rate.evidence);
    assert!(
        rate.evidence.contains("flagsvc-a-0 10 (4 failed)"),
        "{}",
        rate.evidence
    );
    assert_eq!(
        measure::requests_after_removal(data, from_deploy).value,
        Some(10.0)
    );
    let routable = measure::min_routable_targets(data, from_deploy);
    assert_eq!(routable.value, Some(1.0), "{}", routable.evidence);
    let failed_hook = data.events.iter().any(|e| {
        matches!(&e.kind, EventKind::KubeEvent { reason, object, .. }
            if reason == "FailedPreStopHook" && object == "pod/flagsvc-a-0")
    });
    assert!(failed_hook, "{:?}", data.events);
    // The verdict: terminating pods failed; the explanation names the hook's failure and the
    // real timings.
    let s = &outcome.summary;
    let expectation = s
        .expectations
        .iter()
        .find(|e| e.metric == "terminationErrorRate")
        .unwrap();
    assert!(!expectation.passed, "{expectation:?}");
    let explanation = s.explanation.join("\n");
    assert!(
        explanation.contains("1× FailedPreStopHook (Warning)"),
        "{explanation}"
    );
    assert!(
        explanation.contains(
            "real timings on kind at time scale 0.1: readiness probe period 1s (scenario 10s)"
        ),
        "{explanation}"
    );
    assert!(
        explanation.contains("terminationGracePeriodSeconds 6s (scenario 60s)"),
        "{explanation}"
    );
}

/// At time scale 0.05 rollout-502's 10 s probe period would be 0.5 s: refused before any
/// command or API call, naming the field, the scaled value and a scale that works (exit 2).
#[tokio::test]
async fn a_time_scale_kubernetes_cannot_hold_is_refused_up_front() {
    let seen: Arc<Mutex<u32>> = Arc::default();
    let count = seen.clone();
    let server = ApiServer::start(move |_| {
        *count.lock().unwrap() += 1;
        status(500, "InternalError", "no call expected")
    })
    .await;
    let fakes = FakeTools::kind_and_docker(&[]);
    let out = tempfile::tempdir().unwrap();
    let mut target = KindTarget::with_client(
        options(&fakes, out.path().join("kubeconfig")),
        server.client(),
    );
    let ctx = run_context(out.path(), TimeScale::new(0.05).unwrap());
    let err = run_silently(&mut target, &scenario(), &ctx)
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("target `kind` cannot run this scenario"),
        "{text}"
    );
    assert!(
        text.contains("service.readinessProbe.period: 10s at time scale 0.05 is 0.5 s"),
        "{text}"
    );
    assert!(text.contains("--time-scale 0.1"), "{text}");
    assert_eq!(
        err.exit_status(),
        harness_core::engine::ExitStatus::InvalidInput
    );
    assert!(fakes.calls().is_empty(), "no command ran");
    assert_eq!(*seen.lock().unwrap(), 0, "no API call");
}

//! A kind cluster as the scripted API server plays it for topology-skew (run id `r1`): five
//! Nodes, four ready service pods in zone c, one EndpointSlice with hints for both zones, a
//! `TopologyAwareHintsEnabled` Event, a Deployment that is ready, the Service's ClusterIP, a
//! generator pod that has finished with its report in its log, and sidecar and loadgen metrics
//! through the pod proxy. Shared by harness-kind's run tests and the CLI's.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use workload_contract::loadgen::Report;
use workload_contract::loadgen::report::{BackendReport, TimelineRow};

use super::api_server::{Reply, Seen, list, status};

pub const NS: &str = "harness-r1";
pub const CLUSTER: &str = "harness-topology-skew";

static SCRAPES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A ready Node with `cpu` allocatable: a worker in `zone`, or (None) the control plane.
pub fn node(name: &str, zone: Option<&str>, cpu: &str) -> Value {
    let labels = match zone {
        Some(z) => json!({ "topology.kubernetes.io/zone": z }),
        None => json!({ "node-role.kubernetes.io/control-plane": "" }),
    };
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": { "name": name, "resourceVersion": "3", "labels": labels },
        "status": { "allocatable": { "cpu": cpu },
                    "conditions": [{ "type": "Ready", "status": "True" }] }
    })
}

fn service_pod(i: usize) -> Value {
    let node = if i < 2 {
        "harness-topology-skew-worker3"
    } else {
        "harness-topology-skew-worker4"
    };
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": { "name": format!("flagsvc-{i}"), "namespace": NS, "resourceVersion": "4",
                      "labels": { "harness/role": "service" } },
        "spec": { "nodeName": node, "containers": [{ "name": "flagsvc" }] },
        "status": { "phase": "Running", "conditions": [{ "type": "Ready", "status": "True" }] }
    })
}

/// The Service's one EndpointSlice (resource version `rv`): four ready endpoints
/// `flagsvc-0..3` in zone c, the first two on `{cluster}-worker3`, the others on
/// `{cluster}-worker4`; `hinted`: the first two for zone a, the others for zone c.
pub fn hinted_slice(cluster: &str, rv: &str, hinted: bool) -> Value {
    let endpoints: Vec<Value> = (0..4)
        .map(|i| {
            let worker = if i < 2 { "worker3" } else { "worker4" };
            let mut e = json!({
                "addresses": [format!("10.244.3.{}", i + 2)],
                "conditions": { "ready": true, "serving": true, "terminating": false },
                "nodeName": format!("{cluster}-{worker}"),
                "zone": "ap-northeast-2c",
                "targetRef": { "kind": "Pod", "name": format!("flagsvc-{i}"), "namespace": NS }
            });
            if hinted {
                let zone = if i < 2 {
                    "ap-northeast-2a"
                } else {
                    "ap-northeast-2c"
                };
                e["hints"] = json!({ "forZones": [{ "name": zone }] });
            }
            e
        })
        .collect();
    json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": { "name": "flagsvc-abcde", "namespace": NS, "resourceVersion": rv,
                      "labels": { "kubernetes.io/service-name": "flagsvc" } },
        "addressType": "IPv4", "endpoints": endpoints
    })
}

/// Service `name` of the run's namespace with ClusterIP `ip`.
pub fn service_with_cluster_ip(name: &str, ip: &str) -> Reply {
    Reply::Json(
        200,
        json!({ "apiVersion": "v1", "kind": "Service",
                "metadata": { "name": name, "namespace": NS },
                "spec": { "clusterIP": ip } }),
    )
}

/// Pod `name` of the run's namespace, finished (`Succeeded`), as a generator pod ends.
pub fn finished_pod(name: &str) -> Reply {
    Reply::Json(
        200,
        json!({ "apiVersion": "v1", "kind": "Pod",
                "metadata": { "name": name, "namespace": NS },
                "status": { "phase": "Succeeded" } }),
    )
}

/// `GET /version` of a server running `git_version` (`v1.34.11`).
pub fn server_version(git_version: &str) -> Reply {
    let minor = git_version.split('.').nth(1).unwrap_or("0").to_owned();
    Reply::Json(
        200,
        json!({
            "major": "1", "minor": minor, "gitVersion": git_version,
            "gitCommit": "0000000", "gitTreeState": "clean", "buildDate": "2026-11-01T00:00:00Z",
            "goVersion": "go1.24.9", "compiler": "gc", "platform": "linux/amd64"
        }),
    )
}

/// A generator's log: a line of stderr, its report, another line.
pub fn report_log() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    // A report that adds up, as loadgen writes one (the run's self-audit checks it): every
    // answer in its second's row, none carrying an `x-pod` (the scripted sidecars saw nothing).
    let ok = BTreeMap::from([("200".to_owned(), 321)]);
    let report = Report {
        schema: workload_contract::loadgen::SCHEMA.into(),
        started_at_unix_ms: now,
        attempted: 321,
        responses: ok.clone(),
        by_backend: BTreeMap::from([(
            "unknown".to_owned(),
            BackendReport {
                requests: 321,
                responses: ok.clone(),
                ..BackendReport::default()
            },
        )]),
        timeline: vec![TimelineRow {
            t: 0,
            attempted: 321,
            responses: ok,
            by_backend: BTreeMap::from([("unknown".to_owned(), 321)]),
            ..TimelineRow::default()
        }],
        ..Report::default()
    };
    format!(
        "2026-12-01T12:00:00Z INFO loadgen: starting\n{}\n2026-12-01T12:00:05Z INFO loadgen: done\n",
        serde_json::to_string_pretty(&report).unwrap()
    )
}

/// Echoes an applied object back as the API server would (with a ClusterIP for Services).
pub fn echo(body: &str) -> Reply {
    let mut v: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    if v["kind"] == "Service" {
        v["spec"]["clusterIP"] = json!("10.96.12.34");
    }
    v["metadata"]["resourceVersion"] = json!("2");
    Reply::Json(200, v)
}

/// The API server's answers.
pub fn handler(seen: &Seen) -> Reply {
    let path = seen.path();
    let watch = seen.is_watch();
    match (seen.method.as_str(), path) {
        ("GET", "/version") => server_version("v1.34.11"),
        ("PATCH", _) if !path.starts_with("/api/v1/nodes") => echo(&seen.body),
        ("GET", "/api/v1/nodes") if watch => Reply::Watch { events: vec![], hold: true },
        ("GET", "/api/v1/nodes") => list(
            "NodeList",
            "v1",
            vec![
                node("harness-topology-skew-control-plane", None, "8"),
                node("harness-topology-skew-worker", Some("ap-northeast-2a"), "4"),
                node("harness-topology-skew-worker2", Some("ap-northeast-2a"), "4"),
                node("harness-topology-skew-worker3", Some("ap-northeast-2c"), "4"),
                node("harness-topology-skew-worker4", Some("ap-northeast-2c"), "4"),
            ],
        ),
        ("GET", p) if p.ends_with("/endpointslices") && watch => Reply::Watch {
            events: vec![json!({ "type": "ADDED", "object": hinted_slice(CLUSTER, "7", true) })],
            hold: true,
        },
        ("GET", p) if p.ends_with("/pods") && watch => Reply::Watch { events: vec![], hold: true },
        ("GET", p) if p.ends_with("/pods") => {
            list("PodList", "v1", (0..4).map(service_pod).collect())
        }
        ("GET", p) if p.ends_with("/events") && watch => Reply::Watch {
            events: vec![json!({ "type": "ADDED", "object": {
                "apiVersion": "v1", "kind": "Event",
                "metadata": { "name": "flagsvc.1", "namespace": NS, "uid": "e1", "resourceVersion": "8" },
                "involvedObject": { "kind": "Service", "name": "flagsvc", "namespace": NS },
                "reason": "TopologyAwareHintsEnabled", "message": "Topology Aware Hints has been enabled",
                "type": "Normal", "count": 1 } })],
            hold: true,
        },
        ("GET", p) if p.ends_with("/endpointslices") || p.ends_with("/events") => {
            list("List", "v1", vec![])
        }
        ("GET", p) if p.ends_with("/deployments/flagsvc") => {
            Reply::Json(
                200,
                json!({ "apiVersion": "apps/v1", "kind": "Deployment",
                        "metadata": { "name": "flagsvc", "namespace": NS },
                        "spec": { "selector": {}, "template": {} },
                        "status": { "replicas": 4, "readyReplicas": 4 } }),
            )
        }
        ("GET", p) if p.ends_with("/services/flagsvc") => {
            service_with_cluster_ip("flagsvc", "10.96.12.34")
        }
        ("GET", p) if p.ends_with("/pods/gen-ingress-2a") => finished_pod("gen-ingress-2a"),
        ("GET", p) if p.ends_with("/pods/gen-ingress-2a/log") => Reply::Text(200, report_log()),
        ("GET", p) if p.contains("gen-ingress-2a:9091/proxy/metrics") => {
            // 100 more requests at every scrape, one in ten failed.
            let n = SCRAPES.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            Reply::Text(
                200,
                format!(
                    "loadgen_attempted_total {}\nloadgen_responses_total{{code=\"200\"}} {}\nloadgen_responses_total{{code=\"503\"}} {}\n# EOF\n",
                    100 * n,
                    90 * n,
                    10 * n
                ),
            )
        }
        ("GET", p) if p.contains(":9090/proxy/metrics") => Reply::Text(
            200,
            "sidecar_in_flight 2\nsidecar_queue_depth 1\nsidecar_received_total 80\nsidecar_admitted_total 79\n# EOF\n"
                .into(),
        ),
        ("DELETE", _) => Reply::Json(200, json!({ "kind": "Status", "apiVersion": "v1", "status": "Success" })),
        _ => status(404, "NotFound", &format!("not scripted: {} {}", seen.method, seen.uri)),
    }
}

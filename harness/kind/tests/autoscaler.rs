//! The real HPA on the timeline, against a scripted API server on 127.0.0.1: the watched
//! `autoscaling/v2` HorizontalPodAutoscaler's status becomes the local target's `autoscaler`
//! events (replicas, decision, both sides' rates — the HPA's own side from its status, the
//! other asked from Prometheus through the service proxy) and condition notes, so
//! `timeToScaleUp` measures it as locally; and the rendered autoscaler objects (goldens,
//! time-scaled behavior, the generators' metrics port).

mod support;

use std::time::Duration;

use harness_core::clock::TimeScale;
use harness_core::measure::{EventKind, RecordedEvent, RunData, Window, time_to_scale_up};
use harness_core::scenario::model::Reporter;
use harness_kind::autoscaler::{HpaWatch, spawn_hpa_watcher};
use harness_kind::manifests::autoscaler::{self, rate_query};
use harness_kind::observer::Observer;
use harness_kind::watch::Recorder;
use serde_json::{Value, json};
use support::api_server::{ApiServer, Reply, list, status};
use support::files::{IMAGES, images, load, repo};
use support::watchers::recorded;
use tokio_util::sync::CancellationToken;

const NS: &str = "harness-r1";

fn hpa(rv: &str, current: i32, desired: i32, average: &str, limited: bool) -> Value {
    json!({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": { "name": "flagsvc", "namespace": NS, "resourceVersion": rv },
        "spec": {
            "scaleTargetRef": { "apiVersion": "apps/v1", "kind": "Deployment", "name": "flagsvc" },
            "minReplicas": 4, "maxReplicas": 24
        },
        "status": {
            "currentReplicas": current, "desiredReplicas": desired,
            "currentMetrics": [{ "type": "External", "external": {
                "metric": { "name": "s0-destination-rps" },
                "current": { "averageValue": average } } }],
            "conditions": [
                { "type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale",
                  "message": "recommended size matches current size" },
                { "type": "ScalingActive", "status": "True", "reason": "ValidMetricFound",
                  "message": "the HPA was able to successfully calculate a replica count from external metric s0-destination-rps" },
                { "type": "ScalingLimited", "status": if limited { "True" } else { "False" },
                  "reason": if limited { "ScaleUpLimit" } else { "DesiredWithinRange" } }
            ]
        }
    })
}

fn autoscaler_events(events: &[EventKind]) -> Vec<(u32, u32, f64, f64)> {
    events
        .iter()
        .filter_map(|e| match e {
            EventKind::Autoscaler {
                current,
                desired,
                source_rps,
                destination_rps,
                ..
            } => Some((*current, *desired, *source_rps, *destination_rps)),
            _ => None,
        })
        .collect()
}

/// The HPA watcher on `server`, with the service `flagsvc` scaled on `reporter`'s side, left
/// running until it has recorded two `autoscaler` events (or for ten seconds at most).
async fn watch_until_two_changes(
    server: &ApiServer,
    reporter: Reporter,
    window_s: u32,
    zones: Vec<String>,
) -> (Recorder, CancellationToken, tokio::task::JoinHandle<()>) {
    let recorder = Recorder::new(Observer::new(zones));
    let stop = CancellationToken::new();
    let task = spawn_hpa_watcher(
        &server.client(),
        HpaWatch {
            namespace: NS.into(),
            name: "flagsvc".into(),
            reporter,
            window_s,
        },
        &recorder,
        &stop,
    );
    for _ in 0..500 {
        if autoscaler_events(&recorded(&recorder)).len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    (recorder, stop, task)
}

#[tokio::test]
async fn the_hpas_status_becomes_autoscaler_events_and_condition_notes() {
    let server = ApiServer::start(|seen| {
        let path = seen.path();
        if path == format!("/apis/autoscaling/v2/namespaces/{NS}/horizontalpodautoscalers") {
            return if seen.is_watch() {
                Reply::Watch {
                    events: vec![
                        json!({ "type": "ADDED", "object": hpa("10", 4, 4, "10", false) }),
                        // The same status again (a resync): no new event.
                        json!({ "type": "MODIFIED", "object": hpa("11", 4, 4, "10", false) }),
                        // The surge: 12.5 per pod over 4 pods = 50 rps; the controller wants 8
                        // but is limited.
                        json!({ "type": "MODIFIED", "object": hpa("12", 4, 8, "12500m", true) }),
                    ],
                    hold: true,
                }
            } else {
                list("HorizontalPodAutoscalerList", "autoscaling/v2", vec![])
            };
        }
        if path
            == format!(
                "/api/v1/namespaces/{NS}/services/prometheus-operated:web/proxy/api/v1/query"
            )
        {
            return Reply::Json(
                200,
                json!({ "status": "success", "data": { "resultType": "vector",
                        "result": [{ "metric": {}, "value": [1.7e9, "187.5"] }] } }),
            );
        }
        status(404, "NotFound", "not scripted")
    })
    .await;
    let (recorder, stop, task) = watch_until_two_changes(
        &server,
        Reporter::Destination,
        15,
        vec!["ap-northeast-2a".into()],
    )
    .await;
    let all = recorded(&recorder);
    // Destination (the HPA's side) from its status × replicas; source from Prometheus.
    assert_eq!(
        autoscaler_events(&all),
        [(4, 4, 187.5, 40.0), (4, 8, 187.5, 50.0)],
        "{all:#?}"
    );
    let notes: Vec<&str> = all
        .iter()
        .filter_map(|e| match e {
            EventKind::Note { message } => Some(message.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        notes,
        [
            "HorizontalPodAutoscaler flagsvc: AbleToScale True (ReadyForNewScale): recommended size matches current size",
            "HorizontalPodAutoscaler flagsvc: ScalingActive True (ValidMetricFound): the HPA was able to successfully calculate a replica count from external metric s0-destination-rps",
            "HorizontalPodAutoscaler flagsvc: ScalingLimited False (DesiredWithinRange)",
            "HorizontalPodAutoscaler flagsvc: ScalingLimited True (ScaleUpLimit)",
        ]
    );
    // The watch selected the HPA by name; the query asked for the other side (the source).
    let listed = server.first_to("/horizontalpodautoscalers");
    assert_eq!(
        listed.query("fieldSelector").as_deref(),
        Some("metadata.name=flagsvc")
    );
    let query = server.first_to("/api/v1/query");
    assert_eq!(
        query.query("query"),
        Some(rate_query(Reporter::Source, NS, 15))
    );

    // On the run's clock the first scale-up is measured as locally.
    let origin = recorder.lock().events[0].0;
    let run = RunData {
        load_started_unix_ms: 0,
        duration_s: 60.0,
        generators: vec![],
        pods: vec![],
        events: recorder
            .lock()
            .events
            .iter()
            .map(|(at, kind)| RecordedEvent {
                t_s: (*at - origin).as_secs_f64() + 5.0,
                kind: kind.clone(),
            })
            .collect(),
        lb: vec![],
        lb_routable: vec![],
        lb_accounts: Default::default(),
        counters_cut: Default::default(),
    };
    let measured = time_to_scale_up(
        &run,
        Window {
            from_s: 0.0,
            to_s: 60.0,
        },
    );
    assert!(
        measured.evidence.starts_with("first scale-up 4 → 8 at 5."),
        "{}",
        measured.evidence
    );
    stop.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(2), task).await;
}

#[tokio::test]
async fn an_unreachable_prometheus_is_noted_once_and_the_other_side_is_zero() {
    let server = ApiServer::start(|seen| {
        if seen.path().ends_with("/horizontalpodautoscalers") {
            return if seen.is_watch() {
                Reply::Watch {
                    events: vec![
                        json!({ "type": "ADDED", "object": hpa("10", 4, 4, "10", false) }),
                        json!({ "type": "MODIFIED", "object": hpa("11", 4, 5, "11", false) }),
                    ],
                    hold: true,
                }
            } else {
                list("HorizontalPodAutoscalerList", "autoscaling/v2", vec![])
            };
        }
        status(
            503,
            "ServiceUnavailable",
            "no endpoints available for service \"prometheus-operated\"",
        )
    })
    .await;
    let (recorder, stop, task) =
        watch_until_two_changes(&server, Reporter::Source, 3, vec![]).await;
    let all = recorded(&recorder);
    // The source is the HPA's side here; the destination could not be read.
    assert_eq!(
        autoscaler_events(&all),
        [(4, 4, 40.0, 0.0), (4, 5, 44.0, 0.0)]
    );
    let failures = all
        .iter()
        .filter(|e| matches!(e, EventKind::Note { message } if message.contains("cannot read the side the autoscaler does not use")))
        .count();
    assert_eq!(failures, 1, "{all:#?}");
    stop.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(2), task).await;
}

#[test]
fn rendered_autoscaler_objects_match_the_goldens() {
    let update = std::env::var_os("UPDATE_GOLDENS").is_some();
    // The kind target runs the autoscaler at time scale 1 only (`driver::refusals`).
    let cases = [(Some("incident"), 1.0, "autoscaler-incident.yaml")];
    let mut differ = Vec::new();
    for (variant, scale, golden) in cases {
        let scenario = load("scenarios/autoscaler-blind-spot.yaml", variant);
        let objects = autoscaler::render(&scenario, "golden", TimeScale::new(scale).unwrap())
            .unwrap()
            .unwrap();
        let text = harness_kind::manifests::values_to_yaml(&objects);
        let path = repo("harness/kind/tests/golden").join(golden);
        if update {
            std::fs::write(&path, &text).unwrap();
            continue;
        }
        if std::fs::read_to_string(&path).unwrap_or_default() != text {
            differ.push(format!("{golden} differs; rendered:\n{text}"));
        }
    }
    assert!(
        differ.is_empty(),
        "{}\nIf the change is intended: UPDATE_GOLDENS=1 cargo test -p harness-kind --test autoscaler",
        differ.join("\n")
    );
}

#[test]
fn the_objects_carry_the_scenarios_numbers_in_whole_seconds() {
    let scenario = load("scenarios/autoscaler-blind-spot.yaml", Some("fixed"));
    let objects = autoscaler::render(&scenario, "r1", TimeScale::REAL)
        .unwrap()
        .unwrap();
    let kinds: Vec<&str> = objects
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "ServiceAccount",
            "Role",
            "RoleBinding",
            "Prometheus",
            "PodMonitor",
            "PodMonitor",
            "ScaledObject"
        ]
    );
    let so = &objects[6]["spec"];
    assert_eq!(so["minReplicaCount"], 4);
    assert_eq!(so["maxReplicaCount"], 24);
    assert_eq!(
        so["advanced"]["horizontalPodAutoscalerConfig"]["name"],
        "flagsvc"
    );
    let behavior = &so["advanced"]["horizontalPodAutoscalerConfig"]["behavior"];
    // Kubernetes' defaults: a 300 s scale-down window, 15 s policy periods.
    assert_eq!(behavior["scaleDown"]["stabilizationWindowSeconds"], 300);
    assert_eq!(behavior["scaleUp"]["stabilizationWindowSeconds"], 0);
    assert_eq!(behavior["scaleUp"]["policies"][0]["periodSeconds"], 15);
    assert_eq!(so["pollingInterval"], 15);
    assert_eq!(behavior["scaleUp"]["selectPolicy"], "Max");
    let trigger = &so["triggers"][0];
    assert_eq!(trigger["type"], "prometheus");
    assert_eq!(trigger["metricType"], "AverageValue");
    assert_eq!(trigger["metadata"]["threshold"], "10");
    assert_eq!(
        trigger["metadata"]["query"],
        "sum(rate(loadgen_attempted_total{namespace=\"harness-r1\"}[15s]))"
    );
    assert_eq!(
        trigger["metadata"]["serverAddress"],
        "http://prometheus-operated.harness-r1.svc:9090"
    );
    // Prometheus selects only this run's PodMonitors; the generators declare the port it scrapes.
    assert_eq!(
        objects[3]["spec"]["podMonitorSelector"]["matchLabels"]["harness/run-id"],
        "r1"
    );
    assert_eq!(objects[3]["spec"]["securityContext"]["runAsNonRoot"], true);
    assert_eq!(
        objects[5]["spec"]["podMetricsEndpoints"][0]["port"],
        "metrics"
    );
    let images = images();
    let m = harness_kind::manifests::render(
        &scenario,
        &harness_kind::manifests::RenderInput {
            run_id: "r1",
            images: &images,
            service_host: "10.96.0.10".into(),
            lb_host: "10.96.0.11".into(),
            ingress_host: "10.96.0.12".into(),
            time_scale: harness_core::clock::TimeScale::REAL,
            seed: 1,
        },
    )
    .unwrap();
    let ports = m.generators[0].spec.as_ref().unwrap().containers[0]
        .ports
        .clone()
        .unwrap();
    assert_eq!(ports[0].name.as_deref(), Some("metrics"));
    assert_eq!(ports[0].container_port, 9091);
    // Without an autoscaler: nothing rendered.
    let plain = load("scenarios/topology-skew.yaml", None);
    assert!(
        autoscaler::render(&plain, "r1", TimeScale::REAL)
            .unwrap()
            .is_none()
    );
}

/// The shipped pins carry no hash (none could be obtained where they were written): a kind
/// run of the autoscaler scenario stops in deploy before any `kind`/`docker` command or API
/// call, saying how to record the hashes. The CLI refuses it before the engine starts (exit 2).
#[tokio::test]
async fn an_unlocked_pipeline_stops_the_run_before_anything_is_created() {
    use harness_kind::driver::{ClusterMode, KindTarget};
    use support::fakes::FakeTools;
    use support::kind_run::{options, run_context, run_silently};

    let server = ApiServer::start(|_| status(500, "InternalError", "no call expected")).await;
    let fakes = FakeTools::kind_and_docker(&[]);
    let out = tempfile::tempdir().unwrap();
    let options = options(
        &fakes,
        ClusterMode::Create,
        out.path().join("kubeconfig"),
        IMAGES,
    );
    let mut target = KindTarget::with_client(options, server.client());
    // The autoscaler is a capability of clusters the harness creates.
    assert!(
        harness_core::engine::Target::capabilities(&target)
            .contains(&harness_core::engine::Capability::Autoscaler)
    );
    let scenario = load("scenarios/autoscaler-blind-spot.yaml", None);
    let ctx = run_context(out.path(), TimeScale::REAL);
    let outcome = run_silently(&mut target, &scenario, &ctx).await;
    // A failed deploy is a partial outcome that keeps its error.
    let text = match outcome {
        Ok(o) => o
            .error
            .as_ref()
            .map(|e| harness_core::text::error_chain(e))
            .unwrap_or_default(),
        Err(e) => harness_core::text::error_chain(&e),
    };
    assert!(text.contains("no sha256 recorded"), "{text}");
    assert!(text.contains("harness pins lock"), "{text}");
    assert!(
        fakes.calls().is_empty(),
        "no kind/docker command: {:?}",
        fakes.calls()
    );
    assert!(server.seen().is_empty(), "no API call");
}

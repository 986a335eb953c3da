//! A kind deploy of the autoscaler scenario with locked pins (a pin file given to the target,
//! releases served from 127.0.0.1, the cache in a temporary directory),
//! recording fakes of `kind`/`docker` and a scripted API server: the metrics pipeline is
//! downloaded, verified and applied before the run's Namespace and Service, then the run's
//! Prometheus, PodMonitors and ScaledObject after the Deployment is ready, and the HPA is
//! watched; teardown deletes the namespace and the cluster.

mod support;

use harness_core::clock::TimeScale;
use harness_core::engine::Target;
use harness_kind::driver::{ClusterMode, KindTarget};
use harness_kind::pinned::PinTable;
use harness_kind::pinned::fetch::sha256_hex;
use serde_json::json;
use support::api_server::{ApiServer, Reply, list};
use support::fake_cluster;
use support::fakes::FakeTools;
use support::files::{IMAGES, load, repo};
use support::kind_run::{applied, applied_at, options, run_context};

const OPERATOR: &str = "---\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: op, namespace: default}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: op, namespace: default}\nspec: {selector: {matchLabels: {app: op}}, template: {metadata: {labels: {app: op}}, spec: {containers: [{name: op, image: example.test/op:v1}]}}}\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pipeline_is_installed_before_the_service_and_the_scaledobject_after_the_pods() {
    let keda = std::fs::read_to_string(repo("harness/kind/tests/fixtures/release.yaml")).unwrap();
    let (keda2, operator) = (keda.clone(), OPERATOR.to_owned());
    let releases = ApiServer::start(move |seen| match seen.path() {
        "/keda.yaml" => Reply::Text(200, keda2.clone()),
        "/bundle.yaml" => Reply::Text(200, operator.clone()),
        _ => Reply::Text(404, "no".into()),
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let pins = dir.path().join("third-party.yaml");
    std::fs::write(
        &pins,
        format!(
            "schema: harness/third-party/v1\nreleases:\n  - name: keda\n    version: v1\n    url: http://{0}/keda.yaml\n    sha256: {1}\n  - name: prometheus-operator\n    version: v2\n    url: http://{0}/bundle.yaml\n    sha256: {2}\n",
            releases.addr,
            sha256_hex(keda.as_bytes()),
            sha256_hex(OPERATOR.as_bytes())
        ),
    )
    .unwrap();

    let api = ApiServer::start(|seen| {
        let path = seen.path();
        match (seen.method.as_str(), path) {
            ("GET", p) if p.contains("/customresourcedefinitions/") => Reply::Json(
                200,
                json!({ "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                        "metadata": { "name": "widgets.example.test" },
                        "spec": { "group": "example.test", "names": { "kind": "Widget", "plural": "widgets" },
                                  "scope": "Namespaced", "versions": [] },
                        "status": { "conditions": [{ "type": "Established", "status": "True" }] } }),
            ),
            ("GET", p) if p.ends_with("/deployments/op") || p.ends_with("/deployments/fixture-operator") => {
                Reply::Json(
                    200,
                    json!({ "apiVersion": "apps/v1", "kind": "Deployment",
                            "metadata": { "name": "op" }, "spec": { "selector": {}, "template": {} },
                            "status": { "conditions": [{ "type": "Available", "status": "True" }] } }),
                )
            }
            ("GET", p) if p.ends_with("/horizontalpodautoscalers") => {
                if seen.is_watch() {
                    Reply::Watch { events: vec![], hold: true }
                } else {
                    list("HorizontalPodAutoscalerList", "autoscaling/v2", vec![])
                }
            }
            _ => fake_cluster::handler(seen),
        }
    })
    .await;
    let fakes = FakeTools::kind_and_docker(&[]);
    let options = options(
        &fakes,
        ClusterMode::Create,
        dir.path().join("kubeconfig"),
        IMAGES,
    );
    let table = PinTable::read(&pins).unwrap();
    let mut target = KindTarget::with_client(options, api.client()).with_third_party(
        table,
        &pins.display().to_string(),
        dir.path().join("cache"),
    );
    let scenario = load("scenarios/autoscaler-blind-spot.yaml", None);
    let ctx = run_context(dir.path(), TimeScale::REAL);
    target.deploy(&scenario, &ctx).await.unwrap();
    target.teardown().await.unwrap();

    // Each release downloaded once, the operator's bundle first.
    let downloads: Vec<String> = releases
        .seen()
        .iter()
        .map(|s| s.path().to_owned())
        .collect();
    assert_eq!(downloads, ["/bundle.yaml", "/keda.yaml"]);
    let patches = applied(&api);
    let at = |suffix: &str| applied_at(&patches, suffix);
    assert_eq!(at("/namespaces/default/deployments/op"), 1);
    assert!(
        at("/apiservices/v1beta1.external.metrics.k8s.io") < at("/api/v1/namespaces/harness-r1")
    );
    assert!(at("/api/v1/namespaces/harness-r1") < at("/services/flagsvc"));
    assert!(at("/deployments/flagsvc") < at("/serviceaccounts/harness-prometheus"));
    assert!(
        at("/monitoring.coreos.com/v1/namespaces/harness-r1/prometheuses/harness")
            < at("/keda.sh/v1alpha1/namespaces/harness-r1/scaledobjects/flagsvc")
    );
    assert_eq!(
        patches.last().unwrap(),
        "/apis/keda.sh/v1alpha1/namespaces/harness-r1/scaledobjects/flagsvc"
    );
    // The Deployment was ready before the autoscaler's objects: its GET comes first.
    let calls = api.calls();
    let ready_read = calls
        .iter()
        .position(|c| c.method == "GET" && c.path().ends_with("/deployments/flagsvc"))
        .unwrap();
    let account = calls
        .iter()
        .position(|c| c.path().ends_with("/serviceaccounts/harness-prometheus"))
        .unwrap();
    assert!(ready_read < account);
    // The HPA was watched by name.
    let hpa = api
        .seen()
        .into_iter()
        .find(|s| s.path().ends_with("/horizontalpodautoscalers"))
        .expect("the HPA watcher listed");
    assert_eq!(
        hpa.query("fieldSelector").as_deref(),
        Some("metadata.name=flagsvc")
    );
    // The releases are cached by hash.
    let cached = std::fs::read_dir(dir.path().join("cache")).unwrap().count();
    assert_eq!(cached, 2);
    // Teardown: the namespace, then the cluster this run created.
    assert!(
        calls
            .iter()
            .any(|c| c.method == "DELETE" && c.path() == "/api/v1/namespaces/harness-r1")
    );
    assert!(fakes.calls().iter().any(|c| c.starts_with(&[
        "kind".to_owned(),
        "delete".into(),
        "cluster".into()
    ])));
}

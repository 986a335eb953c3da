//! A kind run of ingress-hot-podding's `v0-16` variant (time scale 1, a pin file with the
//! controller image's digest given to the target) against a scripted API server and recording
//! fakes of `kind`/`docker`: the controller's objects are applied after the Service and before
//! the Deployment, its StatefulSet is waited for, the generator sends to the controller's
//! ClusterIP, the observer's `ingress` events name the Service's pods, and teardown deletes the
//! controller's cluster-scoped objects with the namespace. An unlocked image is refused before
//! anything is created.

mod support;

use std::time::Duration;

use harness_core::clock::{RunClock, TimeScale};
use harness_core::engine::{RunContext, Target};
use harness_core::measure::{EventKind, IngressChange};
use harness_kind::driver::{ClusterMode, KindOptions, KindTarget};
use harness_kind::manifests::ingress::{IngressPlan, service_backend};
use harness_kind::pinned::PinTable;
use serde_json::json;
use support::api_server::{ApiServer, Reply};
use support::fake_cluster::{self, NS, report_log};
use support::fakes::FakeTools;
use support::files::{IMAGES, load, repo};
use support::kind_run::{applied, applied_at};

const DIGEST: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const INGRESS_IP: &str = "10.96.7.7";

fn pins(digest: &str) -> PinTable {
    PinTable::parse(
        &format!(
            "schema: harness/third-party/v1\nreleases: []\nimages:\n  - name: haproxy-ingress\n    version: v0.16.1\n    image: quay.io/jcmoraisjr/haproxy-ingress\n    digest: {digest}\n"
        ),
        "pins.yaml",
    )
    .unwrap()
}

fn fakes() -> FakeTools {
    let mut fakes = FakeTools::new(&["kind", "docker"]);
    fakes
        .respond("docker version", "24.0.7\n", "", 0)
        .respond("kind version", "kind v0.33.0 go1.25.1 linux/amd64\n", "", 0)
        .respond("kind get clusters", "", "No kind clusters found.\n", 0);
    fakes
}

fn options(fakes: &FakeTools, dir: &std::path::Path) -> KindOptions {
    KindOptions {
        mode: ClusterMode::Create,
        kubeconfig: Some(dir.join("kubeconfig")),
        host_cpus: 8,
        images: repo(IMAGES),
        tools: fakes.toolbox_alone(),
        may_touch_nodes: false,
        check_access: false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn v0_16_deploys_the_controller_and_the_generator_sends_through_it() {
    let scenario = load("scenarios/ingress-hot-podding.yaml", Some("v0-16"));
    let image = format!("quay.io/jcmoraisjr/haproxy-ingress:v0.16.1@{DIGEST}");
    let backend = service_backend(
        &IngressPlan::new(&scenario, "r1", image.clone(), TimeScale::REAL).unwrap(),
    );
    // Every replica lists the four pods of the fake's EndpointSlice (10.244.3.2-5) by address,
    // in slots named otherwise, then an empty slot.
    let csv = {
        let mut text = String::from("# pxname,svname,status,addr,\n");
        for i in 0..4 {
            text.push_str(&format!(
                "{backend},srv00{},UP,10.244.3.{}:8081,\n",
                i + 1,
                i + 2
            ));
        }
        text.push_str(&format!(
            "{backend},srv005,MAINT,127.0.0.1:1023,\n{backend},BACKEND,UP,,\n"
        ));
        text
    };
    let api = ApiServer::start(move |seen| {
        let path = seen.path();
        match (seen.method.as_str(), path) {
            ("GET", p) if p.ends_with("/deployments/flagsvc") => Reply::Json(
                200,
                json!({ "apiVersion": "apps/v1", "kind": "Deployment",
                        "metadata": { "name": "flagsvc", "namespace": NS },
                        "spec": { "selector": {}, "template": {} },
                        "status": { "replicas": 8, "readyReplicas": 8 } }),
            ),
            ("GET", p) if p.ends_with("/statefulsets/haproxy-ingress") => Reply::Json(
                200,
                json!({ "apiVersion": "apps/v1", "kind": "StatefulSet",
                        "metadata": { "name": "haproxy-ingress", "namespace": NS },
                        "spec": { "selector": {}, "serviceName": "haproxy-ingress", "template": {} },
                        "status": { "replicas": 8, "readyReplicas": 8 } }),
            ),
            ("GET", p) if p.ends_with("/services/haproxy-ingress") => Reply::Json(
                200,
                json!({ "apiVersion": "v1", "kind": "Service",
                        "metadata": { "name": "haproxy-ingress", "namespace": NS },
                        "spec": { "clusterIP": INGRESS_IP } }),
            ),
            ("GET", p) if p.contains("/pods/haproxy-ingress-") && p.ends_with(":1936/proxy/;csv") => {
                Reply::Text(200, csv.clone())
            }
            ("GET", p) if p.contains("/pods/haproxy-ingress-") && p.ends_with(":10254/proxy/metrics") => {
                Reply::Text(200, "haproxyingress_updates_total{status=\"full\"} 1\n".into())
            }
            ("GET", p) if p.contains("/pods/haproxy-ingress-") => {
                let name = p.rsplit('/').next().unwrap_or_default().to_owned();
                Reply::Json(
                    200,
                    json!({ "apiVersion": "v1", "kind": "Pod",
                            "metadata": { "name": name, "namespace": NS, "uid": format!("uid-{name}") } }),
                )
            }
            ("GET", p) if p.ends_with("/pods/gen-elb-clients") => Reply::Json(
                200,
                json!({ "apiVersion": "v1", "kind": "Pod",
                        "metadata": { "name": "gen-elb-clients", "namespace": NS },
                        "status": { "phase": "Succeeded" } }),
            ),
            ("GET", p) if p.ends_with("/pods/gen-elb-clients/log") => Reply::Text(200, report_log()),
            _ => fake_cluster::handler(seen),
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let fakes = fakes();
    let mut target = KindTarget::with_client(options(&fakes, dir.path()), api.client())
        .with_third_party(pins(DIGEST), "pins.yaml", dir.path().join("cache"));
    assert!(target.refusals(&scenario, TimeScale::REAL).is_empty());
    let ctx = RunContext {
        run_id: "r1".into(),
        out_dir: dir.path().join("run"),
        seed: 1,
        time_scale: TimeScale::REAL,
    };
    target.deploy(&scenario, &ctx).await.unwrap();
    // The observer polls once a second: let it see every replica.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let clock = RunClock::starting_after(Duration::ZERO, Duration::from_secs(1));
    target.start_load(&clock).await.unwrap();
    let data = target.collect(false).await.unwrap();
    target.teardown().await.unwrap();

    let calls = api.calls();
    let patches = applied(&api);
    let at = |suffix: &str| applied_at(&patches, suffix);
    // The controller's objects in order, after the Service, before the Deployment.
    let order = [
        "/services/flagsvc",
        "/serviceaccounts/haproxy-ingress",
        &format!("/clusterroles/haproxy-ingress-{NS}"),
        "/configmaps/haproxy-ingress",
        &format!("/ingressclasses/harness-haproxy-{NS}"),
        "/ingresses/flagsvc",
        "/services/haproxy-ingress",
        "/statefulsets/haproxy-ingress",
        "/deployments/flagsvc",
    ];
    let positions: Vec<usize> = order.iter().map(|s| at(s)).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{patches:#?}");
    // The StatefulSet is image-pinned by digest.
    let set = calls
        .iter()
        .find(|c| c.method == "PATCH" && c.path().ends_with("/statefulsets/haproxy-ingress"))
        .unwrap();
    assert!(set.body.contains(&image), "{}", set.body);
    // Its readiness was read after the Deployment's.
    let get = |suffix: &str| {
        calls
            .iter()
            .position(|c| c.method == "GET" && c.path().ends_with(suffix))
            .unwrap_or_else(|| panic!("no GET of {suffix}"))
    };
    assert!(get("/deployments/flagsvc") < get("/statefulsets/haproxy-ingress"));
    // The generator sends to the controller's ClusterIP.
    let generator = calls
        .iter()
        .find(|c| c.method == "PATCH" && c.path().ends_with("/pods/gen-elb-clients"))
        .expect("the generator pod");
    assert!(
        generator.body.contains(&format!("{INGRESS_IP}:80")),
        "{}",
        generator.body
    );
    // The observer: one start per replica, listing the Service's pods by their names.
    let starts: Vec<(u32, Vec<String>)> = data
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Ingress {
                replica,
                change: IngressChange::Start,
                servers,
                ..
            } => Some((*replica, servers.clone())),
            _ => None,
        })
        .collect();
    let mut replicas: Vec<u32> = starts.iter().map(|s| s.0).collect();
    replicas.sort_unstable();
    assert_eq!(replicas, (0..8).collect::<Vec<_>>(), "{starts:?}");
    for (_, servers) in &starts {
        assert_eq!(
            servers,
            &["flagsvc-0", "flagsvc-1", "flagsvc-2", "flagsvc-3"]
        );
    }
    // Teardown: the cluster-scoped objects, then the namespace.
    let deleted: Vec<String> = calls
        .iter()
        .filter(|c| c.method == "DELETE")
        .map(|c| c.path().to_owned())
        .collect();
    for suffix in [
        format!("/clusterroles/haproxy-ingress-{NS}"),
        format!("/clusterrolebindings/haproxy-ingress-{NS}"),
        format!("/ingressclasses/harness-haproxy-{NS}"),
        format!("/api/v1/namespaces/{NS}"),
    ] {
        assert!(
            deleted.iter().any(|d| d.ends_with(&suffix)),
            "{suffix}: {deleted:#?}"
        );
    }
}

#[tokio::test]
async fn an_image_without_a_digest_is_refused_before_anything_is_created() {
    let scenario = load("scenarios/ingress-hot-podding.yaml", Some("v0-16"));
    let api = ApiServer::start(fake_cluster::handler).await;
    let dir = tempfile::tempdir().unwrap();
    let fakes = fakes();
    let mut target = KindTarget::with_client(options(&fakes, dir.path()), api.client())
        .with_third_party(pins("null"), "pins.yaml", dir.path().join("cache"));
    let ctx = RunContext {
        run_id: "r1".into(),
        out_dir: dir.path().join("run"),
        seed: 1,
        time_scale: TimeScale::REAL,
    };
    let err = target.deploy(&scenario, &ctx).await.unwrap_err();
    let err = harness_core::text::error_chain(&err);
    assert!(
        err.contains("haproxy-ingress")
            && err.contains("harness pins lock")
            && err.contains("pins.yaml"),
        "{err}"
    );
    assert!(api.calls().is_empty(), "{:?}", api.calls());
    assert!(fakes.calls().is_empty(), "{:?}", fakes.calls());
    target.teardown().await.unwrap();
}

#[test]
fn the_versions_kind_cannot_run_are_refused_with_the_reason() {
    let target = KindTarget::new(KindOptions {
        mode: ClusterMode::Create,
        kubeconfig: None,
        host_cpus: 8,
        images: repo(IMAGES),
        tools: FakeTools::new(&[]).toolbox_alone(),
        may_touch_nodes: false,
        check_access: false,
    });
    for (variant, version) in [("incident", "v0.6"), ("fixed", "v0.7")] {
        let scenario = load("scenarios/ingress-hot-podding.yaml", Some(variant));
        let refused = target.refusals(&scenario, TimeScale::REAL);
        assert_eq!(refused.len(), 1, "{variant}: {refused:?}");
        assert!(
            refused[0].starts_with(&format!("ingress.version {version}"))
                && refused[0].contains("v1.22")
                && refused[0].contains("v0-16-roundrobin-ip"),
            "{variant}: {refused:?}"
        );
    }
    // At the file's own time scale (0.1) the v0.16 variants' reload failures are refused too.
    let scenario = load("scenarios/ingress-hot-podding.yaml", Some("v0-16"));
    let refused = target.refusals(&scenario, TimeScale::new(0.1).unwrap());
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(refused[0].contains("reloadFailureRate"), "{refused:?}");
}

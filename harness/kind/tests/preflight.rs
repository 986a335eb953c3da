//! The first contact with a cluster the harness did not create, against the scripted API
//! server: its version is asked before anything is created (a cluster below the floor, or
//! below what `PreferSameZone` needs, is refused with exit 2 naming the version); a server that
//! does not answer is named with its URL and context and what failed; `--check-access` names
//! every permission the server denies.

mod support;

use harness_core::clock::TimeScale;
use harness_core::engine::EngineError;
use harness_core::scenario::model::Scenario;
use harness_core::scenario::{Override, load_scenario_with};
use harness_kind::driver::{ClusterMode, KindTarget};
use serde_json::json;
use support::api_server::{ApiServer, Reply, status};
use support::fake_cluster::server_version;
use support::fakes::FakeTools;
use support::files::repo;
use support::kind_run::{options, run_context, run_silently};

const IMAGES: &str = "harness/kind/tests/fixtures/images.json";

fn scenario(set: &[&str]) -> Scenario {
    // topology-skew without its node actions, which another cluster cannot take.
    let overrides: Vec<Override> = set.iter().map(|o| Override::parse(o).unwrap()).collect();
    let mut s =
        load_scenario_with(&repo("scenarios/topology-skew.yaml"), None, &overrides).unwrap();
    s.timeline.clear();
    s
}

fn existing(
    fakes: &FakeTools,
    kubeconfig: std::path::PathBuf,
) -> harness_kind::driver::KindOptions {
    options(
        fakes,
        ClusterMode::Existing {
            context: "staging".into(),
        },
        kubeconfig,
        IMAGES,
    )
}

fn unsupported(err: EngineError) -> String {
    assert!(
        matches!(err, EngineError::Unsupported { .. }),
        "refused as invalid input (exit 2): {err}"
    );
    err.to_string()
}

/// Runs `scenario` in the existing cluster `staging`, whose API server answers only `/version`
/// (with `version`): the refusal, and the paths the run asked.
async fn refused_by(version: &'static str, scenario: &Scenario) -> (String, Vec<String>) {
    let server = ApiServer::start(move |seen| match seen.path() {
        "/version" => server_version(version),
        _ => status(500, "Unexpected", "nothing but /version may be asked"),
    })
    .await;
    let fakes = FakeTools::kind_and_docker(&[]);
    let out = tempfile::tempdir().unwrap();
    let mut target =
        KindTarget::with_client(existing(&fakes, out.path().join("kc")), server.client());
    let err = run_silently(
        &mut target,
        scenario,
        &run_context(out.path(), TimeScale::REAL),
    )
    .await
    .unwrap_err();
    let paths = server.seen().iter().map(|s| s.path().to_owned()).collect();
    (unsupported(err), paths)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_below_the_floor_is_refused_before_anything_is_created() {
    let (text, paths) = refused_by("v1.30.6", &scenario(&[])).await;
    assert!(
        text.contains(
            "the cluster of context `staging` runs Kubernetes v1.30.6, older than v1.31.0"
        ),
        "{text}"
    );
    assert_eq!(paths, ["/version"], "nothing created");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prefer_same_zone_needs_a_server_that_has_it() {
    let same_zone = scenario(&[
        "service.routing.topologyMode=null",
        "service.routing.trafficDistribution=PreferSameZone",
    ]);
    let (text, _) = refused_by("v1.33.4", &same_zone).await;
    assert!(
        text.contains("service.trafficDistribution PreferSameZone: the cluster of context `staging` runs Kubernetes v1.33.4; it is on by default from v1.34.0"),
        "{text}"
    );
}

/// Nothing listens: the error names the server's URL and context, says the connection was
/// refused and what to check — not "ServiceError: client error (Connect)".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_server_is_named_with_what_failed() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = closed.local_addr().unwrap();
    drop(closed);
    let out = tempfile::tempdir().unwrap();
    let kubeconfig = out.path().join("kc");
    std::fs::write(
        &kubeconfig,
        json!({
            "apiVersion": "v1", "kind": "Config",
            "clusters": [{ "name": "c", "cluster": { "server": format!("http://{addr}") } }],
            "users": [{ "name": "u", "user": {} }],
            "contexts": [{ "name": "staging", "context": { "cluster": "c", "user": "u" } }],
            "current-context": "staging"
        })
        .to_string(),
    )
    .unwrap();
    let fakes = FakeTools::kind_and_docker(&[]);
    let mut target = KindTarget::new(existing(&fakes, kubeconfig));
    let err = run_silently(
        &mut target,
        &scenario(&[]),
        &run_context(out.path(), TimeScale::REAL),
    )
    .await
    .unwrap_err();
    assert!(
        !matches!(err, EngineError::Unsupported { .. }),
        "a failure to ask is infrastructure (exit 3)"
    );
    let text = harness_core::text::error_chain(&err);
    assert!(
        text.contains(&format!(
            "the API server http://{addr}/ (context `staging`): connection refused"
        )),
        "{text}"
    );
    assert!(text.contains("kind get clusters"), "{text}");
}

/// `--check-access`: every permission is asked of the server; the denied ones are named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_access_names_every_denied_permission() {
    let server = ApiServer::start(|seen| match seen.path() {
        "/version" => server_version("v1.34.11"),
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews" => {
            let mut review: serde_json::Value = serde_json::from_str(&seen.body).unwrap();
            let attrs = review["spec"]["resourceAttributes"].clone();
            let denied = attrs["resource"] == "pods" && attrs["verb"] == "delete"
                || attrs["resource"] == "events";
            review["status"] = if denied {
                json!({ "allowed": false, "reason": "no RBAC rule" })
            } else {
                json!({ "allowed": true })
            };
            Reply::Json(201, review)
        }
        _ => status(500, "Unexpected", "nothing else may be asked"),
    })
    .await;
    let fakes = FakeTools::kind_and_docker(&[]);
    let out = tempfile::tempdir().unwrap();
    let mut options = existing(&fakes, out.path().join("kc"));
    options.check_access = true;
    let mut target = KindTarget::with_client(options, server.client());
    let err = run_silently(
        &mut target,
        &scenario(&[]),
        &run_context(out.path(), TimeScale::REAL),
    )
    .await
    .unwrap_err();
    let text = unsupported(err);
    assert!(
        text.contains("--check-access: the cluster of context `staging` denies `delete` on pods in the run's namespace, for killPod, stopping the generators (no RBAC rule) (namespace harness-r1)"),
        "{text}"
    );
    assert!(text.contains("`list` on events"), "{text}");
    assert!(text.contains("`watch` on events"), "{text}");
    assert!(
        !text.contains("`get` on pods"),
        "allowed ones are not named: {text}"
    );
    let reviews = server
        .seen()
        .iter()
        .filter(|s| s.path().ends_with("selfsubjectaccessreviews"))
        .count();
    assert!(reviews >= 20, "every permission asked: {reviews}");
}

//! A whole `harness run --target kind` of topology-skew (shortened by `--set`) through the
//! engine, against a scripted API server and recording fakes of `kind` and `docker`: the exact
//! commands (version checks, create, load, the spare's kubelet, delete), the API calls in order
//! (namespace, Service, Deployment, generator, the node and pod actions, the namespace's
//! deletion), the generator's report read from its log, sidecar samples through the pod proxy,
//! the watched hints on the timeline and the model check in the summary.

mod support;

use harness_core::clock::TimeScale;
use harness_core::engine::{self, EngineError, RunOptions, RunOutcome};
use harness_core::measure::EventKind;
use harness_core::scenario::{Override, load_scenario_with};
use harness_kind::driver::{ClusterMode, KindTarget};
use harness_kind::pins::NODE_IMAGE;
use serde_json::json;
use support::api_server::{ApiServer, status};
use support::fake_cluster::{CLUSTER, handler};
use support::fakes::FakeTools;
use support::files::{IMAGES, repo};
use support::kind_run::{calls_made, run_context, run_silently};
use tokio_util::sync::CancellationToken;

/// Progress that keeps each tick's live error rate.
#[derive(Default)]
struct Ticks(std::sync::Mutex<Vec<Option<f64>>>);

impl harness_core::engine::Progress for Ticks {
    fn phase(&self, _: &str) {}
    fn tick(&self, _: f64, _: f64, o: &harness_core::engine::Observation) {
        self.0.lock().unwrap().push(o.error_rate);
        assert!(o.achieved_rps.is_none_or(|r| r > 0.0));
    }
    fn note(&self, _: &str) {}
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn topology_skew_runs_end_to_end_against_fakes() {
    let server = ApiServer::start(handler).await;
    let fakes = FakeTools::kind_and_docker(&[]);
    let out = tempfile::tempdir().unwrap();
    let kubeconfig = out.path().join("kubeconfig");
    let scenario = short_scenario();
    let options = options(&fakes, ClusterMode::Create, kubeconfig.clone());
    let mut target = KindTarget::with_client(options, server.client());
    let ctx = run_context(out.path(), TimeScale::REAL);
    let ticks = Ticks::default();
    let outcome = engine::run(
        &mut target,
        &scenario,
        &ctx,
        &RunOptions { keep: false },
        CancellationToken::new(),
        &ticks,
    )
    .await
    .unwrap();
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    // Live rates from the generator's counters through the pod proxy: 1 in 10 failed.
    let rates = ticks.0.lock().unwrap().clone();
    assert!(rates.contains(&Some(0.1)), "{rates:?}");

    // kind and docker: exactly these commands, in this order.
    let config = ctx.out_dir.join("kind-config.yaml");
    let words = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
    let mut create = words("kind create cluster --name harness-topology-skew --config");
    create.extend([
        config.display().to_string(),
        "--image".into(),
        NODE_IMAGE.into(),
    ]);
    create.extend(["--kubeconfig".into(), kubeconfig.display().to_string()]);
    let mut delete = words("kind delete cluster --name harness-topology-skew");
    delete.extend(["--kubeconfig".into(), kubeconfig.display().to_string()]);
    assert_eq!(
        fakes.calls(),
        [
            vec![
                "docker".to_owned(),
                "version".into(),
                "--format".into(),
                "{{.Server.Version}}".into()
            ],
            words("kind version"),
            words("kind get clusters"),
            create,
            words(&format!(
                "kind load docker-image harness/flagsvc:sha256-1111111111111111 harness/sidecar:sha256-2222222222222222 harness/loadgen:sha256-3333333333333333 --name {CLUSTER}"
            )),
            words("docker exec harness-topology-skew-worker5 systemctl stop kubelet"),
            words("docker exec harness-topology-skew-worker5 systemctl start kubelet"),
            words("docker exec harness-topology-skew-worker5 systemctl stop kubelet"),
            delete,
        ]
    );
    assert!(
        std::fs::read_to_string(&config)
            .unwrap()
            .contains("name: \"harness-topology-skew\"")
    );

    // The API calls the target made (watch lists and streams aside), in order.
    let calls = calls_made(&server, |path| {
        path.contains("/proxy/") || path.ends_with("/deployments/flagsvc")
    });
    let calls: Vec<&str> = calls.iter().map(String::as_str).collect();
    assert_eq!(
        calls,
        [
            "DELETE /api/v1/nodes/harness-topology-skew-worker5",
            "PATCH /api/v1/namespaces/harness-r1",
            "PATCH /api/v1/namespaces/harness-r1/services/flagsvc",
            "PATCH /apis/apps/v1/namespaces/harness-r1/deployments/flagsvc",
            "GET /api/v1/namespaces/harness-r1/services/flagsvc",
            "PATCH /api/v1/namespaces/harness-r1/pods/gen-ingress-2a",
            "DELETE /api/v1/nodes/harness-topology-skew-worker5",
            "DELETE /api/v1/namespaces/harness-r1/pods/flagsvc-3",
            "GET /api/v1/namespaces/harness-r1/pods/gen-ingress-2a",
            "GET /api/v1/namespaces/harness-r1/pods/gen-ingress-2a/log",
            "DELETE /api/v1/namespaces/harness-r1",
        ]
    );
    let seen = server.seen();
    let proxied = seen
        .iter()
        .filter(|s| s.path() == "/api/v1/namespaces/harness-r1/pods/flagsvc-0:9090/proxy/metrics")
        .count();
    assert!(
        proxied >= 1,
        "the sidecars are scraped through the pod proxy"
    );
    let generator_pod = seen
        .iter()
        .find(|s| s.method == "PATCH" && s.path().ends_with("/pods/gen-ingress-2a"))
        .unwrap()
        .json();
    let args = generator_pod["spec"]["containers"][0]["args"].clone();
    assert!(
        args.as_array()
            .unwrap()
            .contains(&json!("http://10.96.12.34:80/flags/checkout")),
        "{args}"
    );

    // The same RunData as locally: the report from the log, samples, the watched timeline.
    let data = &outcome.data;
    assert_eq!(data.generators.len(), 1);
    assert_eq!(data.generators[0].report.attempted, 321);
    assert_eq!(data.generators[0].zone, "ap-northeast-2a");
    let names: Vec<&str> = data.pods.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["flagsvc-0", "flagsvc-1", "flagsvc-2", "flagsvc-3"]);
    let last = data.pods[0].samples.last().expect("samples");
    assert_eq!((last.received, last.admitted, last.in_flight), (80, 79, 2));
    assert_eq!(data.pods[0].zone, "ap-northeast-2c");
    let hints: Vec<bool> = data
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Hints { enabled, .. } => Some(*enabled),
            _ => None,
        })
        .collect();
    assert_eq!(hints, [true]);
    assert!(data.events.iter().any(|e| matches!(&e.kind,
        EventKind::KubeEvent { reason, .. } if reason == "TopologyAwareHintsEnabled")));
    let actions: Vec<&str> = data
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Action { name, .. } => name.as_deref(),
            _ => None,
        })
        .collect();
    assert_eq!(actions, ["node-added", "node-removed", "pod-churn"]);

    // The model check: at 0.5 / 0.5 the controller's hints are the model's.
    let agreement = target.model_agreement().expect("a model check");
    assert_eq!(
        (agreement.checks, agreement.agreed),
        (1, 1),
        "{agreement:?}"
    );
}

fn short_scenario() -> harness_core::scenario::Scenario {
    let overrides: Vec<Override> = [
        "load.warmup=1s",
        "load.duration=4s",
        "timeline[node-added].at=1s",
        "timeline[node-removed].at=2s",
        "timeline[pod-churn].at=3s",
    ]
    .iter()
    .map(|o| Override::parse(o).unwrap())
    .collect();
    load_scenario_with(&repo("scenarios/topology-skew.yaml"), None, &overrides).unwrap()
}

/// The shortened topology-skew on a kind target with `fakes` and `server`, writing below `out`.
async fn run_short(
    fakes: &FakeTools,
    server: &ApiServer,
    mode: ClusterMode,
    out: &std::path::Path,
) -> Result<RunOutcome, EngineError> {
    let mut target = KindTarget::with_client(
        options(fakes, mode, out.join("kubeconfig")),
        server.client(),
    );
    run_silently(
        &mut target,
        &short_scenario(),
        &run_context(out, TimeScale::REAL),
    )
    .await
}

fn options(
    fakes: &FakeTools,
    mode: ClusterMode,
    kubeconfig: std::path::PathBuf,
) -> harness_kind::driver::KindOptions {
    support::kind_run::options(fakes, mode, kubeconfig, IMAGES)
}

/// A run whose deploy failed: a partial outcome that measured nothing (its summary says where
/// it stopped), whose error's chain and exit status are returned.
fn failed_deploy(
    result: Result<harness_core::engine::RunOutcome, harness_core::engine::EngineError>,
) -> (String, harness_core::engine::ExitStatus) {
    let outcome = result.expect("a failed deploy still gives a partial outcome");
    assert!(outcome.summary.partial, "the summary is marked partial");
    assert!(outcome.data.generators.is_empty(), "nothing was measured");
    let err = outcome.error.as_ref().expect("the deploy's error is kept");
    let text = harness_core::text::error_chain(err);
    let reason = outcome.summary.partial_reason.clone().unwrap_or_default();
    assert!(
        reason.starts_with("deploy failed") && reason.ends_with("nothing was measured"),
        "{reason}"
    );
    (text, outcome.exit_status())
}

/// A Deployment the API server refuses: the run fails in deploy, and what it created — the
/// namespace and the cluster — is deleted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_deploy_deletes_the_namespace_and_the_cluster_it_created() {
    let server = ApiServer::start(|seen| {
        if seen.method == "PATCH" && seen.path().ends_with("/deployments/flagsvc") {
            return status(
                422,
                "Invalid",
                "Deployment.apps \"flagsvc\" is invalid: spec.template.spec.containers[0].image: Required value",
            );
        }
        handler(seen)
    })
    .await;
    let fakes = FakeTools::kind_and_docker(&[]);
    let out = tempfile::tempdir().unwrap();
    let (text, status) =
        failed_deploy(run_short(&fakes, &server, ClusterMode::Create, out.path()).await);
    assert!(text.contains("applying the Deployment"), "{text}");
    assert!(
        text.contains("HTTP 422") && text.contains("Required value"),
        "{text}"
    );
    assert_eq!(status, harness_core::engine::ExitStatus::Infrastructure);
    let last = fakes.calls().last().cloned().unwrap();
    assert_eq!(&last[..5], ["kind", "delete", "cluster", "--name", CLUSTER]);
    assert!(
        server
            .calls()
            .iter()
            .any(|c| c.method == "DELETE" && c.path() == "/api/v1/namespaces/harness-r1"),
        "the namespace is deleted"
    );
}

/// No kind on PATH: the run stops before anything is created and says what to install.
#[tokio::test]
async fn missing_kind_stops_before_anything_is_created() {
    let server = ApiServer::start(handler).await;
    let mut fakes = FakeTools::new(&["docker"]);
    fakes.respond("docker version", "24.0.7\n", "", 0);
    let out = tempfile::tempdir().unwrap();
    let (text, status) =
        failed_deploy(run_short(&fakes, &server, ClusterMode::Create, out.path()).await);
    assert!(text.contains("`kind` is not installed"), "{text}");
    assert!(text.contains("kind v0.33.0 or newer"), "{text}");
    assert_eq!(status, harness_core::engine::ExitStatus::Infrastructure);
    assert_eq!(
        fakes.calls(),
        [vec![
            "docker".to_owned(),
            "version".into(),
            "--format".into(),
            "{{.Server.Version}}".into()
        ]]
    );
    assert!(server.seen().is_empty(), "no API call");
}

/// An existing cluster: node actions are refused before anything runs unless
/// `--may-touch-nodes`; a time scale at which topology-skew's durations cannot be held is
/// refused on kind.
#[tokio::test]
async fn what_kind_cannot_do_is_refused_up_front() {
    let fakes = FakeTools::kind_and_docker(&[]);
    let out = tempfile::tempdir().unwrap();
    let existing = ClusterMode::Existing {
        context: "staging".into(),
    };
    let mut target = KindTarget::new(options(&fakes, existing.clone(), out.path().join("kc")));
    let err = run_silently(
        &mut target,
        &short_scenario(),
        &run_context(out.path(), TimeScale::REAL),
    )
    .await
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("target `kind` cannot run this scenario")
            && text.contains("the addNode action")
            && text.contains("the removeNode action"),
        "{text}"
    );
    let mut allowed = options(&fakes, existing, out.path().join("kc"));
    allowed.may_touch_nodes = true;
    let caps = harness_core::engine::Target::capabilities(&KindTarget::new(allowed));
    assert!(caps.contains(&harness_core::engine::Capability::RelabelNode));
    assert!(
        !caps.contains(&harness_core::engine::Capability::AddNode),
        "no docker exec into another cluster's nodes"
    );

    let mut target = KindTarget::new(options(&fakes, ClusterMode::Create, out.path().join("kc")));
    let mut scaled = run_context(out.path(), TimeScale::REAL);
    scaled.time_scale = TimeScale::new(0.1).unwrap();
    let err = run_silently(&mut target, &short_scenario(), &scaled)
        .await
        .unwrap_err();
    // topology-skew's 1 s probe period cannot be 0.1 s.
    let text = err.to_string();
    assert!(
        text.contains("service.readinessProbe.period: 1s at time scale 0.1 is 0.1 s")
            && text.contains("run at --time-scale 1"),
        "{text}"
    );
    assert!(fakes.calls().is_empty(), "nothing ran");
}

/// Presses Ctrl-C when the load phase begins.
struct CancelAtLoad(CancellationToken);

impl harness_core::engine::Progress for CancelAtLoad {
    fn phase(&self, name: &str) {
        if name == "load" {
            self.0.cancel();
        }
    }
    fn tick(&self, _: f64, _: f64, _: &harness_core::engine::Observation) {}
    fn note(&self, _: &str) {}
}

/// Ctrl-C during the load: the generator is stopped through deletion, its partial report read
/// from its followed log, the run marked partial, and everything deleted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_run_keeps_what_was_measured_and_cleans_up() {
    let server = ApiServer::start(|seen| {
        if seen.path().ends_with("/pods/gen-ingress-2a/log") {
            assert_eq!(seen.query("follow").as_deref(), Some("true"));
        }
        handler(seen)
    })
    .await;
    let fakes = FakeTools::kind_and_docker(&[]);
    let out = tempfile::tempdir().unwrap();
    let mut target = KindTarget::with_client(
        options(&fakes, ClusterMode::Create, out.path().join("kubeconfig")),
        server.client(),
    );
    let cancel = CancellationToken::new();
    let outcome = engine::run(
        &mut target,
        &short_scenario(),
        &run_context(out.path(), TimeScale::REAL),
        &RunOptions { keep: false },
        cancel.clone(),
        &CancelAtLoad(cancel),
    )
    .await
    .unwrap();
    assert!(outcome.interrupted && outcome.summary.partial);
    assert_eq!(outcome.data.generators[0].report.attempted, 321);
    let deleted: Vec<String> = server
        .calls()
        .into_iter()
        .filter(|c| c.method == "DELETE")
        .map(|c| c.path().to_owned())
        .collect();
    assert!(
        deleted.contains(&"/api/v1/namespaces/harness-r1/pods/gen-ingress-2a".to_owned()),
        "{deleted:?}"
    );
    assert_eq!(
        deleted.last().map(String::as_str),
        Some("/api/v1/namespaces/harness-r1")
    );
    let last = fakes.calls().last().cloned().unwrap();
    assert_eq!(&last[..3], ["kind", "delete", "cluster"]);
}

/// `--cluster NAME`: no create and no delete; images loaded, nodes named after that cluster.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reused_cluster_is_neither_created_nor_deleted() {
    let server = ApiServer::start(handler).await;
    let fakes = FakeTools::kind_and_docker(&["kind", "harness-mine"]);
    let out = tempfile::tempdir().unwrap();
    let mode = ClusterMode::Reuse("harness-mine".into());
    let outcome = run_short(&fakes, &server, mode, out.path()).await.unwrap();
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    let words = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
    let calls = fakes.calls();
    assert_eq!(
        calls[2..],
        [
            words("kind get clusters"),
            words(
                "kind load docker-image harness/flagsvc:sha256-1111111111111111 harness/sidecar:sha256-2222222222222222 harness/loadgen:sha256-3333333333333333 --name harness-mine"
            ),
            words("docker exec harness-mine-worker5 systemctl stop kubelet"),
            words("docker exec harness-mine-worker5 systemctl start kubelet"),
            words("docker exec harness-mine-worker5 systemctl stop kubelet"),
        ]
    );
    assert!(
        server
            .calls()
            .iter()
            .any(|c| c.method == "DELETE" && c.path() == "/api/v1/namespaces/harness-r1"),
        "only the namespace is deleted"
    );
}

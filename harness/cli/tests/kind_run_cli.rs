//! `harness run --target kind` as a user types it, with recording fakes of `kind` and `docker`
//! first on PATH and a kubeconfig whose `kind-harness-topology-skew` context points at a
//! scripted API server on 127.0.0.1: the kubeconfig is read, the run goes end to end, the
//! results are written with `target: kind` and `modelAgreement`, and the exit code is the
//! verdict's.

#[path = "../../kind/tests/support/mod.rs"]
mod kind_support;
mod support;

use kind_support::api_server::ApiServer;
use kind_support::fake_cluster::handler;
use kind_support::fakes::FakeTools;
use support::short_kind_run;

fn kubeconfig(server: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: kind-harness-topology-skew\n  cluster:\n    server: {server}\nusers:\n- name: kind-harness-topology-skew\n  user: {{}}\ncontexts:\n- name: kind-harness-topology-skew\n  context:\n    cluster: kind-harness-topology-skew\n    user: kind-harness-topology-skew\ncurrent-context: kind-harness-topology-skew\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_target_kind_reads_the_kubeconfig_and_writes_the_results() {
    let server = ApiServer::start(handler).await;
    let fakes = FakeTools::kind_and_docker(&[]);
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    std::fs::write(&kc, kubeconfig(&format!("http://{}", server.addr))).unwrap();
    let out = dir.path().join("out");
    let child = short_kind_run(&kc, fakes.dir(), &[], &out)
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&child.stderr);
    // The mock's sidecars never see traffic, so pods starve: the verdict is a failure.
    assert_eq!(child.status.code(), Some(1), "{stderr}");
    // Read and checked against `harness schema summary`.
    let summary = support::summary(&out);
    assert_eq!(summary["target"], "kind");
    assert_eq!(
        summary["modelAgreement"]["checks"], 1,
        "{}",
        summary["modelAgreement"]
    );
    assert_eq!(summary["modelAgreement"]["agreed"], 1);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("Model agreement: kube-model agreed"), "{md}");
    assert!(out.join("kind-config.yaml").is_file());
    assert!(out.join("timeline.jsonl").is_file());
    let calls = fakes.calls();
    assert!(
        calls
            .iter()
            .any(|c| c.starts_with(&["kind".into(), "create".into()]))
    );
    assert!(
        calls
            .last()
            .unwrap()
            .starts_with(&["kind".into(), "delete".into()])
    );
    let run_id = summary["runId"].as_str().unwrap();
    let deployment = format!("/apis/apps/v1/namespaces/harness-{run_id}/deployments/flagsvc");
    assert!(
        server
            .seen()
            .iter()
            .any(|s| s.method == "PATCH" && s.path() == deployment),
        "the Deployment was applied in the run's namespace"
    );
}

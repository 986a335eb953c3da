//! `harness import --context`: the same objects read live from a scripted API server give the
//! same scenario as from files; only list calls (GET) are made; a foreign context is refused
//! before any request.

mod support;

use std::process::Stdio;

use mock_apiserver::{ApiServer, Reply, list};
use serde_json::Value;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(
        support::workspace_root()
            .join("scenarios/testdata/import")
            .join(name),
    )
    .unwrap()
}

/// Every object of the fixture files (Lists flattened, documents split).
fn objects(files: &[&str]) -> Vec<Value> {
    let mut out = Vec::new();
    for file in files {
        let text = fixture(file);
        for doc in text.split("\n---\n") {
            if doc.lines().all(|l| {
                l.trim().is_empty() || l.trim_start().starts_with('#') || l.trim() == "---"
            }) {
                continue;
            }
            let value: Value = serde_saphyr::from_str(doc.trim_start_matches("---\n")).unwrap();
            match value["items"].as_array() {
                Some(items) => out.extend(items.iter().cloned()),
                None => out.push(value),
            }
        }
    }
    out
}

fn of_kind(objects: &[Value], kind: &str) -> Vec<Value> {
    objects
        .iter()
        .filter(|o| o["kind"] == kind)
        .cloned()
        .collect()
}

async fn harness_output(args: Vec<String>) -> std::process::Output {
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        support::harness_command(&args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_context_gives_the_scenario_the_files_give_with_list_calls_only() {
    let files = [
        "kubeadm-nodes.yaml",
        "kubeadm-service.yaml",
        "kubeadm-objects.yaml",
    ];
    let all = objects(&files);
    let server = ApiServer::start(move |seen| {
        let answer = |kind: &str, api: &str| list(&format!("{kind}List"), api, of_kind(&all, kind));
        match seen.path() {
            "/api/v1/nodes" => answer("Node", "v1"),
            "/api/v1/namespaces/default/services" => answer("Service", "v1"),
            "/apis/apps/v1/namespaces/default/deployments" => answer("Deployment", "apps/v1"),
            "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices" => {
                answer("EndpointSlice", "discovery.k8s.io/v1")
            }
            "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers" => {
                answer("HorizontalPodAutoscaler", "autoscaling/v2")
            }
            "/apis/policy/v1/namespaces/default/poddisruptionbudgets" => {
                answer("PodDisruptionBudget", "policy/v1")
            }
            _ => Reply::Json(404, serde_json::json!({"kind": "Status", "code": 404})),
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    let kubeconfig = kubeconfig.display().to_string();

    // A context the harness did not create is refused without a request.
    let refused = harness_output(
        [
            "import",
            "--context",
            "mock",
            "--kubeconfig",
            &kubeconfig,
            "--service",
            "search",
        ]
        .map(String::from)
        .to_vec(),
    )
    .await;
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("add --allow-existing-cluster"));
    assert!(server.seen().is_empty(), "{:?}", server.seen());

    let live = harness_output(
        [
            "import",
            "--context",
            "mock",
            "--kubeconfig",
            &kubeconfig,
            "--allow-existing-cluster",
            "--service",
            "search",
            "--rate",
            "dc1-a=40",
        ]
        .map(String::from)
        .to_vec(),
    )
    .await;
    assert_eq!(
        live.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&live.stderr)
    );
    let paths: Vec<String> = files
        .iter()
        .map(|f| {
            support::workspace_root()
                .join("scenarios/testdata/import")
                .join(f)
                .display()
                .to_string()
        })
        .collect();
    let mut args = vec!["import".to_owned(), "--from".to_owned()];
    args.extend(paths);
    args.extend(["--service", "search", "--rate", "dc1-a=40"].map(String::from));
    let from_files = harness_output(args).await;
    assert_eq!(from_files.status.code(), Some(0));
    // The same scenario but for the line naming where the objects came from.
    let without_origin = |out: &[u8]| -> Vec<String> {
        String::from_utf8_lossy(out)
            .lines()
            .filter(|l| !l.contains("imported from"))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(
        without_origin(&live.stdout),
        without_origin(&from_files.stdout)
    );
    assert!(String::from_utf8_lossy(&live.stdout).contains("imported from context mock"));

    let seen = server.seen();
    assert_eq!(seen.len(), 6, "one list call per kind: {seen:?}");
    assert!(
        seen.iter().all(|s| s.method == "GET" && !s.is_watch()),
        "{seen:?}"
    );
}

//! `harness import` on fixtures shaped like real clusters (scenarios/testdata/import/): the
//! imported scenario validates and plans, and the plan predicts at load start what `harness
//! hints` predicts from the same objects; every mapping the fixtures exercise is asserted on the
//! written file; bad input is refused with the file and the fix.

mod support;

use support::harness;
use support::import::{assert_agreement, import};

fn fixture(name: &str) -> String {
    support::workspace_root()
        .join("scenarios/testdata/import")
        .join(name)
        .display()
        .to_string()
}

/// Runs the imported `scenario` for 4 s (seed 7, 1 s warm-up) into `dir/run`: its exit code
/// and summary.
fn run_briefly(
    scenario: &std::path::Path,
    dir: &std::path::Path,
) -> (Option<i32>, serde_json::Value) {
    let out = dir.join("run");
    let status = support::harness_command(&["run", &scenario.display().to_string()])
        .args(["--seed", "7", "--progress", "none"])
        .args(["--set", "load.duration=4s", "--set", "load.warmup=1s"])
        .arg("--out")
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    (status.code(), support::summary(&out))
}

fn text_of(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn eks_shaped_cluster_imports_and_agrees_with_hints() {
    let dir = tempfile::tempdir().unwrap();
    let (nodes, service, workloads, slices) = (
        fixture("eks-nodes.yaml"),
        fixture("eks-service.yaml"),
        fixture("eks-workloads.yaml"),
        fixture("eks-endpointslices.yaml"),
    );
    let (prediction, notes) = assert_agreement(
        &[&nodes, &service, &workloads, &slices],
        "checkout-api",
        (&nodes, &slices, &service),
        dir.path(),
    );
    // Uneven CPU: 1a holds 51.6 % of the ready workers' CPU with 2 of 6 endpoints.
    assert!(!prediction.hints_enabled);
    assert_eq!(prediction.ratios.len(), 3);
    let text = text_of(&dir.path().join("imported.yaml"));
    for expected in [
        "replicas: 6",
        "{ name: ip-10-0-70-52.ec2.internal, allocatableCpu: \"7910m\", ready: false }",
        "routing: { topologyMode: Auto }",
        "readinessProbe: { period: 5s, initialDelay: 3s, failureThreshold: 2, successThreshold: 1 }",
        "rollout: { maxSurge: 2, maxUnavailable: 0, minReadySeconds: 5s }",
        "termination: { gracePeriod: 45s, preStop: { sleep: 10s } }",
        "notReadyToleration: 60s",
        "metric: { reporter: destination, targetAverageValue: 40 }",
        "scaleDown: { stabilizationWindow: 300s, policies: [{ type: Percent, value: 10, period: 60s }] }",
        "- { maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule }",
        "# PodDisruptionBudget checkout-api (minAvailable 4): not reproduced",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
    // The node tainted for batch jobs is the only worker left out of placement.nodes.
    let placement: Vec<&str> = text
        .lines()
        .skip_while(|l| *l != "  placement:")
        .skip(2)
        .take_while(|l| l.trim_start().starts_with("- ip-"))
        .collect();
    assert_eq!(placement.len(), 19, "{text}");
    assert!(!text.contains("- ip-10-0-38-52.ec2.internal"));
    assert!(
        notes.contains("skipped objects the import does not read: 1 ReplicaSet"),
        "{notes}"
    );
    assert!(
        notes.contains("fill in         service.serviceTime"),
        "{notes}"
    );
}

#[test]
fn kubeadm_shaped_cluster_with_hints_on_agrees_and_reads_the_sidecar() {
    let dir = tempfile::tempdir().unwrap();
    let (nodes, service, objects, slices) = (
        fixture("kubeadm-nodes.yaml"),
        fixture("kubeadm-service.yaml"),
        fixture("kubeadm-objects.yaml"),
        fixture("kubeadm-endpointslices.yaml"),
    );
    let (prediction, notes) = assert_agreement(
        &[&nodes, &service, &objects],
        "search",
        (&nodes, &slices, &service),
        dir.path(),
    );
    assert!(prediction.hints_enabled);
    // Each worker zone's callers reach only their own zone's two pods; the control plane's
    // zone has no hinted endpoint, so kube-proxy there falls back to all four.
    for zone in ["dc1-a", "dc1-b"] {
        assert_eq!(
            prediction.reachable[zone],
            vec![zone.to_owned(), zone.to_owned()]
        );
    }
    assert_eq!(
        prediction.reachable["dc1-c"],
        ["dc1-a", "dc1-a", "dc1-b", "dc1-b"]
    );
    let text = text_of(&dir.path().join("imported.yaml"));
    for expected in [
        "controlPlane:\n    - { name: cp-1, zone: dc1-c, allocatableCpu: \"2\" }",
        "    - name: dc1-c\n      nodes: []",
        "sidecar: { maxConcurrency: 24, queueSize: 64, queueTimeout: 500ms }",
        "rollout: { maxSurge: 0, maxUnavailable: 100%, minReadySeconds: 0s }",
        "preStop: { exec: [\"/bin/sh\", \"-c\", \"sleep 15\"] }",
        "readinessProbe: { period: 1s }",
        "metric: { reporter: destination, targetAverageValue: 10 }",
        "FILL IN targetAverageValue",
        "- { name: from-dc1-a, zone: dc1-a, rate: 10 }    # FILL IN",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
    assert!(
        !text.contains("from-dc1-c"),
        "no generator in a zone without workers"
    );
    assert!(
        notes.contains("approximated    service.rollout: strategy Recreate"),
        "{notes}"
    );
}

#[test]
fn rates_choose_the_generators_and_unknown_zones_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        fixture("kubeadm-nodes.yaml"),
        fixture("kubeadm-service.yaml"),
        fixture("kubeadm-objects.yaml"),
    ];
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    let out = dir.path().join("s.yaml");
    let notes = import(&files, "search", &out, &["--rate", "dc1-a=150,dc1-b=75.5"]);
    let text = text_of(&out);
    assert!(text.contains("- { name: from-dc1-a, zone: dc1-a, rate: 150 }    # --rate"));
    assert!(text.contains("- { name: from-dc1-b, zone: dc1-b, rate: 75.5 }    # --rate"));
    assert!(!notes.contains("load.generators"), "{notes}");
    let mut args = vec!["import", "--from"];
    args.extend_from_slice(&files);
    args.extend_from_slice(&["--service", "search", "--rate", "dc1-x=5"]);
    let output = harness(&args);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--rate dc1-x=…: dc1-x is not a zone of the nodes (dc1-a, dc1-b, dc1-c)"),
        "{stderr}"
    );
}

#[test]
fn refusals_name_what_is_missing_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = fixture("kubeadm-nodes.yaml");
    let service = fixture("kubeadm-service.yaml");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["import", "--from", &nodes, "--service", "search"],
            "no Service search in the objects (Services found: none)",
        ),
        (
            vec!["import", "--from", &nodes, &service, "--service", "search"],
            "no Deployment in namespace default has pods that Service search's selector {app=search} matches",
        ),
        (
            vec!["import", "--from", &service, "--service", "nope"],
            "no Service nope in the objects (Services found: default/search)",
        ),
        (
            vec!["import", "--context", "prod-eks", "--service", "search"],
            "--context prod-eks: the harness only talks to clusters it created",
        ),
        (
            vec![
                "import",
                "--from",
                &nodes,
                "--service",
                "x",
                "--rate",
                "a=-1",
            ],
            "the rate must be a number above 0",
        ),
    ];
    for (args, expected) in cases {
        let output = harness(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
    // An HPA of autoscaling/v1 is named with the command that prints v2.
    let v1 = dir.path().join("hpa-v1.yaml");
    std::fs::write(
        &v1,
        "apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\nmetadata: {name: search}\nspec: {scaleTargetRef: {kind: Deployment, name: search}, maxReplicas: 3}\n",
    )
    .unwrap();
    let v1 = v1.display().to_string();
    let output = harness(&["import", "--from", &v1, "--service", "search"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "{v1}:1: a HorizontalPodAutoscaler of autoscaling/v1"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("kubectl get hpa.v2.autoscaling -o yaml"),
        "{stderr}"
    );
    // A bad field in a List item names the file, the List's line, the item and the object.
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "# header\napiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: n1}\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: d}\n  spec: {replicas: many}\n",
    )
    .unwrap();
    let bad = bad.display().to_string();
    let output = harness(&["import", "--from", &bad, "--service", "s"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr.contains(&format!("{bad}:2: items[1] (Deployment d): cannot read it")),
        "{stderr}"
    );
    // An existing output file is kept unless --force.
    let existing = dir.path().join("exists.yaml");
    std::fs::write(&existing, "keep").unwrap();
    let existing_text = existing.display().to_string();
    let output = harness(&[
        "import",
        "--from",
        &nodes,
        "--service",
        "x",
        "-o",
        &existing_text,
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "keep");
}

#[test]
fn a_placement_the_model_cannot_reproduce_is_said() {
    // The slices put 3 endpoints in dc1-a and 1 in dc1-b; the zone spread constraint places 2+2.
    let dir = tempfile::tempdir().unwrap();
    let slices = std::fs::read_to_string(fixture("kubeadm-endpointslices.yaml"))
        .unwrap()
        .replace(
            "nodeName: worker-b1\n  zone: dc1-b",
            "nodeName: worker-a3\n  zone: dc1-a",
        );
    assert!(slices.contains("worker-a3"), "the fixture's layout changed");
    let moved = dir.path().join("slices.yaml");
    std::fs::write(&moved, slices).unwrap();
    let deployment_only = dir.path().join("dep.yaml");
    let objects = std::fs::read_to_string(fixture("kubeadm-objects.yaml")).unwrap();
    let without_slice: String = objects
        .split("\n---\n")
        .filter(|doc| !doc.contains("kind: EndpointSlice"))
        .collect::<Vec<_>>()
        .join("\n---\n");
    std::fs::write(&deployment_only, without_slice).unwrap();
    let out = dir.path().join("s.yaml");
    let nodes = fixture("kubeadm-nodes.yaml");
    let service = fixture("kubeadm-service.yaml");
    let notes = import(
        &[
            &nodes,
            &service,
            &deployment_only.display().to_string(),
            &moved.display().to_string(),
        ],
        "search",
        &out,
        &[],
    );
    assert!(
        notes.contains("the scheduler model places the pods as dc1-a 2, dc1-b 2 (seed 1) where the EndpointSlices have ready endpoints dc1-a 3, dc1-b 1"),
        "{notes}"
    );
    assert!(text_of(&out).contains(
        "# - service.placement (approximated): at load start the scheduler model places"
    ));
}

#[test]
fn the_eks_import_runs_on_the_local_target() {
    let _one = support::ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    support::require_workload_bins();
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("checkout.yaml");
    let files = [
        fixture("eks-nodes.yaml"),
        fixture("eks-service.yaml"),
        fixture("eks-workloads.yaml"),
        fixture("eks-endpointslices.yaml"),
    ];
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    import(
        &files,
        "checkout-api",
        &scenario,
        &["--rate", "us-east-1a=30,us-east-1c=30"],
    );
    let (code, summary) = run_briefly(&scenario, dir.path());
    assert_eq!(code, Some(0), "{summary:#}");
    // Six pods, two per zone, on nodes the imported placement allows; 60 rps for 4 s.
    let pods = summary["pods"].as_array().unwrap();
    assert_eq!(pods.len(), 6);
    assert!(
        pods.iter()
            .all(|p| p["node"] != "ip-10-0-38-52.ec2.internal"),
        "the tainted node"
    );
    let attempted = summary["totals"]["attempted"].as_u64().unwrap();
    assert!((220..=260).contains(&attempted), "{attempted}");
    assert_eq!(summary["audit"]["held"], true);
}

#[test]
fn an_imported_scenario_runs_on_the_local_target() {
    let _one = support::ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    support::require_workload_bins();
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("search.yaml");
    let (nodes, service, objects) = (
        fixture("kubeadm-nodes.yaml"),
        fixture("kubeadm-service.yaml"),
        fixture("kubeadm-objects.yaml"),
    );
    import(
        &[&nodes, &service, &objects],
        "search",
        &scenario,
        &["--rate", "dc1-a=40,dc1-b=40"],
    );
    let (code, summary) = run_briefly(&scenario, dir.path());
    assert_eq!(code, Some(0), "{summary:#}");
    // 80 rps for 4 s, answered by the four pods; the run's own audit held.
    let attempted = summary["totals"]["attempted"].as_u64().unwrap();
    assert!((300..=340).contains(&attempted), "{attempted} requests");
    assert_eq!(summary["totals"]["errorRate"].as_f64(), Some(0.0));
    assert_eq!(summary["audit"]["held"], true);
    // Hints on, as the objects say: each zone's callers were answered by its own pods only.
    for (origin, row) in summary["trafficMatrix"].as_object().unwrap() {
        for pod in row.as_object().unwrap().keys() {
            assert_eq!(
                support::pod_zone(&summary, pod),
                origin,
                "{:#}",
                summary["trafficMatrix"]
            );
        }
    }
}

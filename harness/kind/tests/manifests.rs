//! The run's Kubernetes objects: golden files (`UPDATE_GOLDENS=1 cargo test -p harness-kind
//! --test manifests` to rewrite them after an intended change), Pod Security "restricted" on
//! every pod and container, the workloads' arguments equal to the local target's, routing,
//! placement and generator pinning as the scenario says.

use std::path::PathBuf;

use harness_core::engine::TimeScale;
use harness_core::scenario::load_scenario;
use harness_core::workload_args::{flagsvc_args, sidecar_args};
use harness_kind::images::{BuiltImage, Manifest};
use harness_kind::manifests::{
    self, FLAGSVC_PORT, Manifests, POD_SECURITY_ENFORCE, RUN_ID_LABEL, RenderInput,
    SIDECAR_ADMIN_PORT, SIDECAR_PORT,
};
use k8s_openapi::api::core::v1::PodSpec;

fn repo(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

fn images() -> Manifest {
    let image = |w: &str, sha: &str| BuiltImage {
        workload: w.into(),
        image: format!("harness/{w}:sha256-{sha}"),
        binary_sha256: format!("{sha}{}", "0".repeat(48)),
        binary: PathBuf::from(format!("/repo/target/x86_64-unknown-linux-gnu/image/{w}")),
        built: true,
    };
    Manifest::new(
        "x86_64-unknown-linux-gnu",
        vec![
            image("flagsvc", "1111111111111111"),
            image("sidecar", "2222222222222222"),
            image("loadgen", "3333333333333333"),
        ],
    )
}

fn render(path: &str, variant: Option<&str>) -> Manifests {
    let scenario = load_scenario(&repo(path), variant).unwrap();
    manifests::render(
        &scenario,
        &RenderInput {
            run_id: "golden",
            images: &images(),
            service_host: manifests::service_dns_name(&scenario, "golden"),
            seed: 1,
        },
    )
    .unwrap()
}

const CASES: &[(&str, Option<&str>, &str)] = &[
    (
        "scenarios/topology-skew.yaml",
        None,
        "manifests-topology-skew.yaml",
    ),
    (
        "scenarios/topology-skew.yaml",
        Some("prefer-close"),
        "manifests-topology-skew-prefer-close.yaml",
    ),
    (
        "scenarios/rollout-502.yaml",
        None,
        "manifests-rollout-502.yaml",
    ),
];

#[test]
fn rendered_manifests_match_the_goldens() {
    let update = std::env::var_os("UPDATE_GOLDENS").is_some();
    let mut differ = Vec::new();
    for (path, variant, golden) in CASES {
        let text = render(path, *variant).to_yaml();
        let golden_path = repo("harness/kind/tests/golden").join(golden);
        if update {
            std::fs::write(&golden_path, &text).unwrap();
        }
        let expected = std::fs::read_to_string(&golden_path).unwrap_or_default();
        if text != expected {
            differ.push(format!(
                "{golden}: rendered manifests differ from the golden file\n--- rendered ---\n{text}"
            ));
        }
    }
    assert!(
        differ.is_empty(),
        "{}\nIf the change is intended: UPDATE_GOLDENS=1 cargo test -p harness-kind --test manifests",
        differ.join("\n")
    );
}

/// Every document parses back as the object it was, and the stream is in apply order.
#[test]
fn documents_parse_back_in_apply_order() {
    let m = render("scenarios/topology-skew.yaml", None);
    let names: Vec<String> = m.documents().into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        [
            "01-namespace-harness-golden",
            "02-service-flagsvc",
            "03-deployment-flagsvc",
            "04-pod-gen-ingress-2a",
        ]
    );
    let docs = m.documents();
    let ns: k8s_openapi::api::core::v1::Namespace = serde_saphyr::from_str(&docs[0].1).unwrap();
    assert_eq!(ns, m.namespace);
    let svc: k8s_openapi::api::core::v1::Service = serde_saphyr::from_str(&docs[1].1).unwrap();
    assert_eq!(svc, m.service);
    let dep: k8s_openapi::api::apps::v1::Deployment = serde_saphyr::from_str(&docs[2].1).unwrap();
    assert_eq!(dep, m.deployment);
    let pod: k8s_openapi::api::core::v1::Pod = serde_saphyr::from_str(&docs[3].1).unwrap();
    assert_eq!(pod, m.generators[0]);
    let stream = m.to_yaml();
    assert_eq!(stream.matches("\n---\n").count() + 1, 4, "{stream}");
    assert!(stream.contains("apiVersion: apps/v1"));
}

fn restricted(spec: &PodSpec, what: &str) {
    let pod = spec.security_context.as_ref().expect(what);
    assert_eq!(pod.run_as_non_root, Some(true), "{what}");
    assert!(pod.run_as_user.is_some_and(|u| u > 0), "{what}");
    assert_eq!(
        pod.seccomp_profile.as_ref().map(|s| s.type_.as_str()),
        Some("RuntimeDefault"),
        "{what}"
    );
    assert!(!spec.containers.is_empty());
    for c in &spec.containers {
        let what = format!("{what} container {}", c.name);
        let sc = c.security_context.as_ref().expect(&what);
        assert_eq!(sc.allow_privilege_escalation, Some(false), "{what}");
        assert_eq!(sc.run_as_non_root, Some(true), "{what}");
        assert!(sc.run_as_user.is_some_and(|u| u > 0), "{what}");
        assert_eq!(sc.read_only_root_filesystem, Some(true), "{what}");
        assert_eq!(
            sc.capabilities.as_ref().and_then(|c| c.drop.clone()),
            Some(vec!["ALL".to_owned()]),
            "{what}"
        );
        assert_eq!(sc.capabilities.as_ref().and_then(|c| c.add.clone()), None);
        assert_eq!(sc.privileged, None, "{what}");
        assert_eq!(c.image_pull_policy.as_deref(), Some("Never"), "{what}");
        let image = c.image.as_deref().unwrap();
        assert!(
            image.starts_with("harness/") && image.contains(":sha256-"),
            "{what}: {image}"
        );
    }
    assert!(
        spec.host_network.is_none() && spec.host_pid.is_none(),
        "{what}"
    );
}

#[test]
fn every_pod_meets_pod_security_restricted() {
    for (path, variant, _) in CASES {
        let m = render(path, *variant);
        let labels = m.namespace.metadata.labels.clone().unwrap();
        assert_eq!(labels[POD_SECURITY_ENFORCE], "restricted");
        assert_eq!(labels[RUN_ID_LABEL], "golden");
        let template = m.deployment.spec.template.spec.as_ref().unwrap();
        restricted(template, &format!("{path}: deployment"));
        for pod in &m.generators {
            restricted(pod.spec.as_ref().unwrap(), &format!("{path}: generator"));
            assert_eq!(
                pod.metadata.labels.as_ref().unwrap()[RUN_ID_LABEL],
                "golden"
            );
        }
        for meta in [&m.deployment.metadata, &m.service.metadata] {
            assert_eq!(meta.labels.as_ref().unwrap()[RUN_ID_LABEL], "golden");
            assert_eq!(meta.namespace.as_deref(), Some("harness-golden"));
        }
    }
}

#[test]
fn the_workloads_get_the_local_targets_arguments() {
    let scenario = load_scenario(&repo("scenarios/topology-skew.yaml"), None).unwrap();
    let m = render("scenarios/topology-skew.yaml", None);
    let spec = m.deployment.spec.template.spec.unwrap();
    let svc = &scenario.service;
    let local = |port| std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let any = |port| std::net::SocketAddr::from(([0, 0, 0, 0], port));
    let flagsvc = flagsvc_args(
        svc.service_time,
        svc.sse,
        &svc.app,
        TimeScale::REAL,
        local(FLAGSVC_PORT),
    );
    assert_eq!(
        spec.containers[0].args.as_ref().unwrap(),
        &flagsvc.to_args()
    );
    let sidecar = sidecar_args(
        &svc.sidecar.unwrap(),
        &svc.app,
        TimeScale::REAL,
        any(SIDECAR_PORT),
        any(SIDECAR_ADMIN_PORT),
        local(FLAGSVC_PORT),
    );
    assert_eq!(
        spec.containers[1].args.as_ref().unwrap(),
        &sidecar.to_args()
    );
    // The probe is the scenario's, on the sidecar's /readyz.
    let probe = spec.containers[1].readiness_probe.clone().unwrap();
    assert_eq!(probe.period_seconds, Some(1));
    assert_eq!(probe.failure_threshold, Some(3));
    assert_eq!(probe.http_get.unwrap().path.as_deref(), Some("/readyz"));
    assert_eq!(m.deployment.metadata.name.as_deref(), Some("flagsvc"));

    let args = m.generators[0].spec.as_ref().unwrap().containers[0]
        .args
        .clone()
        .unwrap();
    let url = args.iter().position(|a| a == "--url").unwrap();
    assert_eq!(
        args[url + 1],
        "http://flagsvc.harness-golden.svc.cluster.local:80/flags/checkout"
    );
    assert!(!args.contains(&"--output-file".to_owned()), "{args:?}");
    let rate = args.iter().position(|a| a == "--rate").unwrap();
    assert_eq!(args[rate + 1], "100");
    let streams = args.iter().position(|a| a == "--sse-streams").unwrap();
    assert_eq!(args[streams + 1], "38");
}

#[test]
fn routing_and_placement_are_the_scenarios() {
    use kube_model::reconcile::ANNOTATION_TOPOLOGY_MODE;
    let auto = render("scenarios/topology-skew.yaml", None);
    let annotations = auto.service.metadata.annotations.clone().unwrap();
    assert_eq!(annotations[ANNOTATION_TOPOLOGY_MODE], "Auto");
    assert_eq!(
        auto.service.spec.as_ref().unwrap().traffic_distribution,
        None
    );
    let close = render("scenarios/topology-skew.yaml", Some("prefer-close"));
    assert_eq!(close.service.metadata.annotations, None);
    assert_eq!(
        close
            .service
            .spec
            .as_ref()
            .unwrap()
            .traffic_distribution
            .as_deref(),
        Some("PreferClose")
    );
    let fixed = render("scenarios/topology-skew.yaml", Some("fixed"));
    assert_eq!(fixed.service.metadata.annotations, None);
    assert_eq!(
        fixed.service.spec.as_ref().unwrap().traffic_distribution,
        None
    );
    let port = fixed.service.spec.as_ref().unwrap().ports.clone().unwrap()[0].clone();
    assert_eq!(
        port.target_port,
        Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(8081))
    );

    let node_terms = |spec: &PodSpec| {
        spec.affinity
            .clone()
            .unwrap()
            .node_affinity
            .unwrap()
            .required_during_scheduling_ignored_during_execution
            .unwrap()
            .node_selector_terms[0]
            .match_expressions
            .clone()
            .unwrap()
            .into_iter()
            .map(|e| (e.key, e.operator, e.values.unwrap_or_default()))
            .collect::<Vec<_>>()
    };
    let template = auto.deployment.spec.template.spec.clone().unwrap();
    assert_eq!(
        node_terms(&template),
        [(
            "topology.kubernetes.io/zone".to_owned(),
            "In".to_owned(),
            vec!["ap-northeast-2c".to_owned()]
        )]
    );
    let generator = auto.generators[0].spec.clone().unwrap();
    assert_eq!(
        node_terms(&generator),
        [(
            "topology.kubernetes.io/zone".to_owned(),
            "In".to_owned(),
            vec!["ap-northeast-2a".to_owned()]
        )]
    );
    assert_eq!(generator.restart_policy.as_deref(), Some("Never"));
}

#[test]
fn bad_run_ids_and_missing_images_are_refused() {
    let scenario = load_scenario(&repo("scenarios/topology-skew.yaml"), None).unwrap();
    let images = images();
    let input = |run_id| RenderInput {
        run_id,
        images: &images,
        service_host: "10.96.0.10".into(),
        seed: 1,
    };
    for bad in ["", "Upper", "a_b", "-a", &"x".repeat(60)] {
        let err = manifests::render(&scenario, &input(bad)).unwrap_err();
        assert!(err.to_string().contains("run id"), "{err}");
    }
    let empty = Manifest::new("x86_64-unknown-linux-gnu", Vec::new());
    let err = manifests::render(
        &scenario,
        &RenderInput {
            run_id: "r",
            images: &empty,
            service_host: "10.96.0.10".into(),
            seed: 1,
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("make images"), "{err}");
}

//! The run's Kubernetes objects: golden files (`UPDATE_GOLDENS=1 cargo test -p harness-kind
//! --test manifests` to rewrite them after an intended change), Pod Security "restricted" on
//! every pod and container, the workloads' arguments equal to the local target's, routing,
//! placement and generator pinning as the scenario says; the load balancer's objects and the
//! readiness gate; the `rollout` patch; durations at the scenario's time scale, refused where
//! a whole-second field does not scale.

#[path = "support/files.rs"]
mod files;

use std::path::PathBuf;

use files::{load, repo};
use harness_core::clock::TimeScale;
use harness_core::scenario::model::Scenario;
use harness_core::workload_args::{flagsvc_args, sidecar_args};
use harness_kind::images::{BuiltImage, Manifest};
use harness_kind::manifests::{
    self, FLAGSVC_PORT, Manifests, POD_SECURITY_ENFORCE, RUN_ID_LABEL, RenderInput,
    SIDECAR_ADMIN_PORT, SIDECAR_PORT,
};
use k8s_openapi::api::core::v1::{Pod, PodSpec};

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
            image("loadbalancer", "4444444444444444"),
        ],
    )
}

fn input<'a>(scenario: &Scenario, images: &'a Manifest, scale: TimeScale) -> RenderInput<'a> {
    RenderInput {
        run_id: "golden",
        images,
        service_host: manifests::service_dns_name(scenario, "golden"),
        lb_host: manifests::lb_dns_name("golden"),
        ingress_host: manifests::ingress_dns_name("golden"),
        time_scale: scale,
        seed: 1,
    }
}

/// The scenario's objects at its own time scale.
fn render(path: &str, variant: Option<&str>) -> Manifests {
    let scenario = load(path, variant);
    let scale = TimeScale::new(scenario.time_scale).unwrap();
    manifests::render(&scenario, &input(&scenario, &images(), scale)).unwrap()
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
    (
        "scenarios/rollout-502.yaml",
        Some("readiness-gate"),
        "manifests-rollout-502-readiness-gate.yaml",
    ),
    (
        "scenarios/rollout-502.yaml",
        Some("distroless"),
        "manifests-rollout-502-distroless.yaml",
    ),
];

/// The first generator's command line.
fn generator_args(generators: &[Pod]) -> Vec<String> {
    generators[0].spec.as_ref().unwrap().containers[0]
        .args
        .clone()
        .unwrap()
}

/// The value after `flag` in `args`.
fn value_of<'a>(args: &'a [String], flag: &str) -> &'a str {
    let at = args.iter().position(|a| a == flag).unwrap();
    &args[at + 1]
}

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
        if let Some(lb) = &m.load_balancer {
            let spec = lb.deployment.spec.template.spec.as_ref().unwrap();
            restricted(spec, &format!("{path}: load balancer"));
        }
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
    let scenario = load("scenarios/topology-skew.yaml", None);
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
    let mut sidecar = sidecar_args(
        &svc.sidecar.unwrap(),
        &svc.app,
        TimeScale::REAL,
        any(SIDECAR_PORT),
        any(SIDECAR_ADMIN_PORT),
        local(FLAGSVC_PORT),
    );
    // In a pod the final counters go to the container's termination message, where the
    // pod watch reads them (the local target gives a file of the run).
    sidecar.termination_log = Some("/dev/termination-log".into());
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

    let args = generator_args(&m.generators);
    assert_eq!(
        value_of(&args, "--url"),
        "http://flagsvc.harness-golden.svc.cluster.local:80/flags/checkout"
    );
    assert!(!args.contains(&"--output-file".to_owned()), "{args:?}");
    assert_eq!(value_of(&args, "--rate"), "100");
    assert_eq!(value_of(&args, "--sse-streams"), "38");
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
    let scenario = load("scenarios/topology-skew.yaml", None);
    let images = images();
    let input = |run_id| RenderInput {
        run_id,
        images: &images,
        service_host: "10.96.0.10".into(),
        lb_host: "10.96.0.11".into(),
        ingress_host: "10.96.0.12".into(),
        time_scale: TimeScale::REAL,
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
            lb_host: "10.96.0.11".into(),
            ingress_host: "10.96.0.12".into(),
            time_scale: TimeScale::REAL,
            seed: 1,
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("make images"), "{err}");
}

/// rollout-502 on kind: the load balancer's objects in apply order with the contract's RBAC,
/// its flags the local target's plus the in-cluster ones, generators sending to it, and the
/// readiness gate on the service's pods only in the readiness-gate variant.
#[test]
fn the_load_balancer_runs_in_the_cluster() {
    use harness_core::workload_args::loadbalancer_args;
    let m = render("scenarios/rollout-502.yaml", Some("readiness-gate"));
    let names: Vec<String> = m.documents().into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        [
            "01-namespace-harness-golden",
            "02-service-flagsvc",
            "03-serviceaccount-loadbalancer",
            "04-role-loadbalancer",
            "05-rolebinding-loadbalancer",
            "06-service-loadbalancer",
            "07-deployment-loadbalancer",
            "08-deployment-flagsvc",
            "09-pod-gen-alb-clients",
        ]
    );
    let lb = m.load_balancer.as_ref().unwrap();
    let rules: Vec<(String, String, Vec<String>)> = lb
        .role
        .rules
        .clone()
        .unwrap()
        .into_iter()
        .map(|r| {
            (
                r.api_groups.unwrap().join(","),
                r.resources.unwrap().join(","),
                r.verbs,
            )
        })
        .collect();
    let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(
        rules,
        [
            (
                "discovery.k8s.io".into(),
                "endpointslices".into(),
                v(&["list", "watch"])
            ),
            ("".into(), "services".into(), v(&["get"])),
            ("".into(), "pods".into(), v(&["get", "list", "watch"])),
            ("".into(), "pods/status".into(), v(&["patch"])),
        ]
    );
    let subject = &lb.role_binding.subjects.as_ref().unwrap()[0];
    assert_eq!(
        (
            subject.kind.as_str(),
            subject.name.as_str(),
            subject.namespace.as_deref()
        ),
        ("ServiceAccount", "loadbalancer", Some("harness-golden"))
    );
    assert_eq!(lb.role_binding.role_ref.name, "loadbalancer");
    let spec = lb.deployment.spec.template.spec.as_ref().unwrap();
    assert_eq!(spec.service_account_name.as_deref(), Some("loadbalancer"));
    assert_eq!(lb.deployment.spec.replicas, Some(1));
    let scenario = load("scenarios/rollout-502.yaml", Some("readiness-gate"));
    let any = |port| std::net::SocketAddr::from(([0, 0, 0, 0], port));
    let mut want = loadbalancer_args(
        scenario.load_balancer.as_ref().unwrap(),
        TimeScale::new(0.1).unwrap(),
        any(8080),
        any(9901),
    )
    .to_args();
    want.extend(v(&[
        "--watch-service",
        "flagsvc",
        "--target-port",
        "8080",
        "--readiness-gate",
        "target-health.harness.io/flagsvc",
    ]));
    let container = &spec.containers[0];
    assert_eq!(container.args.as_ref().unwrap(), &want);
    // 60 s registration lag at 0.1: 6 s, as locally.
    let lag = want.iter().position(|a| a == "--registration-lag").unwrap();
    assert_eq!(want[lag + 1], "6000ms");
    let env = container.env.as_ref().unwrap();
    let ns = env.iter().find(|e| e.name == "POD_NAMESPACE").unwrap();
    assert_eq!(
        ns.value_from
            .as_ref()
            .unwrap()
            .field_ref
            .as_ref()
            .unwrap()
            .field_path,
        "metadata.namespace"
    );
    let port = lb.service.spec.as_ref().unwrap().ports.clone().unwrap()[0].clone();
    assert_eq!(port.port, 80);
    assert_eq!(
        port.target_port,
        Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(8080))
    );
    let args = generator_args(&m.generators);
    assert_eq!(
        value_of(&args, "--url"),
        "http://loadbalancer.harness-golden.svc.cluster.local:80/flags/demo"
    );
    let gates = m
        .deployment
        .spec
        .template
        .spec
        .as_ref()
        .unwrap()
        .readiness_gates
        .clone();
    assert_eq!(
        gates.unwrap()[0].condition_type,
        "target-health.harness.io/flagsvc"
    );
    let fixed = render("scenarios/rollout-502.yaml", Some("fixed"));
    assert!(
        fixed
            .deployment
            .spec
            .template
            .spec
            .unwrap()
            .readiness_gates
            .is_none()
    );
    let lb_args = fixed
        .load_balancer
        .unwrap()
        .deployment
        .spec
        .template
        .spec
        .unwrap()
        .containers[0]
        .args
        .clone()
        .unwrap();
    assert!(
        !lb_args.contains(&"--readiness-gate".to_owned()),
        "{lb_args:?}"
    );
    // No load balancer in the scenario: none in the cluster.
    assert!(
        render("scenarios/topology-skew.yaml", None)
            .load_balancer
            .is_none()
    );
}

/// At rollout-502's time scale 0.1 the whole-second fields are scaled: preStop sleep 30 s →
/// 3, grace period 60 s → 6, probe period 10 s → 1; at 0.05 the probe period would be 0.5 s,
/// which Kubernetes cannot hold: refused naming the field and a scale that works.
#[test]
fn durations_are_scaled_and_unscalable_ones_refused() {
    let m = render("scenarios/rollout-502.yaml", Some("fixed"));
    let spec = m.deployment.spec.template.spec.clone().unwrap();
    assert_eq!(spec.termination_grace_period_seconds, Some(6));
    let app = &spec.containers[0];
    let sleep = app
        .lifecycle
        .clone()
        .unwrap()
        .pre_stop
        .unwrap()
        .sleep
        .unwrap();
    assert_eq!(sleep.seconds, 3);
    assert_eq!(app.readiness_probe.clone().unwrap().period_seconds, Some(1));
    // The not-ready toleration (300 s unless the scenario says otherwise) scales too, so the
    // pods carry their own instead of the admission plugin's 300 s.
    let tolerations: Vec<(String, Option<i64>)> = spec
        .tolerations
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(|t| {
            assert_eq!(t.effect.as_deref(), Some("NoExecute"));
            assert_eq!(t.operator.as_deref(), Some("Exists"));
            (t.key.unwrap(), t.toleration_seconds)
        })
        .collect();
    assert_eq!(
        tolerations,
        [
            ("node.kubernetes.io/not-ready".to_owned(), Some(30)),
            ("node.kubernetes.io/unreachable".to_owned(), Some(30)),
        ]
    );
    let args = generator_args(&m.generators);
    assert_eq!(
        value_of(&args, "--duration"),
        "27000ms",
        "(30 s + 4 min) × 0.1"
    );

    let scenario = load("scenarios/rollout-502.yaml", Some("fixed"));
    let images = images();
    let err = manifests::render(
        &scenario,
        &input(&scenario, &images, TimeScale::new(0.05).unwrap()),
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("service.readinessProbe.period: 10s at time scale 0.05 is 0.5 s"),
        "{text}"
    );
    assert!(text.contains("--time-scale 0.1"), "{text}");
}

/// `service.notReadyToleration` reaches the pods as their not-ready and unreachable
/// tolerations; at its default and time scale 1 the pods carry none (the admission plugin adds
/// the same 300 s).
#[test]
fn the_not_ready_toleration_is_the_pods_own_only_when_it_differs() {
    let mut scenario = load("scenarios/topology-skew.yaml", None);
    let images = images();
    let seconds = |scenario: &Scenario| -> Vec<Option<i64>> {
        let m = manifests::render(scenario, &input(scenario, &images, TimeScale::REAL)).unwrap();
        m.deployment
            .spec
            .template
            .spec
            .unwrap()
            .tolerations
            .unwrap_or_default()
            .into_iter()
            .map(|t| t.toleration_seconds)
            .collect()
    };
    assert_eq!(seconds(&scenario), Vec::<Option<i64>>::new());
    scenario.service.not_ready_toleration = std::time::Duration::from_secs(60);
    assert_eq!(seconds(&scenario), [Some(60), Some(60)]);
}

/// The `rollout` action's patch: `restart` only touches the template's annotation; a changed
/// preStop and grace period patch every container (by name) and the grace period, at the
/// run's time scale; removing the hook sends `lifecycle: null`.
#[test]
fn the_rollout_patch_changes_the_pod_template() {
    use harness_core::scenario::model::{PreStop, RolloutChange};
    use std::time::Duration;
    let scenario = load("scenarios/rollout-502.yaml", None);
    let images = images();
    let input = input(&scenario, &images, TimeScale::new(0.1).unwrap());
    let restart = RolloutChange {
        restart: true,
        drain_delay: None,
        pre_stop: None,
        grace_period: None,
    };
    let at = "2026-12-01T15:00:00.000Z";
    let body = manifests::rollout_patch(&scenario, &restart, &input, at).unwrap();
    assert_eq!(
        body,
        serde_json::json!({ "spec": { "template": { "metadata": {
            "annotations": { manifests::RESTARTED_AT: at } } } } })
    );
    let change = RolloutChange {
        restart: false,
        drain_delay: None,
        pre_stop: Some(PreStop::Sleep(Duration::from_secs(30))),
        grace_period: Some(Duration::from_secs(60)),
    };
    let body = manifests::rollout_patch(&scenario, &change, &input, at).unwrap();
    let spec = &body["spec"]["template"]["spec"];
    assert_eq!(spec["terminationGracePeriodSeconds"], 6);
    assert_eq!(spec["containers"][0]["name"], "flagsvc");
    assert_eq!(
        spec["containers"][0]["lifecycle"]["preStop"]["sleep"]["seconds"],
        3
    );
    assert!(spec["containers"][0]["args"].is_array());
    let fixed = manifests::revised(&scenario, &change);
    let removed = RolloutChange {
        restart: false,
        drain_delay: None,
        pre_stop: Some(PreStop::None),
        grace_period: None,
    };
    let body = manifests::rollout_patch(&fixed, &removed, &input, at).unwrap();
    assert!(body["spec"]["template"]["spec"]["containers"][0]["lifecycle"].is_null());
    assert_eq!(
        body["spec"]["template"]["spec"]["terminationGracePeriodSeconds"],
        6
    );
}

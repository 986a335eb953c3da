//! The cluster lifecycle and the tool checks against recording fakes of `kind` and `docker`:
//! the exact arguments of create, load, kubelet stop/start and delete, errors that carry the
//! pasteable command and its output, and a version check that stops before anything is created
//! and says what to install.

mod support;

use std::path::Path;

use harness_kind::cluster::ClusterPlan;
use harness_kind::exec::ExecError;
use harness_kind::lifecycle::{Cluster, LifecycleError};
use harness_kind::pins::{NODE_IMAGE, Version};
use harness_kind::tools::{self, ToolError};
use support::fakes::{FakeTools, call};
use support::files::load;

#[test]
fn a_cluster_lifecycle_runs_exactly_these_commands() {
    let fakes = FakeTools::new(&["kind", "docker"]);
    let scenario = load("scenarios/topology-skew.yaml", None);
    let plan = ClusterPlan::new(&scenario, 8).unwrap();
    let config = fakes.dir().join("kind-config.yaml");
    let kubeconfig = fakes.dir().join("kubeconfig");
    let cluster = Cluster::new(
        &plan.cluster_name,
        Some(kubeconfig.clone()),
        fakes.toolbox(),
    )
    .unwrap();

    assert!(!cluster.exists().unwrap());
    cluster.create(&config, &plan.node_image).unwrap();
    let images = [
        "harness/flagsvc:sha256-0123456789abcdef".to_owned(),
        "harness/sidecar:sha256-fedcba9876543210".to_owned(),
    ];
    cluster.load_images(&images).unwrap();
    let spare = plan.node("a-3").unwrap();
    cluster.stop_kubelet(&spare.kind_name).unwrap();
    cluster.start_kubelet(&spare.kind_name).unwrap();
    cluster.delete().unwrap();

    let (config, kubeconfig) = (
        config.display().to_string(),
        kubeconfig.display().to_string(),
    );
    let mut expected = vec![
        call("kind get clusters"),
        vec![
            "kind".into(),
            "create".into(),
            "cluster".into(),
            "--name".into(),
            "harness-topology-skew".into(),
            "--config".into(),
            config,
            "--image".into(),
            NODE_IMAGE.into(),
            "--kubeconfig".into(),
            kubeconfig.clone(),
        ],
        call(
            "kind load docker-image harness/flagsvc:sha256-0123456789abcdef \
             harness/sidecar:sha256-fedcba9876543210 --name harness-topology-skew",
        ),
        call("docker exec harness-topology-skew-worker5 systemctl stop kubelet"),
        call("docker exec harness-topology-skew-worker5 systemctl start kubelet"),
        call("kind delete cluster --name harness-topology-skew --kubeconfig"),
    ];
    expected.last_mut().unwrap().push(kubeconfig);
    assert_eq!(fakes.calls(), expected);
}

#[test]
fn existing_clusters_are_read_from_kind_get_clusters() {
    let mut fakes = FakeTools::new(&["kind"]);
    fakes.respond("kind get clusters", "kind\nharness-topology-skew\n", "", 0);
    let cluster = Cluster::new("harness-topology-skew", None, fakes.toolbox()).unwrap();
    assert!(cluster.exists().unwrap());
    let other = Cluster::new("harness-rollout-502", None, fakes.toolbox()).unwrap();
    assert!(!other.exists().unwrap());
}

#[test]
fn a_failed_create_reports_the_pasteable_command_and_kinds_output() {
    let mut fakes = FakeTools::new(&["kind"]);
    fakes.respond(
        "kind create cluster",
        "Creating cluster \"harness-x\" ...\n",
        "ERROR: failed to create cluster: node(s) already exist for a cluster with the name \"harness-x\"\n",
        1,
    );
    let cluster = Cluster::new("harness-x", None, fakes.toolbox()).unwrap();
    let err = cluster
        .create(Path::new("/tmp/my config.yaml"), NODE_IMAGE)
        .unwrap_err();
    let LifecycleError::Exec(ExecError::Failed {
        command, stderr, ..
    }) = &err
    else {
        panic!("unexpected {err:?}")
    };
    assert_eq!(
        command,
        &format!(
            "kind create cluster --name harness-x --config '/tmp/my config.yaml' --image {NODE_IMAGE}"
        )
    );
    assert!(stderr.contains("already exist"));
    let text = err.to_string();
    assert!(text.contains("exit status 1"), "{text}");
    assert!(text.contains(command.as_str()), "{text}");
    assert!(text.contains("Creating cluster"), "{text}");
}

#[test]
fn clusters_the_harness_did_not_create_are_never_touched() {
    let fakes = FakeTools::new(&["kind"]);
    assert!(matches!(
        Cluster::new("kind", None, fakes.toolbox()),
        Err(LifecycleError::NotOurs(_))
    ));
    let cluster = Cluster::new("harness-x", None, fakes.toolbox()).unwrap();
    assert!(matches!(
        cluster.stop_kubelet("prod-worker"),
        Err(LifecycleError::NotOurs(_))
    ));
    assert!(fakes.calls().is_empty());
}

fn fakes_answering(kind: &str, docker: (&str, &str, i32)) -> FakeTools {
    let mut fakes = FakeTools::new(&["kind", "docker"]);
    fakes.respond("kind version", kind, "", 0);
    fakes.respond("docker version", docker.0, docker.1, docker.2);
    fakes
}

#[test]
fn the_version_check_passes_with_supported_tools() {
    let fakes = fakes_answering("kind v0.33.0 go1.25.1 linux/amd64\n", ("28.2.2\n", "", 0));
    let versions = tools::check(&fakes.toolbox()).unwrap();
    assert_eq!(versions.kind, Version::new(0, 33, 0));
    assert_eq!(versions.docker_engine, Version::new(28, 2, 2));
    assert_eq!(
        fakes.calls(),
        [
            call("docker version --format {{.Server.Version}}"),
            call("kind version")
        ]
    );
}

#[test]
fn the_version_check_says_what_to_install() {
    let old_kind = fakes_answering("kind v0.31.0 go1.24 linux/amd64\n", ("28.2.2\n", "", 0));
    let err = tools::check(&old_kind.toolbox()).unwrap_err();
    assert!(
        matches!(err, ToolError::TooOld { tool: "kind", .. }),
        "{err}"
    );
    assert!(err.to_string().contains("kind 0.31.0 is too old"), "{err}");
    assert!(err.to_string().contains("install kind v0.33.0"), "{err}");

    let old_docker = fakes_answering("kind v0.33.0\n", ("19.03.15\n", "", 0));
    let err = tools::check(&old_docker.toolbox()).unwrap_err();
    assert!(
        err.to_string().contains("Docker Engine 19.3.15 is too old"),
        "{err}"
    );

    let no_daemon = fakes_answering(
        "kind v0.33.0\n",
        (
            "\n",
            "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?\n",
            1,
        ),
    );
    let err = tools::check(&no_daemon.toolbox()).unwrap_err();
    assert!(matches!(err, ToolError::DaemonDown { .. }), "{err}");
    assert!(
        err.to_string().contains("Is the docker daemon running?"),
        "{err}"
    );
    // Nothing but version queries ran.
    assert!(no_daemon.calls().iter().all(|c| c[1] == "version"));

    let no_kind = fakes_answering("", ("28.2.2\n", "", 0));
    no_kind.remove("kind");
    let err = tools::check(&no_kind.toolbox_alone()).unwrap_err();
    assert!(
        matches!(err, ToolError::Missing { tool: "kind", .. }),
        "{err}"
    );
    assert!(
        err.to_string().contains("https://kind.sigs.k8s.io"),
        "{err}"
    );

    let garbled = fakes_answering("kind (devel)\n", ("28.2.2\n", "", 0));
    let err = tools::check(&garbled.toolbox()).unwrap_err();
    assert!(
        matches!(err, ToolError::Unreadable { tool: "kind", .. }),
        "{err}"
    );
}

//! The node image as a kind option and a matrix axis, as a user types it: `harness run
//! --target kind --matrix kind.nodeImage=IMG1,IMG2` through recording fakes of `kind` and
//! `docker` and two scripted API servers (one per cell's cluster, their Nodes reporting
//! different kubelet versions): one `kind create cluster --image` per cell with its own cluster
//! name, each deleted before the next is created, each summary with the Kubernetes its Nodes
//! reported, and the comparison's header with both versions. Then the refusals (a malformed or
//! too old image, an image for a cluster that exists, the axis on the local target, a scenario
//! the image's Kubernetes cannot run), `harness compare` of recorded runs that differ in
//! Kubernetes version and target, `harness plan --target kind --matrix`, and the modelled
//! version a local run records.

#[path = "../../kind/tests/support/mod.rs"]
mod kind_support;
mod support;

use std::path::Path;
use std::process::Output;

use kind_support::api_server::{ApiServer, Reply, Seen};
use kind_support::fake_cluster::handler;
use kind_support::fakes::FakeTools;
use serde_json::{Value, json};
use support::{KIND_IMAGES, harness_command, short_kind_run};

const PINNED: &str =
    "kindest/node:v1.34.11@sha256:44e222ee2132dab25ff87301682f89eb82c7880ea3a1bf543bfe9708fd08d67d";
const OLDER: &str = "kindest/node:v1.33.1";

/// The fake cluster, its Nodes' kubelets reporting `version`.
fn cluster_on(version: &'static str) -> impl Fn(&Seen) -> Reply + Send + Sync + 'static {
    move |seen: &Seen| {
        let reply = handler(seen);
        if seen.method != "GET" || seen.path() != "/api/v1/nodes" || seen.is_watch() {
            return reply;
        }
        let Reply::Json(code, mut list) = reply else {
            return reply;
        };
        for node in list["items"].as_array_mut().into_iter().flatten() {
            node["status"]["nodeInfo"] = json!({
                "kubeletVersion": version, "kubeProxyVersion": version,
                "architecture": "amd64", "bootID": "b", "containerRuntimeVersion": "containerd://2.1.4",
                "kernelVersion": "6.8.0", "machineID": "m", "operatingSystem": "linux",
                "osImage": "Debian GNU/Linux 12 (bookworm)", "systemUUID": "u"
            });
        }
        Reply::Json(code, list)
    }
}

/// A kubeconfig with one context per (cluster, server).
fn kubeconfig(clusters: &[(&str, &ApiServer)]) -> String {
    let mut text = String::from("apiVersion: v1\nkind: Config\nclusters:\n");
    for (name, server) in clusters {
        text.push_str(&format!(
            "- name: kind-{name}\n  cluster:\n    server: http://{}\n",
            server.addr
        ));
    }
    text.push_str("users:\n- name: fake\n  user: {}\ncontexts:\n");
    for (name, _) in clusters {
        text.push_str(&format!(
            "- name: kind-{name}\n  context:\n    cluster: kind-{name}\n    user: fake\n"
        ));
    }
    text
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// [`support::harness`] with no fake first on PATH.
fn harness(args: &[&str]) -> Output {
    harness_command(args)
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_image_matrix_creates_runs_and_deletes_one_cluster_per_image() {
    let older = ApiServer::start(cluster_on("v1.33.1")).await;
    let pinned = ApiServer::start(cluster_on("v1.34.11")).await;
    let first = "harness-topology-skew-m1-v1-33-1";
    let second = "harness-topology-skew-m2-v1-34-11";
    let mut fakes = FakeTools::new(&["kind", "docker"]);
    fakes
        .respond("docker version", "24.0.7\n", "", 0)
        .respond("kind version", "kind v0.33.0 go1.25.1 linux/amd64\n", "", 0)
        .respond("kind get clusters", "", "No kind clusters found.\n", 0);
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    std::fs::write(&kc, kubeconfig(&[(first, &older), (second, &pinned)])).unwrap();
    let out = dir.path().join("matrix");
    let matrix = format!("kind.nodeImage={OLDER},{PINNED}");
    let child = short_kind_run(&kc, fakes.dir(), &["--matrix", &matrix], &out)
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&child.stderr);
    // The scripted sidecars see no traffic, so pods starve in both cells: exit 1.
    assert_eq!(child.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "1. kind.nodeImage-v1.33.1: cluster {first}, node image {OLDER}"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("node image kindest/node:v1.33.1 has no @sha256 digest"),
        "{stderr}"
    );

    // One create per cell, with its image, and its cluster deleted before the next is made.
    let lifecycle: Vec<Vec<String>> = fakes
        .calls()
        .into_iter()
        .filter(|c| c[0] == "kind" && (c[1] == "create" || c[1] == "delete"))
        .collect();
    let verb_name_image = |c: &Vec<String>| {
        let name = c
            .iter()
            .position(|w| w == "--name")
            .map(|i| c[i + 1].clone());
        let image = c
            .iter()
            .position(|w| w == "--image")
            .map(|i| c[i + 1].clone());
        (c[1].clone(), name.unwrap_or_default(), image)
    };
    let seen: Vec<_> = lifecycle.iter().map(verb_name_image).collect();
    assert_eq!(
        seen,
        [
            ("create".into(), first.into(), Some(OLDER.into())),
            ("delete".into(), first.into(), None),
            ("create".into(), second.into(), Some(PINNED.into())),
            ("delete".into(), second.into(), None),
        ],
        "{lifecycle:?}"
    );
    // Each cell talked to its own cluster's API server.
    for server in [&older, &pinned] {
        assert!(
            server
                .seen()
                .iter()
                .any(|s| s.method == "PATCH" && s.path().ends_with("/deployments/flagsvc")),
            "every cell deploys into its cluster"
        );
    }

    // The roll-up: both cells starve pods; the first decides the exit code.
    let stdout = String::from_utf8_lossy(&child.stdout);
    assert!(
        stdout.contains("\nexit 1: from cell kind.nodeImage-v1.33.1 (expectation"),
        "{stdout}"
    );
    let rollup = read_json(&out.join("matrix.json"));
    assert_eq!(rollup["axes"], json!(["kind.nodeImage"]));
    assert_eq!(rollup["cells"][1]["values"][0]["value"], "v1.34.11");
    let cell = |label: &str| out.join(format!("kind.nodeImage-{label}"));
    for (label, version, image, name) in [
        ("v1.33.1", "v1.33.1", OLDER, first),
        ("v1.34.11", "v1.34.11", PINNED, second),
    ] {
        let summary = support::summary(&cell(label));
        let k = &summary["kubernetes"];
        assert_eq!(k["version"], version, "{k}");
        assert_eq!(k["source"], "nodes");
        assert_eq!(k["nodeImage"], image);
        assert_eq!(k["kubeletVersions"][version], 5, "five Nodes listed: {k}");
        let md = std::fs::read_to_string(cell(label).join("report.md")).unwrap();
        assert!(
            md.contains(&format!("Target `kind` (Kubernetes {version}), run")),
            "{md}"
        );
        let html = std::fs::read_to_string(cell(label).join("report.html")).unwrap();
        assert!(
            html.contains(&format!(
                "<dt>kubernetes</dt><dd>{version}</dd><dt>node image</dt>"
            )),
            "the report's facts"
        );
        let command = summary["invocation"]["command"].as_str().unwrap();
        assert!(
            command.contains(&format!("--target kind --node-image {image}")),
            "{command}"
        );
        let config = std::fs::read_to_string(cell(label).join("kind-config.yaml")).unwrap();
        assert!(config.contains(&format!("name: \"{name}\"")), "{config}");
        assert_eq!(
            config.matches(&format!("image: \"{image}\"")).count(),
            config.matches("- role: ").count(),
            "every node runs the cell's image"
        );
    }
    assert!(!cell("v1.33.1").join("compare.json").exists(), "the base");
    let comparison = read_json(&cell("v1.34.11").join("compare.json"));
    assert_eq!(comparison["verdict"], "ok", "{comparison}");
    assert_eq!(comparison["notes"][0], "Kubernetes v1.33.1 → v1.34.11");
    assert_eq!(comparison["base"]["nodeImage"], OLDER);
    let md = std::fs::read_to_string(cell("v1.34.11").join("compare.md")).unwrap();
    assert!(md.contains("- Kubernetes v1.33.1 → v1.34.11\n"), "{md}");
}

#[test]
fn bad_node_images_are_refused_naming_the_flag_and_the_form() {
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "scenarios/topology-skew.yaml", "--target", "kind"];
        args.extend_from_slice(extra);
        let output = harness(&args);
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (code, stderr) = run(&["--node-image", "nginx:1.27"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--node-image")
            && stderr.contains("`nginx:1.27` is not a kind node image")
            && stderr.contains("kindest/node:vMAJOR.MINOR.PATCH@sha256:<64 hex digits>"),
        "{stderr}"
    );
    let (code, stderr) = run(&["--node-image", "kindest/node:v1.30.13"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("v1.30.13") && stderr.contains("older than v1.31.0"),
        "{stderr}"
    );
    let (code, stderr) = run(&["--node-image", OLDER, "--cluster", "harness-topology-skew"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("its nodes' image is theirs"), "{stderr}");
    let (code, stderr) = run(&[
        "--context",
        "prod",
        "--allow-existing-cluster",
        "--matrix",
        &format!("kind.nodeImage={OLDER},{PINNED}"),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("the cluster exists"), "{stderr}");
    let (code, stderr) = run(&[
        "--node-image",
        OLDER,
        "--matrix",
        &format!("kind.nodeImage={PINNED}"),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("both choose the node image"), "{stderr}");
    let (code, stderr) = run(&["--matrix", "kind.image=a,b"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("the kind target's only matrix axis is kind.nodeImage"),
        "{stderr}"
    );
    // PreferSameZone is on by default from 1.34 only: refused on 1.33, before anything runs.
    let (code, stderr) = run(&[
        "--variant",
        "prefer-close",
        "--set",
        "service.routing.trafficDistribution=PreferSameZone",
        "--set",
        "service.routing.topologyMode=null",
        "--node-image",
        OLDER,
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("PreferSameZone: Kubernetes v1.34.0 or newer"),
        "{stderr}"
    );

    // One bad value refuses the whole matrix, and nothing runs.
    let out = tempfile::tempdir().unwrap();
    let (code, stderr) = run(&[
        "--matrix",
        &format!("kind.nodeImage={PINNED},kindest/node:v1.29.4"),
        "--out",
        out.path().to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--matrix kind.nodeImage=kindest/node:v1.29.4")
            && stderr.contains("older than v1.31.0"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 0);
}

#[test]
fn the_local_target_has_no_node_image() {
    let output = harness(&[
        "run",
        "scenarios/topology-skew.yaml",
        "--matrix",
        &format!("kind.nodeImage={OLDER},{PINNED}"),
    ]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("the local target has no node image")
            && stderr.contains("one Kubernetes version, v1.34")
            && stderr.contains("--target kind"),
        "{stderr}"
    );
    let output = harness(&["run", "scenarios/topology-skew.yaml", "--node-image", OLDER]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--node-image only apply to --target kind"),
        "{stderr}"
    );
}

/// A recorded local run's summary, moved onto kind at `version`.
fn recorded_on_kind(version: &str, dir: &Path) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/runs/topology-skew-incident/summary.json");
    let mut summary = read_json(&fixture);
    summary["target"] = json!("kind");
    summary["kubernetes"] = json!({
        "version": version, "source": "nodes",
        "nodeImage": format!("kindest/node:{version}"),
        "kubeletVersions": { version: 5 }
    });
    std::fs::write(dir.join("summary.json"), summary.to_string()).unwrap();
}

#[test]
fn compare_names_both_kubernetes_versions_and_a_change_of_target() {
    let (base, candidate, out) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    recorded_on_kind("v1.33.1", base.path());
    recorded_on_kind("v1.34.0", candidate.path());
    let compare = |base: &Path| {
        let output = harness(&[
            "compare",
            base.to_str().unwrap(),
            candidate.path().to_str().unwrap(),
            "--out",
            out.path().to_str().unwrap(),
        ]);
        let json = read_json(&out.path().join("compare.json"));
        let schema: Value =
            serde_json::from_slice(&harness(&["schema", "compare"]).stdout).unwrap();
        assert!(
            jsonschema::validator_for(&schema).unwrap().is_valid(&json),
            "compare.json breaks its schema"
        );
        (output.status.code(), json)
    };
    let (code, c) = compare(base.path());
    assert_eq!(code, Some(0), "{c}");
    let notes = c["notes"].as_array().unwrap();
    assert_eq!(
        notes[..2],
        [
            json!("Kubernetes v1.33.1 → v1.34.0"),
            json!("node image kindest/node:v1.33.1 → kindest/node:v1.34.0")
        ]
    );
    // Then what else separates the runs, or that nothing else does.
    assert_eq!(notes.len(), 3, "{c}");
    assert_eq!(
        (&c["base"]["kubernetes"], &c["candidate"]["kubernetes"]),
        (&json!("v1.33.1"), &json!("v1.34.0"))
    );
    let md = std::fs::read_to_string(out.path().join("compare.md")).unwrap();
    assert!(
        md.contains("on kind, Kubernetes v1.33.1 (")
            && md.contains("on kind, Kubernetes v1.34.0 (")
            && md.contains("- Kubernetes v1.33.1 → v1.34.0\n"),
        "{md}"
    );
    let html = std::fs::read_to_string(out.path().join("compare.html")).unwrap();
    assert!(
        html.contains("<p class=\"note\">Kubernetes v1.33.1 → v1.34.0</p>"),
        "{html}"
    );

    // The recorded local run (from before versions were recorded) against the kind run: the
    // same scenario and expectations compare, and the header says the target differs.
    let local =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs/topology-skew-incident");
    let (code, c) = compare(&local);
    assert_eq!(code, Some(0), "{c}");
    assert_eq!(c["notes"][0], "Kubernetes not recorded → v1.34.0");
    assert!(
        c["notes"][2]
            .as_str()
            .unwrap()
            .starts_with("targets differ: local → kind"),
        "{c}"
    );
}

#[test]
fn plan_lists_every_cell_with_its_cluster_and_node_image() {
    let dir = tempfile::tempdir().unwrap();
    let output = harness(&[
        "plan",
        "scenarios/topology-skew.yaml",
        "--target",
        "kind",
        "--host-cpus",
        "8",
        "--images",
        KIND_IMAGES,
        "--output-dir",
        dir.path().to_str().unwrap(),
        "--matrix",
        &format!("kind.nodeImage={OLDER},{PINNED}"),
        "--matrix",
        "load.duration=30s,1m",
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let lines: Vec<&str> = stdout.lines().skip(1).map(str::trim).collect();
    assert_eq!(lines.len(), 4, "{stdout}");
    let expected = [
        ("v1.33.1", "30s", "m1-v1-33-1", OLDER),
        ("v1.33.1", "1m", "m2-v1-33-1", OLDER),
        ("v1.34.11", "30s", "m3-v1-34-11", PINNED),
        ("v1.34.11", "1m", "m4-v1-34-11", PINNED),
    ];
    for (i, (version, duration, suffix, image)) in expected.iter().enumerate() {
        let label = format!("kind.nodeImage-{version}_load.duration-{duration}");
        let cell_dir = dir.path().join(&label);
        assert_eq!(
            lines[i],
            format!(
                "{}. {label}: cluster harness-topology-skew-{suffix}, node image {image} -> {}",
                i + 1,
                cell_dir.display()
            )
        );
        let config = std::fs::read_to_string(cell_dir.join("kind-config.yaml")).unwrap();
        assert!(
            config.contains(&format!("name: \"harness-topology-skew-{suffix}\""))
                && config.contains(&format!("image: \"{image}\""))
                && config.contains(&format!("harness-topology-skew-{suffix}-worker")),
            "{config}"
        );
        assert!(cell_dir.join("manifests.yaml").is_file());
    }
    let output = harness(&[
        "plan",
        "scenarios/topology-skew.yaml",
        "--matrix",
        &format!("kind.nodeImage={OLDER}"),
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("add --target kind --output-dir DIR"));
}

#[test]
fn a_local_run_records_the_modelled_kubernetes_version() {
    support::require_workload_bins();
    let _turn = support::ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let out = tempfile::tempdir().unwrap();
    let output = harness_command(&["run", "scenarios/testdata/valid-minimal.yaml"])
        .args(["--set", "load.duration=2s", "--progress", "none", "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let summary = support::summary(out.path());
    assert_eq!(
        summary["kubernetes"],
        json!({ "version": "v1.34", "source": "modelled", "nodeImage": null, "kubeletVersions": {} })
    );
}

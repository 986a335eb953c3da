//! The rendered kind configs: golden files (`UPDATE_GOLDENS=1 cargo test -p harness-kind --test
//! config` rewrites them), and every rendering parsed back against kind's v1alpha4 fields and
//! the kubeadm fields the patches touch, so a typo in a key fails here rather than in `kind
//! create cluster` on someone's machine.

#[path = "support/files.rs"]
mod files;

use std::collections::BTreeMap;

use files::{load, repo};
use harness_kind::cluster::{ClusterPlan, NodeCpu};
use harness_kind::config::render;
use serde::Deserialize;

/// (scenario, variant, host CPUs, golden file)
const CASES: &[(&str, Option<&str>, u32, &str)] = &[
    (
        "scenarios/topology-skew.yaml",
        None,
        8,
        "topology-skew-8cpu.yaml",
    ),
    (
        "scenarios/topology-skew.yaml",
        Some("fixed"),
        2,
        "topology-skew-fixed-2cpu.yaml",
    ),
    (
        "scenarios/rollout-502.yaml",
        None,
        4,
        "rollout-502-4cpu.yaml",
    ),
    (
        "scenarios/autoscaler-blind-spot.yaml",
        None,
        16,
        "autoscaler-blind-spot-16cpu.yaml",
    ),
    (
        "harness/kind/tests/fixtures/node-churn.yaml",
        None,
        3,
        "node-churn-3cpu.yaml",
    ),
];

fn rendered(path: &str, variant: Option<&str>, host: u32) -> (ClusterPlan, String) {
    let scenario = load(path, variant);
    let plan = ClusterPlan::new(&scenario, host).unwrap();
    let command = format!(
        "harness kind-config {path}{} --host-cpus {host}",
        variant
            .map(|v| format!(" --variant {v}"))
            .unwrap_or_default()
    );
    let text = render(&plan, &command);
    (plan, text)
}

#[test]
fn rendered_configs_match_the_goldens() {
    let update = std::env::var_os("UPDATE_GOLDENS").is_some();
    let mut stale = Vec::new();
    for (path, variant, host, golden) in CASES {
        let (_, text) = rendered(path, *variant, *host);
        let golden_path = repo("harness/kind/tests/golden").join(golden);
        if update {
            std::fs::write(&golden_path, &text).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&golden_path).unwrap_or_default();
        if expected != text {
            stale.push(format!(
                "{golden}: rendered config differs from the golden file\n--- rendered ---\n{text}"
            ));
        }
    }
    assert!(
        stale.is_empty(),
        "{}\nIf the change is intended: UPDATE_GOLDENS=1 cargo test -p harness-kind --test config",
        stale.join("\n")
    );
}

// Mirrors of kind's v1alpha4 types (only the fields the harness writes; anything else is a
// mistake) and of the kubeadm fields the patches set.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct KindCluster {
    kind: String,
    api_version: String,
    name: String,
    #[serde(default)]
    kubeadm_config_patches: Vec<String>,
    nodes: Vec<KindNode>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct KindNode {
    role: String,
    image: String,
    #[serde(default)]
    labels: BTreeMap<String, String>,
    #[serde(default)]
    kubeadm_config_patches: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct JoinPatch {
    kind: String,
    node_registration: NodeRegistration,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct NodeRegistration {
    kubelet_extra_args: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ClusterPatch {
    kind: String,
    controller_manager: ControlPlaneComponent,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ControlPlaneComponent {
    extra_args: BTreeMap<String, String>,
}

#[test]
fn rendered_configs_parse_as_kind_configs_that_say_what_the_plan_says() {
    for (path, variant, host, _) in CASES {
        let (plan, text) = rendered(path, *variant, *host);
        let config: KindCluster = serde_saphyr::from_str(&text)
            .unwrap_or_else(|e| panic!("{path}: rendered config does not parse: {e}\n{text}"));
        assert_eq!(config.kind, "Cluster");
        assert_eq!(config.api_version, "kind.x-k8s.io/v1alpha4");
        assert_eq!(config.name, plan.cluster_name);
        assert_eq!(config.nodes.len(), plan.nodes.len());

        match config.kubeadm_config_patches.as_slice() {
            [] => assert!(plan.controller_manager_flags.is_empty()),
            [patch] => {
                let patch: ClusterPatch = serde_saphyr::from_str(patch).unwrap();
                assert_eq!(patch.kind, "ClusterConfiguration");
                assert_eq!(
                    patch.controller_manager.extra_args,
                    plan.controller_manager_flags
                );
            }
            more => panic!("{path}: {} cluster patches", more.len()),
        }

        for (node, planned) in config.nodes.iter().zip(&plan.nodes) {
            assert_eq!(node.role, planned.role.as_str());
            assert_eq!(node.image, harness_kind::pins::NODE_IMAGE);
            assert_eq!(node.labels, planned.labels);
            match planned.cpu {
                NodeCpu::Host => assert!(node.kubeadm_config_patches.is_empty()),
                NodeCpu::Shaped {
                    reserved_millicpu, ..
                } => {
                    let [patch] = node.kubeadm_config_patches.as_slice() else {
                        panic!("{path}: {} must have one patch", planned.kind_name)
                    };
                    let patch: JoinPatch = serde_saphyr::from_str(patch).unwrap();
                    assert_eq!(patch.kind, "JoinConfiguration");
                    assert_eq!(
                        patch.node_registration.kubelet_extra_args,
                        BTreeMap::from([(
                            "kube-reserved".to_owned(),
                            format!("cpu={reserved_millicpu}m")
                        )])
                    );
                }
            }
        }
    }
}

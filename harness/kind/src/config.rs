//! Renders a [`ClusterPlan`] as a kind config (`kind.x-k8s.io/v1alpha4`, fields of kind
//! `pkg/apis/config/v1alpha4/types.go`): `name`, cluster-level `kubeadmConfigPatches` for the
//! controller-manager flags, and `nodes` with `role`, `image`, `labels` and, on workers, a
//! `JoinConfiguration` patch setting `kube-reserved` CPU.
//!
//! Patches carry no `apiVersion`: kind applies such a patch to the matching `kind` of any
//! kubeadm API version, and its `extraArgs` / `kubeletExtraArgs` maps are the v1beta3 form
//! (used by kind for the pinned Kubernetes v1.34) that kind v0.32.0+ converts to v1beta4's
//! `name`/`value` lists for Kubernetes 1.36+ (see [`crate::pins`]). kind merges them by name into
//! its own arguments (`node-ip`, `provider-id`, `node-labels`), so the node labels survive.
//!
//! The output is YAML written by hand so that it can carry comments for the reader; every string
//! value is a JSON string (valid YAML), and tests parse the result back.

use std::fmt::Write as _;

use crate::cluster::{ClusterPlan, KindRole, NodeCpu, PlannedNode, Purpose};

/// The kind config file for `plan`. `command` is the command line that wrote it, for the header.
pub fn render(plan: &ClusterPlan, command: &str) -> String {
    let mut out = String::new();
    header(&mut out, plan, command);
    out.push_str("kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\n");
    let _ = writeln!(out, "name: {}", quote(&plan.cluster_name));
    if !plan.controller_manager_flags.is_empty() {
        out.push_str(
            "# kube-controller-manager flags this scenario needs (docs/kind-target.md#controller-manager-flags).\n",
        );
        out.push_str("kubeadmConfigPatches:\n  - |\n    kind: ClusterConfiguration\n");
        out.push_str("    controllerManager:\n      extraArgs:\n");
        for (flag, value) in &plan.controller_manager_flags {
            let _ = writeln!(out, "        {flag}: {}", quote(value));
        }
    }
    out.push_str("nodes:\n");
    for node in &plan.nodes {
        render_node(&mut out, plan, node);
    }
    out
}

fn header(out: &mut String, plan: &ClusterPlan, command: &str) {
    let variant = plan
        .variant
        .as_deref()
        .map_or("the base document".to_owned(), |v| format!("variant `{v}`"));
    let _ = writeln!(
        out,
        "# kind cluster for scenario `{}` ({variant}), written by:\n#   {command}",
        plan.scenario
    );
    let _ = writeln!(
        out,
        "# For a host with {} CPUs: every kind node reports the host's CPUs, and each worker's\n\
         # allocatable CPU is that minus its kube-reserved. On a host with another CPU count,\n\
         # write it again (`harness kind-config FILE --host-cpus N`).",
        plan.host_cpus
    );
    let _ = writeln!(
        out,
        "# CPU scale (scenario allocatableCpu -> kind allocatable): {}",
        plan.cpu_scale
    );
    let _ = writeln!(out, "# Create: kind create cluster --config THIS_FILE");
}

fn render_node(out: &mut String, plan: &ClusterPlan, node: &PlannedNode) {
    let _ = writeln!(out, "  # {}", describe(plan, node));
    let _ = writeln!(out, "  - role: {}", node.role.as_str());
    let _ = writeln!(out, "    image: {}", quote(&plan.node_image));
    if !node.labels.is_empty() {
        out.push_str("    labels:\n");
        for (key, value) in &node.labels {
            let _ = writeln!(out, "      {key}: {}", quote(value));
        }
    }
    if let NodeCpu::Shaped {
        reserved_millicpu, ..
    } = node.cpu
    {
        out.push_str("    kubeadmConfigPatches:\n      - |\n        kind: JoinConfiguration\n");
        out.push_str("        nodeRegistration:\n          kubeletExtraArgs:\n");
        let _ = writeln!(
            out,
            "            kube-reserved: {}",
            quote(&format!("cpu={reserved_millicpu}m"))
        );
    }
}

/// `a-1 (kind node harness-x-worker): worker in zone 2a, allocatable 4000m (scenario 4000m)`.
fn describe(plan: &ClusterPlan, node: &PlannedNode) -> String {
    let name = node
        .scenario_name
        .as_deref()
        .unwrap_or("control plane (the scenario declares none)");
    let zone = node
        .zone
        .as_deref()
        .map_or("no zone".to_owned(), |z| format!("zone {z}"));
    let role = match node.role {
        KindRole::ControlPlane => "control plane",
        KindRole::Worker => "worker",
    };
    let cpu = match node.cpu {
        NodeCpu::Host => format!("allocatable CPU = the host's {}", plan.host_cpus),
        NodeCpu::Shaped {
            scenario_millicpu,
            allocatable_millicpu,
            ..
        } => format!("allocatable {allocatable_millicpu}m (scenario {scenario_millicpu}m)"),
    };
    let added: Vec<String> = node.added_at.iter().map(|d| format!("{d:?}")).collect();
    let purpose = match node.purpose {
        Purpose::Spare => format!(
            "; spare for the timeline's addNode at {} (the run keeps it out until then)",
            added.join(", ")
        ),
        Purpose::Initial if !added.is_empty() => {
            format!("; added again by the timeline at {}", added.join(", "))
        }
        Purpose::Initial if !node.ready => {
            "; NotReady at load start (the run stops its kubelet)".to_owned()
        }
        Purpose::Initial => String::new(),
    };
    format!(
        "{name} (kind node {}): {role}, {zone}, {cpu}{purpose}",
        node.kind_name
    )
}

/// A string as a YAML (JSON) double-quoted scalar.
fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"))
}

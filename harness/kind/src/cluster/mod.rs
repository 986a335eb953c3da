//! The kind cluster a scenario needs, as a plan: which kind nodes exist (control plane,
//! workers, spares for the timeline's `addNode`), their zone labels, their allocatable CPU on
//! this host, the controller-manager flags, and what kind will name each node. Pure: the host's
//! CPU count is an input. [`crate::config`] renders the plan as a kind config file.
//!
//! - Control-plane nodes are left at the host's CPUs. The EndpointSlice controller ignores nodes
//!   labelled `node-role.kubernetes.io/control-plane` (kubeadm labels them; upstream
//!   `topologycache.go`, `hasExcludedLabels`), so their CPU never enters the hint ratios, while
//!   their static pods (apiserver, etcd, controller manager, scheduler: 650m of requests) must
//!   still fit. A scenario without control-plane nodes gets one, without a zone.
//! - Workers and spares get `kube-reserved` CPU so their allocatable is the scenario's value
//!   times one [`CpuScale`] factor. Each must keep at least [`KINDNET_CPU_REQUEST_MILLICPU`]:
//!   kindnet, kind's CNI, runs on every node with that CPU request (kind
//!   `pkg/build/nodeimage/const_cni.go`), and a node whose kindnet cannot be scheduled never
//!   becomes Ready.
//! - A spare is one node per distinct `addNode` (name, zone, CPU) that is not already a planned
//!   node: re-adding a removed node with the same zone and CPU reuses it. Spares are created
//!   with the cluster; the run stops their kubelet and deletes their Node until the action.

pub mod cpu;
pub mod flags;
pub mod names;

use std::collections::BTreeMap;
use std::time::Duration;

use harness_core::scenario::{Action, NodeRole, Scenario};

use crate::labels::{self, LabelError, SCENARIO_NODE_LABEL, SPARE_NODE_LABEL, ZONE_LABEL};
pub use cpu::CpuScale;
use names::{ClusterNameError, NodeNamer};

/// kindnet's CPU request: the least allocatable CPU a kind node can have and become Ready.
pub const KINDNET_CPU_REQUEST_MILLICPU: u64 = 100;

/// The planned kind cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterPlan {
    /// `metadata.name` of the scenario.
    pub scenario: String,
    /// The variant the plan was made for.
    pub variant: Option<String>,
    /// The kind cluster name (`harness-<scenario>`).
    pub cluster_name: String,
    /// The node image of every node.
    pub node_image: String,
    /// The host's CPUs, as every node reports them.
    pub host_cpus: u32,
    /// How scenario CPU values map to allocatable CPU on this host.
    pub cpu_scale: CpuScale,
    /// Every kind node, in config order.
    pub nodes: Vec<PlannedNode>,
    /// kube-controller-manager flags (name without dashes → value).
    pub controller_manager_flags: BTreeMap<String, String>,
}

/// One kind node.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedNode {
    /// The scenario node it stands for (`None`: the control plane added for a scenario that
    /// declares none).
    pub scenario_name: Option<String>,
    /// The container and Node name kind will give it.
    pub kind_name: String,
    pub role: KindRole,
    pub zone: Option<String>,
    pub purpose: Purpose,
    /// Offsets from load start of the timeline's `addNode` entries this node serves (a spare's
    /// first addition, or a removed node added again with the same zone and CPU).
    pub added_at: Vec<Duration>,
    /// The scenario's `ready` at load start (spares: the `addNode`'s `ready`).
    pub ready: bool,
    pub cpu: NodeCpu,
    /// The node's `labels` in the kind config (self-set by its kubelet).
    pub labels: BTreeMap<String, String>,
}

/// kind's node roles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KindRole {
    ControlPlane,
    Worker,
}

impl KindRole {
    /// The role as kind writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            KindRole::ControlPlane => "control-plane",
            KindRole::Worker => "worker",
        }
    }
}

/// Why a node exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// In the cluster at load start.
    Initial,
    /// Only for the timeline's `addNode` (see [`PlannedNode::added_at`]).
    Spare,
}

/// A node's CPU on the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeCpu {
    /// Not shaped: allocatable is the host's CPUs.
    Host,
    /// `kube-reserved` set so allocatable is `allocatable_millicpu`.
    Shaped {
        scenario_millicpu: u64,
        allocatable_millicpu: u64,
        reserved_millicpu: u64,
    },
}

/// Why a scenario has no kind cluster on this host.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    #[error("the host must have at least one CPU (got --host-cpus 0)")]
    NoHostCpus,
    #[error(
        "{what} has no allocatable CPU; a kind node needs at least {KINDNET_CPU_REQUEST_MILLICPU}m for kindnet, kind's network plugin, to become Ready, so this cannot run on kind: give it a CPU value"
    )]
    ZeroCpu { what: String },
    #[error(
        "{what} would get {allocatable}m allocatable CPU on this {host_cpus}-CPU host (every node scaled by {factor:.4} to keep the zone ratios), below the {KINDNET_CPU_REQUEST_MILLICPU}m kindnet needs for the node to become Ready; use a host with more CPUs (--host-cpus) or raise the scenario's smallest nodes"
    )]
    BelowKindnet {
        what: String,
        allocatable: u64,
        host_cpus: u32,
        factor: f64,
    },
    #[error("node `{node}`: {source}")]
    Label { node: String, source: LabelError },
    #[error(transparent)]
    ClusterName(#[from] ClusterNameError),
}

impl ClusterPlan {
    /// Plans the cluster for `scenario` on a host with `host_cpus` CPUs.
    pub fn new(scenario: &Scenario, host_cpus: u32) -> Result<ClusterPlan, PlanError> {
        if host_cpus == 0 {
            return Err(PlanError::NoHostCpus);
        }
        let cpu_scale = CpuScale::for_values(&shaped_values(scenario)?, host_cpus);
        let cluster_name = names::cluster_name(&scenario.name);
        let mut namer = NodeNamer::new(&cluster_name);
        let mut nodes = Vec::new();

        let control_planes: Vec<_> = scenario
            .cluster
            .nodes
            .iter()
            .filter(|n| n.role == NodeRole::ControlPlane)
            .collect();
        if control_planes.is_empty() {
            nodes.push(PlannedNode {
                scenario_name: None,
                kind_name: namer.next(KindRole::ControlPlane.as_str()),
                role: KindRole::ControlPlane,
                zone: None,
                purpose: Purpose::Initial,
                added_at: Vec::new(),
                ready: true,
                cpu: NodeCpu::Host,
                labels: BTreeMap::new(),
            });
        }
        for node in control_planes {
            nodes.push(PlannedNode {
                scenario_name: Some(node.name.clone()),
                kind_name: namer.next(KindRole::ControlPlane.as_str()),
                role: KindRole::ControlPlane,
                zone: Some(node.zone.clone()),
                purpose: Purpose::Initial,
                added_at: Vec::new(),
                ready: node.ready,
                cpu: NodeCpu::Host,
                labels: node_labels(&node.name, &node.zone, false),
            });
        }
        for node in scenario.cluster.workers() {
            let what = format!("worker node `{}`", node.name);
            nodes.push(PlannedNode {
                scenario_name: Some(node.name.clone()),
                kind_name: namer.next(KindRole::Worker.as_str()),
                role: KindRole::Worker,
                zone: Some(node.zone.clone()),
                purpose: Purpose::Initial,
                added_at: Vec::new(),
                ready: node.ready,
                cpu: shaped(&cpu_scale, node.allocatable_millicpu, &what)?,
                labels: node_labels(&node.name, &node.zone, false),
            });
        }
        for event in &scenario.timeline {
            let Action::AddNode {
                zone,
                name,
                allocatable_millicpu,
                ready,
            } = &event.action
            else {
                continue;
            };
            let same = |n: &&mut PlannedNode| {
                n.scenario_name.as_deref() == Some(name.as_str())
                    && n.zone.as_deref() == Some(zone.as_str())
                    && matches!(n.cpu, NodeCpu::Shaped { scenario_millicpu, .. } if scenario_millicpu == *allocatable_millicpu)
            };
            if let Some(existing) = nodes.iter_mut().find(same) {
                existing.added_at.push(event.at);
                continue;
            }
            let what = format!("node `{name}` (added by the timeline at {:?})", event.at);
            nodes.push(PlannedNode {
                scenario_name: Some(name.clone()),
                kind_name: namer.next(KindRole::Worker.as_str()),
                role: KindRole::Worker,
                zone: Some(zone.clone()),
                purpose: Purpose::Spare,
                added_at: vec![event.at],
                ready: *ready,
                cpu: shaped(&cpu_scale, *allocatable_millicpu, &what)?,
                labels: node_labels(name, zone, true),
            });
        }
        check_setallocatable(scenario, &cpu_scale)?;

        for node in &nodes {
            for (key, value) in &node.labels {
                labels::check_self_label(key, value).map_err(|source| PlanError::Label {
                    node: node.kind_name.clone(),
                    source,
                })?;
            }
        }
        let longest = nodes
            .iter()
            .map(|n| n.kind_name.as_str())
            .max_by_key(|n| n.len())
            .unwrap_or_default();
        names::check_cluster_name(&cluster_name, longest)?;

        Ok(ClusterPlan {
            scenario: scenario.name.clone(),
            variant: scenario.selected_variant.clone(),
            cluster_name,
            node_image: crate::pins::NODE_IMAGE.to_owned(),
            host_cpus,
            cpu_scale,
            nodes,
            controller_manager_flags: flags::controller_manager_flags(scenario),
        })
    }

    /// The same plan for a cluster named `cluster` (`--cluster NAME`, created earlier from this
    /// scenario's config under another name): kind names the nodes after the cluster.
    pub fn renamed(&self, cluster: &str) -> Result<ClusterPlan, PlanError> {
        let mut plan = self.clone();
        let mut namer = NodeNamer::new(cluster);
        for node in &mut plan.nodes {
            node.kind_name = namer.next(node.role.as_str());
        }
        let longest = plan
            .nodes
            .iter()
            .map(|n| n.kind_name.as_str())
            .max_by_key(|n| n.len())
            .unwrap_or_default();
        names::check_cluster_name(cluster, longest)?;
        plan.cluster_name = cluster.to_owned();
        Ok(plan)
    }

    /// The kubeconfig context of the cluster.
    pub fn context_name(&self) -> String {
        names::context_name(&self.cluster_name)
    }

    /// The kind node standing for scenario node `name` at load start, or its spare.
    pub fn node(&self, name: &str) -> Option<&PlannedNode> {
        self.nodes
            .iter()
            .find(|n| n.scenario_name.as_deref() == Some(name))
    }

    /// The node the timeline's `addNode` at offset `at` brings in (a spare, or a removed node
    /// added back unchanged).
    pub fn node_added_at(&self, at: Duration) -> Option<&PlannedNode> {
        self.nodes.iter().find(|n| n.added_at.contains(&at))
    }
}

/// Every CPU value the cluster's workers ever get, each checked to be > 0.
fn shaped_values(scenario: &Scenario) -> Result<Vec<u64>, PlanError> {
    let mut values = Vec::new();
    let mut push = |value: u64, what: String| {
        if value == 0 {
            Err(PlanError::ZeroCpu { what })
        } else {
            values.push(value);
            Ok(())
        }
    };
    for node in scenario.cluster.workers() {
        push(
            node.allocatable_millicpu,
            format!("worker node `{}`", node.name),
        )?;
    }
    for event in &scenario.timeline {
        match &event.action {
            Action::AddNode {
                name,
                allocatable_millicpu,
                ..
            } => push(
                *allocatable_millicpu,
                format!("node `{name}` added by the timeline at {:?}", event.at),
            )?,
            Action::SetAllocatableCpu {
                node,
                allocatable_millicpu,
            } => push(
                *allocatable_millicpu,
                format!("node `{node}` after setAllocatableCpu at {:?}", event.at),
            )?,
            _ => {}
        }
    }
    Ok(values)
}

fn check_setallocatable(scenario: &Scenario, scale: &CpuScale) -> Result<(), PlanError> {
    for event in &scenario.timeline {
        if let Action::SetAllocatableCpu {
            node,
            allocatable_millicpu,
        } = &event.action
        {
            let what = format!("node `{node}` after setAllocatableCpu at {:?}", event.at);
            shaped(scale, *allocatable_millicpu, &what)?;
        }
    }
    Ok(())
}

fn shaped(scale: &CpuScale, scenario_millicpu: u64, what: &str) -> Result<NodeCpu, PlanError> {
    let allocatable = scale.allocatable(scenario_millicpu);
    if allocatable < KINDNET_CPU_REQUEST_MILLICPU {
        return Err(PlanError::BelowKindnet {
            what: what.to_owned(),
            allocatable,
            host_cpus: (scale.host_millicpu() / 1000) as u32,
            factor: scale.factor(),
        });
    }
    Ok(NodeCpu::Shaped {
        scenario_millicpu,
        allocatable_millicpu: allocatable,
        reserved_millicpu: scale.reserved(scenario_millicpu),
    })
}

fn node_labels(name: &str, zone: &str, spare: bool) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::from([
        (ZONE_LABEL.to_owned(), zone.to_owned()),
        (SCENARIO_NODE_LABEL.to_owned(), name.to_owned()),
    ]);
    if spare {
        labels.insert(SPARE_NODE_LABEL.to_owned(), "true".to_owned());
    }
    labels
}

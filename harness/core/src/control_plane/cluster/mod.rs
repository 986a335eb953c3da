//! The whole modelled cluster of one scenario: nodes, the Service's pods and its endpoints.
//! Applies timeline actions the way the controllers involved would, and says which pods must
//! be started or stopped; the local target executes those, `harness plan` only predicts them.
//!
//! Behaviour follows kubernetes/kubernetes v1.34.0:
//! - a node turning NotReady has its pods marked not ready at once by the node lifecycle
//!   controller (`pkg/controller/nodelifecycle`, MarkPodsNotReady); the action stands for the
//!   moment the Ready condition flips, i.e. after node-monitor-grace-period; past the pods'
//!   toleration they are evicted and recreated elsewhere, and a kubelet that returns probes
//!   its pods back into the endpoints (see `node_failure`);
//! - a deleted node's pods are deleted (pod GC) and the ReplicaSet creates replacements;
//! - scale-down deletes not-ready pods first, then the newest (`pkg/controller/replicaset`,
//!   getPodsToDelete ranking, reduced to readiness and age);
//! - killPod deletes the pod (as `kubectl delete pod`); the ReplicaSet creates a replacement
//!   (see `kill` for picking the pod and for a pod that is not there);
//! - a deleted pod leaves the ready endpoints at once and stays terminating until the target
//!   reports its processes gone ([`ClusterModel::pod_gone`]); how it terminates (preStop, grace
//!   period) comes from its revision;
//! - a rollout creates a new revision and is driven by the ported rolling-update controller
//!   (`kube_model::workloads::rollout`), one [`ClusterModel::rollout_step`] at a time;
//! - with `loadBalancer.readinessGate` every pod carries a readiness gate: the kubelet's
//!   `Ready` condition is its containers' readiness AND every gate condition True
//!   (`pkg/kubelet/status/generate.go`, GeneratePodReadyCondition, release-1.34), and
//!   `Ready` is what the Deployment controller counts as available (IsPodReady /
//!   IsPodAvailable of `pkg/api/v1/pod/util.go`) and what the EndpointSlice controller marks
//!   as a ready endpoint. The probe sets the containers' readiness
//!   ([`ClusterModel::set_pod_ready`]), the load balancer the gate
//!   ([`ClusterModel::set_target_healthy`]); see `gate`.

mod gate;
mod kill;
mod node_failure;
mod pending;
mod rollout;

use std::collections::{BTreeMap, BTreeSet};

use std::time::Duration;

use rand::SeedableRng;
use rand::rngs::SmallRng;

use super::endpoints::{PodRecord, ServiceEndpoints};
use super::placement::{
    CandidateNode, PlacementRules, Spread, SpreadKey, Unschedulable, place_pod,
};
use crate::measure::{EventKind, TerminationStage};
use crate::scenario::model::{
    Action, App, Link, NodeRole, RolloutStrategy, Routing, Scenario, Termination, TopologyKey,
    TrafficDistribution, WhenUnsatisfiable, ZoneFault,
};
use kube_model::Node;
use kube_model::reconcile::ServiceTopology;

/// Something the target must do to pods.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PodOp {
    /// Start a new pod (processes) on `node`, configured as `revision` says.
    Start {
        pod: String,
        node: String,
        zone: String,
        revision: PodRevision,
    },
    /// A pod was deleted: it has left the endpoints; terminate its processes as `termination`
    /// says, then report [`ClusterModel::pod_gone`].
    Stop {
        pod: String,
        termination: Termination,
    },
    /// The kubelet of `node` went silent (`running: false`: its probe workers stop, the
    /// pods' processes keep running) or is back (`running: true`: it probes `pods` afresh,
    /// each starting not ready, the first run a random part of the probe period after the
    /// restart — `kube_model::node_lifecycle::first_probe_after_restart`).
    Kubelet {
        node: String,
        running: bool,
        pods: Vec<String>,
    },
}

/// A Deployment revision: the pod template settings the harness varies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodRevision {
    pub number: u32,
    pub app: App,
    pub termination: Termination,
}

/// What applying an action produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Applied {
    pub events: Vec<EventKind>,
    pub pod_ops: Vec<PodOp>,
}

impl Applied {
    /// Appends what `other` produced.
    pub fn merge(&mut self, other: Applied) {
        self.events.extend(other.events);
        self.pod_ops.extend(other.pod_ops);
    }
}

/// The cluster as the control plane sees it.
#[derive(Debug, Clone)]
pub struct ClusterModel {
    endpoints: ServiceEndpoints,
    rules: PlacementRules,
    rng: SmallRng,
    next_index: u32,
    /// Model time: set by the caller before each call ([`ClusterModel::set_time`]).
    now: Duration,
    /// Pod name → creation time, for scale-down ranking and rollouts.
    created: BTreeMap<String, Duration>,
    /// Pod name → when it last became ready.
    ready_since: BTreeMap<String, Duration>,
    /// Pod name → its revision number.
    pod_revision: BTreeMap<String, u32>,
    revisions: Vec<PodRevision>,
    strategy: RolloutStrategy,
    /// The Deployment's `spec.replicas`.
    desired: u32,
    /// The rollout in progress: (revision, started at).
    rollout: Option<(u32, Duration)>,
    /// Pods carry the load balancer's readiness gate.
    readiness_gate: bool,
    /// With the gate: pods whose containers passed their readiness probe.
    containers_ready: BTreeSet<String>,
    /// With the gate: pods whose gate condition is True (their target is healthy).
    gate_passed: BTreeSet<String>,
    /// Nodes whose kubelet is silent (NotReady), with their taint and what waits for them.
    silent_nodes: BTreeMap<String, node_failure::SilentNode>,
    /// The pods' `tolerationSeconds` for the NoExecute not-ready/unreachable taints.
    not_ready_toleration: Duration,
    /// Pods of the ReplicaSets that no node could take yet (Pending), in creation order.
    pending: Vec<String>,
    /// The cluster's zones, and the network faults active between them (`zoneNetwork`).
    zones: Vec<String>,
    zone_faults: BTreeMap<Link, ZoneFault>,
}

/// The routing mode as the Service object would carry it.
pub fn service_topology(routing: Routing) -> ServiceTopology {
    match routing {
        Routing::None => ServiceTopology::default(),
        Routing::TopologyModeAuto => ServiceTopology::topology_auto(),
        Routing::TrafficDistribution(td) => ServiceTopology::with_traffic_distribution(match td {
            TrafficDistribution::PreferClose => kube_model::TrafficDistribution::PreferClose,
            TrafficDistribution::PreferSameZone => kube_model::TrafficDistribution::PreferSameZone,
            TrafficDistribution::PreferSameNode => kube_model::TrafficDistribution::PreferSameNode,
        }),
    }
}

impl ClusterModel {
    /// The cluster at load start, before any pod exists.
    pub fn new(scenario: &Scenario, seed: u64) -> Self {
        let nodes = scenario
            .cluster
            .nodes
            .iter()
            .map(|n| Node {
                name: n.name.clone(),
                zone: Some(n.zone.clone()),
                allocatable_cpu_millis: Some(n.allocatable_millicpu),
                ready: n.ready,
                control_plane: n.role == NodeRole::ControlPlane,
            })
            .collect();
        let placement = &scenario.service.placement;
        let rules = PlacementRules {
            zones: placement.zones.clone(),
            nodes: placement.nodes.clone(),
            spread: placement
                .topology_spread_constraints
                .iter()
                .map(|c| Spread {
                    max_skew: c.max_skew,
                    key: match c.topology_key {
                        TopologyKey::Zone => SpreadKey::Zone,
                        TopologyKey::Hostname => SpreadKey::Hostname,
                    },
                    hard: c.when_unsatisfiable == WhenUnsatisfiable::DoNotSchedule,
                })
                .collect(),
        };
        Self {
            endpoints: ServiceEndpoints::new(
                &scenario.service.name,
                service_topology(scenario.service.routing),
                nodes,
                scenario.cluster.zones.clone(),
            ),
            rules,
            rng: SmallRng::seed_from_u64(seed),
            next_index: 0,
            pending: Vec::new(),
            zones: scenario.cluster.zones.clone(),
            zone_faults: BTreeMap::new(),
            now: Duration::ZERO,
            created: BTreeMap::new(),
            ready_since: BTreeMap::new(),
            pod_revision: BTreeMap::new(),
            revisions: vec![PodRevision {
                number: 0,
                app: scenario.service.app,
                termination: scenario.service.termination.clone(),
            }],
            strategy: scenario.service.rollout,
            desired: scenario.service.replicas,
            rollout: None,
            readiness_gate: scenario
                .load_balancer
                .as_ref()
                .is_some_and(|lb| lb.readiness_gate),
            containers_ready: BTreeSet::new(),
            gate_passed: BTreeSet::new(),
            silent_nodes: scenario
                .cluster
                .nodes
                .iter()
                .filter(|n| !n.ready)
                .map(|n| {
                    (
                        n.name.clone(),
                        node_failure::SilentNode::since(Duration::ZERO),
                    )
                })
                .collect(),
            not_ready_toleration: scenario.service.not_ready_toleration,
        }
    }

    /// The namespace the modelled objects live in (for event messages).
    fn namespace(&self) -> &'static str {
        "default"
    }

    /// Advances model time (readiness ages, rollout timing).
    pub fn set_time(&mut self, now: Duration) {
        self.now = now;
    }

    /// The Deployment's desired replica count.
    pub fn desired_replicas(&self) -> u32 {
        self.desired
    }

    /// The current (newest) revision.
    pub fn current_revision(&self) -> &PodRevision {
        self.revisions.last().expect("revision 0 always exists")
    }

    /// The strategy's minReadySeconds.
    pub fn min_ready(&self) -> Duration {
        self.strategy.min_ready
    }

    /// Whether a rollout is in progress.
    pub fn rollout_in_progress(&self) -> bool {
        self.rollout.is_some()
    }

    pub fn endpoints(&self) -> &ServiceEndpoints {
        &self.endpoints
    }

    /// Schedules `count` new pods (not ready until their probe passes); an error when one
    /// cannot be placed (the initial deployment: the scenario cannot run). The ReplicaSet's
    /// later pods use [`Self::create_or_pend`], which leaves such a pod Pending.
    pub fn create_pods(&mut self, count: u32) -> Result<Applied, Unschedulable> {
        let mut applied = Applied::default();
        for _ in 0..count {
            let node = self.choose_node()?;
            let pod = self.allocate_pod();
            applied.merge(self.bind_pod(pod, node));
        }
        Ok(applied)
    }

    /// The scheduler's choice of a node for one more pod of the service.
    fn choose_node(&mut self) -> Result<String, Unschedulable> {
        let nodes: Vec<CandidateNode> = self
            .endpoints
            .nodes()
            .map(|n| CandidateNode {
                name: n.name.clone(),
                zone: n.zone_label().to_owned(),
                allocatable_cpu_millis: n.allocatable_cpu_millis.unwrap_or(0),
                ready: n.ready,
                control_plane: n.control_plane,
            })
            .collect();
        let mut per_node: BTreeMap<String, u32> = BTreeMap::new();
        for p in self.endpoints.pods().filter(|p| !p.terminating) {
            *per_node.entry(p.node.clone()).or_insert(0) += 1;
        }
        place_pod(&nodes, &per_node, &self.rules, &mut self.rng)
    }

    /// A new pod of the current revision, created now: its name (`pod-<next>`).
    fn allocate_pod(&mut self) -> String {
        let pod = format!("pod-{}", self.next_index);
        self.created.insert(pod.clone(), self.now);
        self.pod_revision
            .insert(pod.clone(), self.current_revision().number);
        self.next_index += 1;
        pod
    }

    /// Binds `pod` to `node`: it exists there from now on (not ready) and its containers start.
    fn bind_pod(&mut self, pod: String, node: String) -> Applied {
        let mut applied = Applied::default();
        let zone = self
            .endpoints
            .node(&node)
            .map(|n| n.zone_label().to_owned())
            .unwrap_or_default();
        let number = self.pod_revision.get(&pod).copied().unwrap_or(0);
        let revision = self
            .revisions
            .iter()
            .find(|r| r.number == number)
            .unwrap_or_else(|| self.current_revision())
            .clone();
        applied.events.push(EventKind::Pod {
            pod: pod.clone(),
            node: node.clone(),
            zone: zone.clone(),
            created: true,
        });
        applied.events.extend(self.endpoints.upsert_pod(PodRecord {
            name: pod.clone(),
            node: node.clone(),
            zone: zone.clone(),
            ready: false,
            terminating: false,
        }));
        applied.pod_ops.push(PodOp::Start {
            pod,
            node,
            zone,
            revision,
        });
        applied
    }

    /// A pod's containers' readiness as probed. Without a readiness gate that is the pod's
    /// `Ready` condition; with one, `Ready` also needs the gate ([`Self::set_target_healthy`]).
    pub fn set_pod_ready(&mut self, pod: &str, ready: bool) -> Vec<EventKind> {
        let Some(record) = self.endpoints.pod(pod) else {
            return Vec::new();
        };
        // A silent kubelet's probe results do not reach the API.
        if record.terminating || self.kubelet_silent(&record.node) {
            return Vec::new();
        }
        if self.readiness_gate {
            return self.set_containers_ready(pod, ready);
        }
        self.set_ready_condition(pod, ready)
    }

    /// Sets the pod's `Ready` condition (what endpoints and the rollout see).
    fn set_ready_condition(&mut self, pod: &str, ready: bool) -> Vec<EventKind> {
        if ready {
            self.ready_since.entry(pod.to_owned()).or_insert(self.now);
        } else {
            self.ready_since.remove(pod);
        }
        let mut events = self.endpoints.set_pod_ready(pod, ready);
        if !events.is_empty() || self.endpoints.pod(pod).is_some_and(|p| p.ready == ready) {
            events.insert(
                0,
                EventKind::Endpoint {
                    pod: pod.to_owned(),
                    ready,
                },
            );
        }
        events
    }

    /// Deletes pods: they leave the ready endpoints now (terminating); the caller terminates
    /// their processes and then reports [`ClusterModel::pod_gone`].
    pub fn delete_pods(&mut self, pods: &[String]) -> Applied {
        let mut applied = Applied::default();
        for pod in pods {
            if self.forget_pending(pod) {
                continue;
            }
            let Some(record) = self.endpoints.pod(pod).cloned() else {
                continue;
            };
            if record.terminating {
                continue;
            }
            applied.events.push(EventKind::Pod {
                pod: pod.clone(),
                node: record.node.clone(),
                zone: record.zone.clone(),
                created: false,
            });
            applied.events.push(EventKind::Termination {
                pod: pod.clone(),
                stage: TerminationStage::Deleted,
            });
            let node = record.node.clone();
            applied.events.extend(self.endpoints.upsert_pod(PodRecord {
                ready: false,
                terminating: true,
                ..record
            }));
            self.ready_since.remove(pod);
            self.containers_ready.remove(pod);
            self.gate_passed.remove(pod);
            applied.pod_ops.extend(self.termination_op(pod, &node));
        }
        // A deleted pod frees its place: the scheduler retries what waits (an assigned pod's
        // deletion is one of its queue's cluster events).
        applied.merge(self.schedule_pending());
        applied
    }

    /// A terminating pod's processes are gone: it leaves the EndpointSlice.
    pub fn pod_gone(&mut self, pod: &str) -> Vec<EventKind> {
        self.created.remove(pod);
        self.pod_revision.remove(pod);
        let mut events = vec![EventKind::Termination {
            pod: pod.to_owned(),
            stage: TerminationStage::Exited,
        }];
        events.extend(self.endpoints.remove_pod(pod));
        events
    }

    fn revision_of(&self, pod: &str) -> &PodRevision {
        let number = self.pod_revision.get(pod).copied().unwrap_or(0);
        self.revisions
            .iter()
            .find(|r| r.number == number)
            .unwrap_or_else(|| self.current_revision())
    }

    /// The ReplicaSets' pods that are not terminating, Pending ones included (they count as
    /// replicas).
    fn live_pods(&self) -> usize {
        self.endpoints.pods().filter(|p| !p.terminating).count() + self.pending.len()
    }

    /// Deletes pods and lets the ReplicaSet replace them (Pending where no node fits).
    fn delete_and_replace(&mut self, pods: Vec<String>) -> Result<Applied, Unschedulable> {
        let mut applied = self.delete_pods(&pods);
        applied.merge(self.create_or_pend(pods.len() as u32));
        Ok(applied)
    }

    /// The network faults active between zones now.
    pub fn zone_faults(&self) -> &BTreeMap<Link, ZoneFault> {
        &self.zone_faults
    }

    /// Applies one timeline action.
    pub fn apply(&mut self, action: &Action) -> Result<Applied, Unschedulable> {
        let mut applied = Applied::default();
        match action {
            Action::SetNodeReady { node, ready: false } => {
                applied = self.node_not_ready(node);
            }
            Action::SetNodeReady { node, ready: true } => {
                applied = self.node_ready_again(node);
            }
            Action::AddNode {
                zone,
                name,
                allocatable_millicpu,
                ready,
            } => {
                let mut node = Node::worker(name, zone, *allocatable_millicpu);
                node.ready = *ready;
                applied.events.extend(self.endpoints.upsert_node(node));
            }
            Action::RemoveNode { node } => {
                let pods = self.pods_on(node);
                let deleted = self.delete_pods(&pods);
                applied.events.extend(deleted.events);
                applied.pod_ops.extend(deleted.pod_ops);
                applied.pod_ops.extend(self.forget_node(node));
                applied.events.extend(self.endpoints.remove_node(node));
                applied.merge(self.create_or_pend(pods.len() as u32));
            }
            Action::RelabelNode { node, zone } => {
                applied
                    .events
                    .extend(self.endpoints.relabel_node(node, zone));
            }
            Action::SetAllocatableCpu {
                node,
                allocatable_millicpu,
            } => {
                if let Some(mut n) = self.endpoints.node(node).cloned() {
                    n.allocatable_cpu_millis = Some(*allocatable_millicpu);
                    applied.events.extend(self.endpoints.upsert_node(n));
                }
            }
            Action::Scale { replicas } => {
                applied = self.scale_to(*replicas)?;
            }
            Action::KillPod { .. } | Action::KillPickedPod { .. } => {
                applied = self.kill(action)?;
            }
            Action::Rollout(change) => {
                applied.events.extend(self.start_rollout(change));
                let step = self.rollout_step()?;
                applied.events.extend(step.events);
                applied.pod_ops.extend(step.pod_ops);
            }
            // The ingress replicas are the target's (their controller is `crate::ingress`);
            // the cluster's objects do not change.
            Action::ReloadIngress(_) | Action::RestartIngress(_) => {}
            // The network between zones changes no object: endpoints, hints and kube-proxy's
            // choices stay as they are (kube-proxy does not know), only the packets suffer.
            Action::ZoneNetwork(change) => {
                for link in change.links(&self.zones) {
                    match change.fault {
                        ZoneFault::Clear => {
                            self.zone_faults.remove(&link);
                        }
                        fault => {
                            self.zone_faults.insert(link, fault);
                        }
                    }
                }
            }
        }
        // A node added, back, relabelled or with more CPU may take a Pending pod.
        applied.merge(self.schedule_pending());
        Ok(applied)
    }

    /// Sets the Deployment's replica count (a `scale` action or the autoscaler) and lets the
    /// ReplicaSet create or delete pods.
    pub fn scale_to(&mut self, replicas: u32) -> Result<Applied, Unschedulable> {
        self.desired = replicas;
        if self.rollout.is_some() {
            // The rollout's next step sizes both ReplicaSets for the new count.
            return self.rollout_step();
        }
        let live = self.live_pods() as u32;
        if replicas > live {
            Ok(self.create_or_pend(replicas - live))
        } else if replicas < live {
            let victims = self.scale_down_victims((live - replicas) as usize);
            Ok(self.delete_pods(&victims))
        } else {
            Ok(Applied::default())
        }
    }

    /// Names of the pods on `node`.
    fn pods_on(&self, node: &str) -> Vec<String> {
        self.endpoints
            .pods()
            .filter(|p| p.node == node)
            .map(|p| p.name.clone())
            .collect()
    }

    /// Not-ready pods first, then the newest.
    fn scale_down_victims(&self, count: usize) -> Vec<String> {
        use kube_model::workloads::pod_ranking::{
            PodPhase, RankedPod, RankingOptions, pods_to_delete,
        };
        // The ReplicaSet controller's ranking (`getPodsToDelete`, `ActivePodsWithRanks`,
        // v1.34): unscheduled first, then not ready, more pods of the set on the same node,
        // ready for less time, newer — the times in log2 buckets (LogarithmicScaleDown), ties
        // by UID (here the pod's name, so that `harness plan` and a run agree).
        let placed: Vec<&PodRecord> = self.endpoints.pods().filter(|p| !p.terminating).collect();
        let mut on_node: BTreeMap<&str, u32> = BTreeMap::new();
        for p in &placed {
            *on_node.entry(p.node.as_str()).or_default() += 1;
        }
        let mut ranked: Vec<RankedPod> = placed
            .iter()
            .map(|p| {
                RankedPod::running(
                    &p.name,
                    self.ready_since.get(&p.name).copied().filter(|_| p.ready),
                    self.created.get(&p.name).copied().unwrap_or_default(),
                    on_node.get(p.node.as_str()).copied().unwrap_or(0),
                )
            })
            .collect();
        ranked.extend(self.pending.iter().map(|name| RankedPod {
            name: name.clone(),
            uid: name.clone(),
            scheduled: false,
            phase: PodPhase::Pending,
            ready: false,
            ready_since: None,
            max_restarts: 0,
            created_at: self.created.get(name).copied(),
            deletion_cost: 0,
            rank: 0,
        }));
        pods_to_delete(&ranked, count, self.now, RankingOptions::default())
            .into_iter()
            .map(|p| p.name)
            .collect()
    }
}

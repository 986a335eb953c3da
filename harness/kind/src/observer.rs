//! What the watchers saw, turned into the timeline events the local target writes, so verdicts,
//! explanations and reports read the same on both targets. Pure: the watch tasks
//! ([`crate::watch`]) feed it [`Change`]s; it keeps the last state of every watched object and
//! returns the events each change causes:
//!
//! - EndpointSlices of the Service → `hints` (pod → `forZones`, whether any endpoint has hints),
//!   `endpoint` (a pod entered or left the ready endpoints) and `reachability` (for each zone,
//!   the pods kube-proxy on a node there would use, computed from the real slices with
//!   kube-model's port of `pkg/proxy/topology.go`);
//! - Pods of the Service → `pod` (scheduled with its node and zone, or deleted) and
//!   `termination` (deleted);
//! - Events → `kubeEvent` (the `TopologyAwareHints*` events and every other Event of the run's
//!   namespace, the kubelet's `FailedPreStopHook` among them);
//! - the service's Deployment → `rollout` `complete` once the real controller's status says a
//!   rollout the harness started is done ([`deployment_complete`]);
//! - Nodes → kept for the zones of pods and for the model check ([`crate::agreement`]); a node
//!   registering, turning Ready or NotReady, or deleted during the run is a `note` with the
//!   moment it was seen (the real timings of `addNode`, `setNodeReady`, `removeNode`).
//!
//! Endpoints are named by their pod (`targetRef.name`), as the local target names them.

use std::collections::{BTreeMap, BTreeSet};
use workload_contract::sidecar::SidecarMetrics;

use harness_core::control_plane::routing::RoutingTracker;
use harness_core::measure::{EventKind, RolloutStage, TerminationStage};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Event, Node, Pod};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube_model::{Endpoint, EventType};

use crate::labels::ZONE_LABEL;

/// One thing a watcher saw.
#[derive(Debug, Clone)]
pub enum Change {
    Slice(Box<EndpointSlice>),
    SliceDeleted(String),
    Pod(Box<Pod>),
    PodDeleted(String),
    Node(Box<Node>),
    NodeDeleted(String),
    /// The Node watcher's first list is complete: Nodes seen after it registered during the run.
    NodesListed,
    Event(Box<Event>),
    Deployment(Box<Deployment>),
}

/// A rollout the harness started and the controller has not completed yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PendingRollout {
    pub revision: u32,
    /// The Deployment's `metadata.generation` after the patch.
    pub generation: i64,
}

/// Whether the Deployment controller has completed the rollout of `generation`: the status
/// reflects at least that generation and every desired replica is updated and available, with
/// no old replica left — the deployment controller's own `DeploymentComplete`
/// (kubernetes `pkg/controller/deployment/util/deployment_util.go`), which is also what
/// `kubectl rollout status` waits for (`staging/src/k8s.io/kubectl/pkg/polymorphichelpers/
/// rollout_status.go`: observedGeneration ≥ generation, updated = spec.replicas, replicas =
/// updated, available = updated).
pub fn deployment_complete(deployment: &Deployment, generation: i64) -> bool {
    let Some(status) = &deployment.status else {
        return false;
    };
    let desired = deployment.spec.replicas.unwrap_or(1);
    status.observed_generation.unwrap_or(0) >= generation
        && deployment.metadata.generation.unwrap_or(0) <= status.observed_generation.unwrap_or(0)
        && status.updated_replicas.unwrap_or(0) == desired
        && status.replicas.unwrap_or(0) == desired
        && status.available_replicas.unwrap_or(0) == desired
}

/// A service pod as the observer knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObservedPod {
    pub name: String,
    pub node: Option<String>,
    pub zone: Option<String>,
    /// Order of creation in the run (0 for the first pod seen): the index `killPod` means.
    pub index: u32,
    pub ready: bool,
    pub deleting: bool,
    /// Deleted and gone from the API.
    pub gone: bool,
}

/// The state of the watched objects and what has been recorded.
#[derive(Debug, Default)]
pub struct Observer {
    nodes: BTreeMap<String, Node>,
    slices: BTreeMap<String, EndpointSlice>,
    pods: BTreeMap<String, ObservedPod>,
    next_index: u32,
    ready: BTreeSet<String>,
    /// Hints and per-zone reachability as last recorded.
    routing: RoutingTracker,
    events_seen: BTreeSet<String>,
    nodes_listed: bool,
    /// The service's Deployment as last seen.
    deployment: Option<Deployment>,
    rollout: Option<PendingRollout>,
    /// The final counters each pod's sidecar wrote when it exited, as the kubelet copied its
    /// termination message into the container's terminated state.
    sidecar_totals: BTreeMap<String, SidecarMetrics>,
}

fn node_ready(node: &Node) -> bool {
    node.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// The slice's endpoints in kube-model's form, addressed by pod name.
pub fn endpoints_of(slice: &EndpointSlice) -> Vec<Endpoint> {
    slice
        .endpoints
        .iter()
        .flatten()
        .map(|e| {
            let name = e
                .target_ref
                .as_ref()
                .and_then(|r| r.name.clone())
                .or_else(|| e.addresses.first().cloned())
                .unwrap_or_default();
            kube_model::openapi::endpoint(e, name)
        })
        .collect()
}

impl Observer {
    /// An observer for a Service whose clients are in `zones`.
    pub fn new(zones: Vec<String>) -> Self {
        Observer {
            routing: RoutingTracker::new(zones),
            ..Default::default()
        }
    }

    /// The watched Nodes.
    pub fn nodes(&self) -> impl Iterator<Item = &Node> {
        self.nodes.values()
    }

    /// The watched EndpointSlices of the Service.
    pub fn slices(&self) -> impl Iterator<Item = &EndpointSlice> {
        self.slices.values()
    }

    /// The service pods not gone, in creation order.
    pub fn running_pods(&self) -> Vec<&ObservedPod> {
        self.pods().into_iter().filter(|p| !p.gone).collect()
    }

    /// Every service pod seen, in creation order.
    pub fn pods(&self) -> Vec<&ObservedPod> {
        let mut pods: Vec<_> = self.pods.values().collect();
        pods.sort_by_key(|p| p.index);
        pods
    }

    /// Whether the Service's slices carry hints now.
    pub fn hints_enabled(&self) -> bool {
        self.routing.hints_enabled()
    }

    /// The ready endpoints (pod names).
    pub fn ready_pods(&self) -> &BTreeSet<String> {
        &self.ready
    }

    /// The zone of node `name`, from its label.
    pub fn zone_of_node(&self, name: &str) -> Option<String> {
        self.nodes
            .get(name)
            .and_then(|n| n.metadata.labels.as_ref())
            .and_then(|l| l.get(ZONE_LABEL))
            .cloned()
    }

    /// Every endpoint of every slice.
    pub fn endpoints(&self) -> Vec<Endpoint> {
        self.slices.values().flat_map(endpoints_of).collect()
    }

    /// Applies one change; returns the timeline events it causes.
    pub fn apply(&mut self, change: Change) -> Vec<EventKind> {
        match change {
            Change::Slice(slice) => {
                let name = slice.metadata.name.clone().unwrap_or_default();
                self.slices.insert(name, *slice);
                self.endpoints_changed()
            }
            Change::SliceDeleted(name) => {
                self.slices.remove(&name);
                self.endpoints_changed()
            }
            Change::Pod(pod) => self.pod(*pod),
            Change::PodDeleted(name) => self.pod_gone(&name),
            Change::Node(node) => {
                let name = node.metadata.name.clone().unwrap_or_default();
                let ready = node_ready(&node);
                let before = self.nodes.insert(name.clone(), *node);
                let mut out = Vec::new();
                let state = if ready { "Ready" } else { "NotReady" };
                match before {
                    None if self.nodes_listed => out.push(EventKind::Note {
                        message: format!("node {name} registered ({state})"),
                    }),
                    Some(before) if node_ready(&before) != ready => out.push(EventKind::Note {
                        message: format!("node {name} is {state}"),
                    }),
                    _ => {}
                }
                out.extend(self.fill_pod_zones());
                out
            }
            Change::NodeDeleted(name) => match self.nodes.remove(&name) {
                Some(_) => vec![EventKind::Note {
                    message: format!("node {name} deleted"),
                }],
                None => Vec::new(),
            },
            Change::NodesListed => {
                self.nodes_listed = true;
                Vec::new()
            }
            Change::Event(event) => self.event(*event),
            Change::Deployment(deployment) => {
                self.deployment = Some(*deployment);
                self.rollout_progress()
            }
        }
    }

    /// A rollout the harness just started: its `rollout` `started` event (and `complete` too,
    /// should the Deployment already seen have completed it).
    pub fn start_rollout(&mut self, pending: PendingRollout) -> Vec<EventKind> {
        self.rollout = Some(pending);
        let mut out = vec![EventKind::Rollout {
            revision: pending.revision,
            stage: RolloutStage::Started,
        }];
        out.extend(self.rollout_progress());
        out
    }

    /// The rollout in progress, if any.
    pub fn pending_rollout(&self) -> Option<PendingRollout> {
        self.rollout
    }

    fn rollout_progress(&mut self) -> Vec<EventKind> {
        let (Some(pending), Some(deployment)) = (self.rollout, &self.deployment) else {
            return Vec::new();
        };
        if !deployment_complete(deployment, pending.generation) {
            return Vec::new();
        }
        self.rollout = None;
        vec![EventKind::Rollout {
            revision: pending.revision,
            stage: RolloutStage::Complete,
        }]
    }

    fn pod(&mut self, pod: Pod) -> Vec<EventKind> {
        let Some(name) = pod.metadata.name.clone() else {
            return Vec::new();
        };
        let node = pod.spec.as_ref().and_then(|s| s.node_name.clone());
        let ready = pod
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"));
        let deleting = pod.metadata.deletion_timestamp.is_some();
        if let Some(totals) = sidecar_totals(&pod) {
            self.sidecar_totals.insert(name.clone(), totals);
        }
        if self.pods.get(&name).is_some_and(|p| p.gone) {
            return Vec::new();
        }
        let mut out = Vec::new();
        let index = match self.pods.get(&name) {
            Some(p) => p.index,
            None => {
                self.next_index += 1;
                self.next_index - 1
            }
        };
        let before = self.pods.get(&name).cloned();
        let zone = node
            .as_deref()
            .and_then(|n| self.zone_of_node(n))
            .or_else(|| before.as_ref().and_then(|p| p.zone.clone()));
        let announced = before
            .as_ref()
            .is_some_and(|p| p.zone.is_some() && p.node.is_some());
        if let (false, Some(node), Some(zone)) = (announced, &node, &zone) {
            out.push(EventKind::Pod {
                pod: name.clone(),
                node: node.clone(),
                zone: zone.clone(),
                created: true,
            });
        }
        if deleting && !before.as_ref().is_some_and(|p| p.deleting) {
            out.push(EventKind::Termination {
                pod: name.clone(),
                stage: TerminationStage::Deleted,
            });
        }
        self.pods.insert(
            name.clone(),
            ObservedPod {
                name,
                node,
                zone,
                index,
                ready,
                deleting,
                gone: false,
            },
        );
        out
    }

    /// The final counters `pod`'s sidecar reported when it exited, if it has.
    pub fn sidecar_totals(&self, pod: &str) -> Option<SidecarMetrics> {
        self.sidecar_totals.get(pod).copied()
    }

    fn pod_gone(&mut self, name: &str) -> Vec<EventKind> {
        let Some(pod) = self.pods.get(name).cloned().filter(|p| !p.gone) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if !pod.deleting {
            out.push(EventKind::Termination {
                pod: name.to_owned(),
                stage: TerminationStage::Deleted,
            });
        }
        out.push(EventKind::Termination {
            pod: name.to_owned(),
            stage: TerminationStage::Exited,
        });
        if let (Some(node), Some(zone)) = (pod.node.clone(), pod.zone.clone()) {
            out.push(EventKind::Pod {
                pod: name.to_owned(),
                node,
                zone,
                created: false,
            });
        }
        if let Some(p) = self.pods.get_mut(name) {
            p.deleting = true;
            p.ready = false;
            p.gone = true;
        }
        out
    }

    /// Pods scheduled before their node was seen get their `pod` event now.
    fn fill_pod_zones(&mut self) -> Vec<EventKind> {
        let mut out = Vec::new();
        let names: Vec<String> = self
            .pods
            .values()
            .filter(|p| p.zone.is_none() && p.node.is_some() && !p.gone)
            .map(|p| p.name.clone())
            .collect();
        for name in names {
            let node = self.pods[&name].node.clone().unwrap_or_default();
            if let Some(zone) = self.zone_of_node(&node) {
                out.push(EventKind::Pod {
                    pod: name.clone(),
                    node,
                    zone: zone.clone(),
                    created: true,
                });
                if let Some(p) = self.pods.get_mut(&name) {
                    p.zone = Some(zone);
                }
            }
        }
        out
    }

    fn event(&mut self, event: Event) -> Vec<EventKind> {
        let key = event
            .metadata
            .uid
            .clone()
            .or_else(|| event.metadata.name.clone())
            .unwrap_or_default();
        // An Event seen again (a re-list after a dropped watch, a count bump) is not new.
        let count = event.count.unwrap_or(1);
        if !self.events_seen.insert(format!("{key}/{count}")) {
            return Vec::new();
        }
        let object = format!(
            "{}/{}",
            event
                .involved_object
                .kind
                .as_deref()
                .unwrap_or("object")
                .to_lowercase(),
            event.involved_object.name.as_deref().unwrap_or("")
        );
        let kind = if event.type_.as_deref() == Some("Warning") {
            EventType::Warning
        } else {
            EventType::Normal
        };
        vec![EventKind::KubeEvent {
            kind,
            reason: event.reason.unwrap_or_default(),
            message: event.message.unwrap_or_default(),
            object,
        }]
    }

    fn endpoints_changed(&mut self) -> Vec<EventKind> {
        let endpoints = self.endpoints();
        let mut out = Vec::new();
        out.extend(self.routing.update_hints(&endpoints));
        let ready: BTreeSet<String> = endpoints
            .iter()
            .filter(|e| e.conditions.ready == Some(true))
            .map(|e| e.address.clone())
            .collect();
        for pod in ready.difference(&self.ready) {
            out.push(EventKind::Endpoint {
                pod: pod.clone(),
                ready: true,
            });
        }
        for pod in self.ready.difference(&ready) {
            out.push(EventKind::Endpoint {
                pod: pod.clone(),
                ready: false,
            });
        }
        self.ready = ready;
        out.extend(self.routing.update_reachability(&endpoints));
        out
    }
}

/// The counters in the `sidecar` container's termination message (the sidecar writes them to
/// its `terminationMessagePath` when it exits).
fn sidecar_totals(pod: &Pod) -> Option<SidecarMetrics> {
    pod.status
        .as_ref()?
        .container_statuses
        .as_ref()?
        .iter()
        .filter(|c| c.name == "sidecar")
        .find_map(|c| {
            let message = c.state.as_ref()?.terminated.as_ref()?.message.as_deref()?;
            SidecarMetrics::parse_totals(message)
        })
}

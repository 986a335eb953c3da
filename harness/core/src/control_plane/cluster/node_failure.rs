//! A node whose kubelet goes silent (`setNodeReady: false`) and comes back
//! (`setNodeReady: true`), as `kube_model::node_lifecycle` ports it from Kubernetes v1.34:
//!
//! - at the action (the moment the node lifecycle controller sets Ready `Unknown`, i.e. a
//!   `node-monitor-grace-period` after the kubelet stopped) every pod on the node gets
//!   `Ready=False` (`MarkPodsNotReady`) and leaves the ready endpoints; the kubelet's probe
//!   workers stop ([`PodOp::Kubelet`]); the node is tainted NoSchedule and NoExecute;
//! - `service.notReadyToleration` later (300 s by default) the taint eviction controller
//!   deletes the pods still there and the ReplicaSet recreates them on other nodes; a pod
//!   deleted while its kubelet is silent (by eviction, scale-down, a rollout or `killPod`)
//!   stays terminating until the kubelet returns and terminates it;
//! - when the kubelet is back the taints go (pending evictions are cancelled), the kubelet
//!   terminates the pods deleted meanwhile, and probes every other pod afresh: each is ready
//!   again once its probe has passed (`kube_model::node_lifecycle::ready_after_restart`).

use std::time::Duration;

use kube_model::EventType;
use kube_model::node_lifecycle::{self, NodeCondition};

use super::{Applied, ClusterModel, PodOp};
use crate::control_plane::placement::Unschedulable;
use crate::measure::EventKind;
use crate::scenario::model::Termination;

/// A node whose kubelet is silent.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct SilentNode {
    /// When its NoExecute taint was added (model time).
    pub tainted_at: Duration,
    /// Whether the taint eviction controller has deleted its pods.
    pub evicted: bool,
    /// Pods deleted while the kubelet was silent: terminated when it returns.
    pub awaiting_kubelet: Vec<(String, Termination)>,
}

impl SilentNode {
    pub(super) fn since(tainted_at: Duration) -> Self {
        SilentNode {
            tainted_at,
            evicted: false,
            awaiting_kubelet: Vec::new(),
        }
    }
}

impl ClusterModel {
    /// Whether `node`'s kubelet is silent (its node NotReady).
    pub fn kubelet_silent(&self, node: &str) -> bool {
        self.silent_nodes.contains_key(node)
    }

    /// The node lifecycle controller marks `node` Ready `Unknown`.
    pub(super) fn node_not_ready(&mut self, node: &str) -> Applied {
        let mut applied = Applied::default();
        let Some(mut n) = self.endpoints.node(node).cloned() else {
            return applied;
        };
        if self.kubelet_silent(node) {
            return applied;
        }
        n.ready = false;
        applied.events.extend(self.endpoints.upsert_node(n));
        self.silent_nodes
            .insert(node.to_owned(), SilentNode::since(self.now));
        let pods = self.live_pods_on(node);
        if NodeCondition::Unknown.marks_pods_not_ready() {
            for pod in &pods {
                // The kubelet's own view is gone too: a restarted kubelet probes afresh.
                self.containers_ready.remove(pod);
                if self.endpoints.pod(pod).is_some_and(|p| p.ready) {
                    applied.events.push(EventKind::KubeEvent {
                        kind: EventType::Warning,
                        reason: "NodeNotReady".into(),
                        message: "Node is not ready".into(),
                        object: format!("pod/{pod}"),
                    });
                    applied.events.extend(self.set_ready_condition(pod, false));
                }
            }
        }
        applied.pod_ops.push(PodOp::Kubelet {
            node: node.to_owned(),
            running: false,
            pods,
        });
        applied
    }

    /// `node`'s kubelet reports again.
    pub(super) fn node_ready_again(&mut self, node: &str) -> Applied {
        let mut applied = Applied::default();
        let Some(mut n) = self.endpoints.node(node).cloned() else {
            return applied;
        };
        let Some(silent) = self.silent_nodes.remove(node) else {
            return applied;
        };
        n.ready = true;
        applied.events.extend(self.endpoints.upsert_node(n));
        for (pod, termination) in silent.awaiting_kubelet {
            applied.pod_ops.push(PodOp::Stop { pod, termination });
        }
        applied.pod_ops.push(PodOp::Kubelet {
            node: node.to_owned(),
            running: true,
            pods: self.live_pods_on(node),
        });
        applied
    }

    /// A pod's termination, or — when its node's kubelet is silent — nothing yet: the
    /// kubelet carries it out when it returns.
    pub(super) fn termination_op(&mut self, pod: &str, node: &str) -> Option<PodOp> {
        let termination = self.revision_of(pod).termination.clone();
        match self.silent_nodes.get_mut(node) {
            Some(silent) => {
                silent.awaiting_kubelet.push((pod.to_owned(), termination));
                None
            }
            None => Some(PodOp::Stop {
                pod: pod.to_owned(),
                termination,
            }),
        }
    }

    /// A node is deleted: pod garbage collection removes the pods bound to it, so their
    /// terminations no longer wait for its kubelet.
    pub(super) fn forget_node(&mut self, node: &str) -> Vec<PodOp> {
        self.silent_nodes
            .remove(node)
            .map(|s| {
                s.awaiting_kubelet
                    .into_iter()
                    .map(|(pod, termination)| PodOp::Stop { pod, termination })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The next moment something happens without an action (model time): a taint-based
    /// eviction.
    pub fn next_timer(&self) -> Option<Duration> {
        self.silent_nodes
            .iter()
            .filter(|(node, s)| !s.evicted && !self.live_pods_on(node).is_empty())
            .filter_map(|(_, s)| {
                node_lifecycle::eviction_at(s.tainted_at, Some(self.not_ready_toleration))
            })
            .min()
    }

    /// The silent nodes whose pods are due for eviction at the model's time.
    pub fn evictions_due(&self) -> Vec<String> {
        self.silent_nodes
            .iter()
            .filter(|(_, s)| {
                !s.evicted
                    && node_lifecycle::eviction_at(s.tainted_at, Some(self.not_ready_toleration))
                        .is_some_and(|at| at <= self.now)
            })
            .map(|(node, _)| node.clone())
            .collect()
    }

    /// Carries out what is due at the model's time: the taint eviction controller deletes the
    /// pods of nodes tainted for longer than their toleration; the ReplicaSet replaces them.
    pub fn advance(&mut self) -> Result<Applied, Unschedulable> {
        let mut applied = Applied::default();
        for node in self.evictions_due() {
            if let Some(s) = self.silent_nodes.get_mut(&node) {
                s.evicted = true;
            }
            let pods = self.live_pods_on(&node);
            for pod in &pods {
                applied.events.push(EventKind::KubeEvent {
                    kind: EventType::Normal,
                    reason: "TaintManagerEviction".into(),
                    message: format!("Marking for deletion Pod {}/{pod}", self.namespace()),
                    object: format!("pod/{pod}"),
                });
            }
            let replaced = self.delete_and_replace(pods)?;
            applied.events.extend(replaced.events);
            applied.pod_ops.extend(replaced.pod_ops);
        }
        applied.merge(self.schedule_pending());
        Ok(applied)
    }

    /// Pods on `node` that are not terminating.
    pub(super) fn live_pods_on(&self, node: &str) -> Vec<String> {
        self.endpoints
            .pods()
            .filter(|p| p.node == node && !p.terminating)
            .map(|p| p.name.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::load_scenario_str;

    const SCENARIO: &str = r#"
apiVersion: harness/v1alpha1
kind: Scenario
metadata: { name: t }
cluster:
  zones:
    - { name: a, nodes: [{ name: a-1, allocatableCpu: "4" }, { name: a-2, allocatableCpu: "4" }] }
    - { name: b, nodes: [{ name: b-1, allocatableCpu: "4" }] }
service:
  name: s
  replicas: 3
  serviceTime: { fixed: 5ms }
  placement: { nodes: [a-1, a-2] }
  notReadyToleration: 60s
load:
  duration: 10m
  generators: [{ name: g, zone: a, rate: 10 }]
"#;

    fn model() -> ClusterModel {
        let scenario = load_scenario_str(SCENARIO, "t.yaml", None).unwrap();
        let mut m = ClusterModel::new(&scenario, 7);
        m.create_pods(3).unwrap();
        for p in ["pod-0", "pod-1", "pod-2"] {
            m.set_pod_ready(p, true);
        }
        m
    }

    fn on(m: &ClusterModel, node: &str) -> Vec<String> {
        m.live_pods_on(node)
    }

    fn ready(m: &ClusterModel) -> Vec<String> {
        m.endpoints()
            .pods()
            .filter(|p| p.ready)
            .map(|p| p.name.clone())
            .collect()
    }

    #[test]
    fn pods_of_a_silent_node_are_not_ready_and_come_back_with_their_probes() {
        let mut m = model();
        let node = m.endpoints().pod("pod-0").unwrap().node.clone();
        let victims = on(&m, &node);
        m.set_time(Duration::from_secs(10));
        let down = m.node_not_ready(&node);
        assert!(down.pod_ops.contains(&PodOp::Kubelet {
            node: node.clone(),
            running: false,
            pods: victims.clone(),
        }));
        for pod in &victims {
            assert!(!m.endpoints().pod(pod).unwrap().ready, "{pod}");
            // The silent kubelet's probes cannot reach the API.
            assert!(m.set_pod_ready(pod, true).is_empty());
            assert!(!m.endpoints().pod(pod).unwrap().ready);
        }
        m.set_time(Duration::from_secs(30));
        let up = m.node_ready_again(&node);
        assert!(up.pod_ops.contains(&PodOp::Kubelet {
            node: node.clone(),
            running: true,
            pods: victims.clone(),
        }));
        // The restarted kubelet's probes pass: the pods are back.
        for pod in &victims {
            m.set_pod_ready(pod, true);
        }
        assert_eq!(ready(&m).len(), 3);
        assert_eq!(m.next_timer(), None, "nothing left to evict");
    }

    #[test]
    fn past_the_toleration_the_pods_are_evicted_and_recreated_elsewhere() {
        let mut m = model();
        let node = m.endpoints().pod("pod-0").unwrap().node.clone();
        let victims = on(&m, &node);
        m.set_time(Duration::from_secs(10));
        m.node_not_ready(&node);
        assert_eq!(m.next_timer(), Some(Duration::from_secs(70)));
        m.set_time(Duration::from_secs(69));
        assert!(m.advance().unwrap().pod_ops.is_empty(), "not yet");
        m.set_time(Duration::from_secs(70));
        let evicted = m.advance().unwrap();
        let reasons: Vec<&str> = evicted
            .events
            .iter()
            .filter_map(|e| match e {
                EventKind::KubeEvent { reason, .. } => Some(reason.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(reasons.len(), victims.len());
        assert!(reasons.iter().all(|r| *r == "TaintManagerEviction"));
        // Replacements, none on the silent node; no termination yet: its kubelet is silent.
        let started: Vec<&str> = evicted
            .pod_ops
            .iter()
            .filter_map(|op| match op {
                PodOp::Start { node, .. } => Some(node.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(started.len(), victims.len());
        assert!(started.iter().all(|n| *n != node));
        assert!(
            !evicted
                .pod_ops
                .iter()
                .any(|op| matches!(op, PodOp::Stop { .. }))
        );
        assert_eq!(m.next_timer(), None);
        for pod in &victims {
            assert!(m.endpoints().pod(pod).unwrap().terminating);
        }
        // The kubelet returns: it terminates the evicted pods; nothing is left to probe.
        let up = m.node_ready_again(&node);
        let stopped: Vec<&str> = up
            .pod_ops
            .iter()
            .filter_map(|op| match op {
                PodOp::Stop { pod, .. } => Some(pod.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            stopped,
            victims.iter().map(String::as_str).collect::<Vec<_>>()
        );
        assert!(up.pod_ops.contains(&PodOp::Kubelet {
            node,
            running: true,
            pods: Vec::new()
        }));
    }

    #[test]
    fn a_kubelet_back_before_the_toleration_cancels_the_eviction() {
        let mut m = model();
        let node = m.endpoints().pod("pod-0").unwrap().node.clone();
        m.set_time(Duration::from_secs(10));
        m.node_not_ready(&node);
        m.set_time(Duration::from_secs(69));
        m.node_ready_again(&node);
        assert_eq!(m.next_timer(), None);
        m.set_time(Duration::from_secs(500));
        assert_eq!(m.advance().unwrap(), Applied::default());
    }
}

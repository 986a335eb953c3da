//! Pods the scheduler could not place (Pending), as in kubernetes/kubernetes v1.34: the
//! ReplicaSet controller creates its pods whether or not a node can take them
//! (`pkg/controller/replicaset/replica_set.go`, `manageReplicas`); a pod no node fits stays
//! Pending with a `FailedScheduling` warning (`pkg/scheduler/schedule_one.go`,
//! `handleSchedulingFailure`) and is retried when the cluster changes — a node added, Ready
//! again, relabelled or resized (the scheduling queue's cluster events,
//! `pkg/scheduler/internal/queue`). A Pending pod counts as a replica of its ReplicaSet, is
//! never an endpoint, and is the first to go in a scale-down (`ActivePods.Less`: unassigned
//! before assigned). It is named when created, so it keeps its name when it is placed.

use kube_model::EventType;

use super::{Applied, ClusterModel};
use crate::measure::EventKind;

impl ClusterModel {
    /// Creates `count` pods for the ReplicaSet: each is placed now or, where no node fits,
    /// left Pending with a `FailedScheduling` warning.
    pub(super) fn create_or_pend(&mut self, count: u32) -> Applied {
        let mut applied = Applied::default();
        for _ in 0..count {
            match self.choose_node() {
                Ok(node) => {
                    let pod = self.allocate_pod();
                    applied.merge(self.bind_pod(pod, node));
                }
                Err(why) => {
                    let pod = self.allocate_pod();
                    applied.events.push(EventKind::KubeEvent {
                        kind: EventType::Warning,
                        reason: "FailedScheduling".into(),
                        message: why.to_string(),
                        object: format!("pod/{pod}"),
                    });
                    self.pending.push(pod);
                }
            }
        }
        applied
    }

    /// The scheduler's retry after a cluster change: Pending pods, oldest first, are placed
    /// while some node fits.
    pub(super) fn schedule_pending(&mut self) -> Applied {
        let mut applied = Applied::default();
        while let Some(pod) = self.pending.first().cloned() {
            let Ok(node) = self.choose_node() else {
                break;
            };
            self.pending.remove(0);
            applied.merge(self.bind_pod(pod, node));
        }
        applied
    }

    /// Removes a Pending pod that is deleted (nothing ran, so nothing terminates); false when
    /// `pod` is not Pending.
    pub(super) fn forget_pending(&mut self, pod: &str) -> bool {
        let Some(i) = self.pending.iter().position(|p| p == pod) else {
            return false;
        };
        self.pending.remove(i);
        self.created.remove(pod);
        self.pod_revision.remove(pod);
        true
    }

    /// The Pending pods, in creation order.
    pub fn pending_pods(&self) -> &[String] {
        &self.pending
    }
}

#[cfg(test)]
mod tests {
    use crate::control_plane::cluster::{ClusterModel, PodOp};
    use crate::measure::EventKind;
    use crate::scenario::load_scenario_str;
    use crate::scenario::model::Action;

    const SCENARIO: &str = r#"
apiVersion: harness/v1alpha1
kind: Scenario
metadata: { name: p }
cluster:
  zones:
    - { name: a, nodes: [{ name: a-1, allocatableCpu: "2" }] }
    - { name: b, nodes: [{ name: b-1, allocatableCpu: "2" }] }
service:
  name: svc
  replicas: 2
  placement: { zones: [b] }
  serviceTime: { fixed: 1ms }
load:
  duration: 60s
  generators: [{ name: g, zone: a, rate: 1 }]
"#;

    fn started(ops: &[PodOp]) -> Vec<String> {
        ops.iter()
            .filter_map(|op| match op {
                PodOp::Start { pod, .. } => Some(pod.clone()),
                _ => None,
            })
            .collect()
    }

    /// A random scenario found the model refusing (and the run failing with exit 3) when a
    /// replacement had nowhere to go: Kubernetes leaves it Pending and places it when a node
    /// fits again.
    #[test]
    fn a_replacement_with_nowhere_to_go_is_pending_until_a_node_fits() {
        let scenario = load_scenario_str(SCENARIO, "p.yaml", None).unwrap();
        let mut model = ClusterModel::new(&scenario, 1);
        model.create_pods(2).unwrap();
        let remove = Action::RemoveNode { node: "b-1".into() };
        let applied = model.apply(&remove).unwrap();
        assert!(started(&applied.pod_ops).is_empty(), "{applied:?}");
        assert_eq!(model.pending_pods(), ["pod-2", "pod-3"]);
        assert!(applied.events.iter().any(|e| matches!(
            e,
            EventKind::KubeEvent { reason, object, .. }
                if reason == "FailedScheduling" && object == "pod/pod-2"
        )));

        // A scale-down takes a Pending pod first (of two created at once, the lower UID: here
        // the name).
        let down = model.scale_to(1).unwrap();
        assert!(
            down.pod_ops.is_empty(),
            "nothing ran, nothing stops: {down:?}"
        );
        assert_eq!(model.pending_pods(), ["pod-3"]);

        // A new node in the zone takes it, under its name.
        let add = Action::AddNode {
            zone: "b".into(),
            name: "b-2".into(),
            allocatable_millicpu: 2000,
            ready: true,
        };
        let applied = model.apply(&add).unwrap();
        assert_eq!(started(&applied.pod_ops), ["pod-3"]);
        assert!(model.pending_pods().is_empty());
    }
}

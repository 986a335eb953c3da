//! The load balancer's pod readiness gate (`loadBalancer.readinessGate`), as the AWS Load
//! Balancer Controller injects one per target group: the pod's `Ready` condition is its
//! containers' readiness AND the gate's condition (`pkg/kubelet/status/generate.go`,
//! GeneratePodReadyCondition, release-1.34: "True if all containers in a pod are ready AND all
//! matching conditions specified in the ReadinessGates have status equal to True"). The gate
//! condition follows the pod's target health: True while the load balancer routes to the
//! target, False otherwise. (The controller's documentation, `docs/deploy/pod_readiness_gate.md`
//! of kubernetes-sigs/aws-load-balancer-controller, says the condition is True "only when the
//! corresponding target ... shows a health state of Healthy"; that it turns False again when a
//! registered target turns unhealthy is this model's reading.) A pod is registered from its
//! containers' readiness (the
//! controller registers pods whose containers are ready even while the gate holds `Ready`
//! back), which is what [`ClusterModel::gate_feed`] lists.
//!
//! What the gate changes: the Deployment controller counts only `Ready` pods as available, so
//! a rollout deletes old pods only once new targets are healthy. What it does not change: a
//! deleted pod still leaves the endpoints at once and its target is still deregistered a
//! `deregistrationLag` later, so a pod that stops serving at SIGTERM still gets requests.

use super::ClusterModel;
use crate::measure::EventKind;

impl ClusterModel {
    /// Whether pods carry the load balancer's readiness gate.
    pub fn has_readiness_gate(&self) -> bool {
        self.readiness_gate
    }

    /// The pods the load balancer's controller registers: with the gate, those whose
    /// containers are ready (not terminating); `None` without the gate (the ready endpoints).
    pub fn gate_feed(&self) -> Option<Vec<String>> {
        self.readiness_gate.then(|| {
            self.endpoints
                .pods()
                .filter(|p| !p.terminating && self.containers_ready.contains(&p.name))
                .map(|p| p.name.clone())
                .collect()
        })
    }

    /// The load balancer reports the pod's target healthy (routable) or not: the gate's
    /// condition follows. Without the gate, or for a terminating or unknown pod, nothing
    /// happens.
    pub fn set_target_healthy(&mut self, pod: &str, healthy: bool) -> Vec<EventKind> {
        if !self.readiness_gate || self.endpoints.pod(pod).is_none_or(|p| p.terminating) {
            return Vec::new();
        }
        let changed = if healthy {
            self.gate_passed.insert(pod.to_owned())
        } else {
            self.gate_passed.remove(pod)
        };
        if !changed {
            return Vec::new();
        }
        let ready = healthy && self.containers_ready.contains(pod);
        self.update_ready(pod, ready)
    }

    /// The probe's verdict on the containers, with the gate in place.
    pub(super) fn set_containers_ready(&mut self, pod: &str, ready: bool) -> Vec<EventKind> {
        if ready {
            self.containers_ready.insert(pod.to_owned());
        } else {
            // Its endpoint leaves the feed and its target is deregistered: the gate waits for
            // the next report once the containers are ready again.
            self.containers_ready.remove(pod);
            self.gate_passed.remove(pod);
        }
        let ready = ready && self.gate_passed.contains(pod);
        self.update_ready(pod, ready)
    }

    /// Sets `Ready` if it changes.
    fn update_ready(&mut self, pod: &str, ready: bool) -> Vec<EventKind> {
        match self.endpoints.pod(pod) {
            Some(p) if p.ready != ready => self.set_ready_condition(pod, ready),
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::PodOp;
    use super::*;
    use crate::scenario::load_scenario_str;
    use crate::scenario::model::{Action, RolloutChange};

    const SCENARIO: &str = r#"
apiVersion: harness/v1alpha1
kind: Scenario
metadata: { name: g }
cluster:
  zones: [{ name: z, nodes: [{ name: n-1, allocatableCpu: "16" }] }]
service:
  name: s
  replicas: 4
  serviceTime: { fixed: 1ms }
  rollout: { maxSurge: 1, maxUnavailable: 0 }
loadBalancer: { readinessGate: true }
load:
  duration: 1m
  generators: [{ name: g, zone: z, rate: 1, via: loadBalancer }]
"#;

    fn started(ops: &[PodOp]) -> Vec<String> {
        ops.iter()
            .filter_map(|op| match op {
                PodOp::Start { pod, .. } => Some(pod.clone()),
                PodOp::Stop { .. } | PodOp::Kubelet { .. } => None,
            })
            .collect()
    }

    fn ready(model: &ClusterModel) -> usize {
        model.endpoints().pods().filter(|p| p.ready).count()
    }

    #[test]
    fn a_pod_is_ready_only_with_its_containers_ready_and_its_target_healthy() {
        let scenario = load_scenario_str(SCENARIO, "g.yaml", None).unwrap();
        let mut model = ClusterModel::new(&scenario, 1);
        assert!(model.has_readiness_gate());
        let pods = started(&model.create_pods(1).unwrap().pod_ops);
        let pod = &pods[0];
        // The probe passes: the containers are ready, the pod is not, and it is fed to the
        // load balancer.
        assert!(model.set_pod_ready(pod, true).is_empty());
        assert_eq!(ready(&model), 0);
        assert_eq!(model.gate_feed(), Some(vec![pod.clone()]));
        // The target turns healthy: Ready.
        let events = model.set_target_healthy(pod, true);
        assert!(events.contains(&EventKind::Endpoint {
            pod: pod.clone(),
            ready: true
        }));
        assert_eq!(ready(&model), 1);
        // The same report again changes nothing.
        assert!(model.set_target_healthy(pod, true).is_empty());
        // An unhealthy target takes Ready away, and so does a failing probe.
        model.set_target_healthy(pod, false);
        assert_eq!(ready(&model), 0);
        model.set_target_healthy(pod, true);
        model.set_pod_ready(pod, false);
        assert_eq!(ready(&model), 0);
        assert_eq!(model.gate_feed(), Some(vec![]));
        // Ready again only after a new report of a healthy target.
        model.set_pod_ready(pod, true);
        assert_eq!(ready(&model), 0);
        model.set_target_healthy(pod, true);
        assert_eq!(ready(&model), 1);
    }

    #[test]
    fn a_rollout_deletes_old_pods_only_once_new_targets_are_healthy() {
        let scenario = load_scenario_str(SCENARIO, "g.yaml", None).unwrap();
        let mut model = ClusterModel::new(&scenario, 1);
        for pod in started(&model.create_pods(4).unwrap().pod_ops) {
            model.set_pod_ready(&pod, true);
            model.set_target_healthy(&pod, true);
        }
        assert_eq!(ready(&model), 4);
        let first = model
            .apply(&Action::Rollout(RolloutChange {
                restart: true,
                drain_delay: None,
                pre_stop: None,
                grace_period: None,
            }))
            .unwrap();
        let surge = started(&first.pod_ops);
        assert_eq!(surge.len(), 1, "maxSurge 1");
        // The new pod's probe passes; without its target healthy no old pod goes.
        model.set_pod_ready(&surge[0], true);
        for second in 1..=5 {
            model.set_time(Duration::from_secs(second));
            let step = model.rollout_step().unwrap();
            assert!(step.pod_ops.is_empty(), "{:?}", step.pod_ops);
        }
        // Registered and healthy: the rollout moves on (one old pod deleted, one new created).
        model.set_target_healthy(&surge[0], true);
        let step = model.rollout_step().unwrap();
        let stopped = step
            .pod_ops
            .iter()
            .filter(|op| matches!(op, PodOp::Stop { .. }))
            .count();
        assert_eq!(stopped, 1);
        assert_eq!(ready(&model), 4, "never below the desired count");
    }

    #[test]
    fn without_the_gate_target_health_does_not_touch_readiness() {
        let text = SCENARIO.replace("loadBalancer: { readinessGate: true }", "loadBalancer: {}");
        let scenario = load_scenario_str(&text, "g.yaml", None).unwrap();
        let mut model = ClusterModel::new(&scenario, 1);
        assert!(!model.has_readiness_gate());
        let pod = started(&model.create_pods(1).unwrap().pod_ops).remove(0);
        model.set_pod_ready(&pod, true);
        assert_eq!(ready(&model), 1);
        assert!(model.set_target_healthy(&pod, false).is_empty());
        assert_eq!(ready(&model), 1);
        assert_eq!(model.gate_feed(), None);
    }
}

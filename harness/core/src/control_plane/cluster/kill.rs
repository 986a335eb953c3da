//! The `killPod` action: which pod it deletes — the one it names, or the oldest or newest of
//! the running pods (in a zone, if given) — and, when there is no such pod at that moment, a
//! note saying so instead of silently doing nothing. The ReplicaSet replaces the deleted pod
//! (under a new name).

use super::{Applied, ClusterModel};
use crate::control_plane::placement::Unschedulable;
use crate::measure::EventKind;
use crate::scenario::model::{Action, PodPick};

impl ClusterModel {
    pub(super) fn kill(&mut self, action: &Action) -> Result<Applied, Unschedulable> {
        let victim = match action {
            Action::KillPod { pod } => {
                let name = format!("pod-{pod}");
                let running = self.endpoints.pod(&name).is_some_and(|p| !p.terminating);
                running.then_some(name)
            }
            Action::KillPickedPod { pick, zone } => self.pick(*pick, zone.as_deref()),
            _ => None,
        };
        match victim {
            Some(pod) => self.delete_and_replace(vec![pod]),
            None => Ok(Applied {
                events: vec![EventKind::Note {
                    message: format!(
                        "`{action}` found no such running pod (running: {}); nothing was killed",
                        self.running_pods().join(", ")
                    ),
                }],
                pod_ops: Vec::new(),
            }),
        }
    }

    /// The oldest or newest running pod, in `zone` if given; among pods created at the same
    /// moment the index decides (pods are numbered in creation order).
    fn pick(&self, pick: PodPick, zone: Option<&str>) -> Option<String> {
        let candidates = self
            .endpoints
            .pods()
            .filter(|p| !p.terminating && zone.is_none_or(|z| p.zone == z))
            .map(|p| {
                let index = p
                    .name
                    .trim_start_matches("pod-")
                    .parse::<u64>()
                    .unwrap_or(0);
                ((self.created.get(&p.name).copied(), index), p.name.clone())
            });
        match pick {
            PodPick::Oldest => candidates.min_by_key(|(key, _)| *key),
            PodPick::Newest => candidates.max_by_key(|(key, _)| *key),
        }
        .map(|(_, name)| name)
    }

    /// Names of the pods not terminating, in index order.
    fn running_pods(&self) -> Vec<String> {
        let mut pods: Vec<String> = self
            .endpoints
            .pods()
            .filter(|p| !p.terminating)
            .map(|p| p.name.clone())
            .collect();
        pods.sort_by_key(|p| p.trim_start_matches("pod-").parse::<u64>().unwrap_or(0));
        pods
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::PodOp;
    use super::*;
    use crate::scenario::load_scenario_str;

    const SCENARIO: &str = r#"
apiVersion: harness/v1alpha1
kind: Scenario
metadata: { name: k }
cluster:
  zones:
    - { name: a, nodes: [{ name: a-1, allocatableCpu: "8" }] }
    - { name: b, nodes: [{ name: b-1, allocatableCpu: "8" }] }
service:
  name: s
  replicas: 4
  serviceTime: { fixed: 1ms }
  placement:
    topologySpreadConstraints:
      - { maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule }
load:
  duration: 1m
  generators: [{ name: g, zone: a, rate: 1 }]
"#;

    fn deleted(applied: &Applied) -> Vec<String> {
        applied
            .pod_ops
            .iter()
            .filter_map(|op| match op {
                PodOp::Stop { pod, .. } => Some(pod.clone()),
                PodOp::Start { .. } | PodOp::Kubelet { .. } => None,
            })
            .collect()
    }

    #[test]
    fn picks_by_age_then_index_and_notes_a_missing_pod() {
        let scenario = load_scenario_str(SCENARIO, "k.yaml", None).unwrap();
        let mut model = ClusterModel::new(&scenario, 1);
        model.create_pods(4).unwrap();
        model.set_time(Duration::from_secs(5));
        let oldest = Action::KillPickedPod {
            pick: PodPick::Oldest,
            zone: None,
        };
        let applied = model.apply(&oldest).unwrap();
        assert_eq!(
            deleted(&applied),
            ["pod-0"],
            "created together: lowest index"
        );
        // pod-4 replaced pod-0 at 5 s: now the newest.
        let newest = Action::KillPickedPod {
            pick: PodPick::Newest,
            zone: None,
        };
        assert_eq!(deleted(&model.apply(&newest).unwrap()), ["pod-4"]);
        let in_b = model
            .endpoints()
            .pods()
            .filter(|p| p.zone == "b" && !p.terminating)
            .map(|p| p.name.clone())
            .min_by_key(|p| p.trim_start_matches("pod-").parse::<u64>().unwrap())
            .unwrap();
        let zone_b = Action::KillPickedPod {
            pick: PodPick::Oldest,
            zone: Some("b".into()),
        };
        assert_eq!(deleted(&model.apply(&zone_b).unwrap()), [in_b]);

        // pod-0 is terminating: killing it again deletes nothing and creates nothing.
        let again = model.apply(&Action::KillPod { pod: 0 }).unwrap();
        assert!(again.pod_ops.is_empty(), "{:?}", again.pod_ops);
        match &again.events[..] {
            [EventKind::Note { message }] => assert!(
                message.starts_with("`kill pod-0` found no such running pod (running: pod-"),
                "{message}"
            ),
            other => panic!("{other:?}"),
        }
    }
}

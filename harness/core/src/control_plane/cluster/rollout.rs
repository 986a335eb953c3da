//! The Deployment controller's part of the cluster model: starting a rollout (a new revision)
//! and stepping it with the ported rolling-update reconcile
//! (`kube_model::workloads::rollout`), which decides which new pods to create and which old
//! ones to delete.

use super::{Applied, ClusterModel};
use crate::control_plane::placement::Unschedulable;
use crate::measure::{EventKind, RolloutStage};
use crate::scenario::model::{IntOrPercent, RolloutChange};
use kube_model::workloads;
use kube_model::workloads::rollout::{self as rolling, PodView, RolloutAction, RolloutSpec};

impl ClusterModel {
    /// Starts a rollout of a new revision with `change` applied.
    pub(super) fn start_rollout(&mut self, change: &RolloutChange) -> Vec<EventKind> {
        let mut next = self.current_revision().clone();
        next.number += 1;
        if let Some(delay) = change.drain_delay {
            next.app.drain_delay = delay;
        }
        if let Some(pre_stop) = &change.pre_stop {
            next.termination.pre_stop = pre_stop.clone();
        }
        if let Some(grace) = change.grace_period {
            next.termination.grace_period = grace;
        }
        let number = next.number;
        self.revisions.push(next);
        self.rollout = Some((number, self.now));
        vec![EventKind::Rollout {
            revision: number,
            stage: RolloutStage::Started,
        }]
    }

    fn rollout_spec(&self) -> RolloutSpec {
        let convert = |v: IntOrPercent| match v {
            IntOrPercent::Int(n) => workloads::IntOrPercent::Int(n as i32),
            IntOrPercent::Percent(p) => workloads::IntOrPercent::Percent(p as i32),
        };
        RolloutSpec {
            replicas: self.desired as i32,
            max_surge: convert(self.strategy.max_surge),
            max_unavailable: convert(self.strategy.max_unavailable),
            min_ready_seconds: self.strategy.min_ready,
        }
    }

    /// Every pod of both ReplicaSets as the Deployment controller counts them, Pending ones
    /// included (never ready).
    fn pod_views(&self, new_revision: u32) -> Vec<PodView> {
        let revision = |name: &str| {
            if self.pod_revision.get(name) == Some(&new_revision) {
                workloads::Revision::New
            } else {
                workloads::Revision::Old
            }
        };
        let placed = self.endpoints.pods().map(|p| PodView {
            name: p.name.clone(),
            revision: revision(&p.name),
            created_at: self.created.get(&p.name).copied().unwrap_or_default(),
            ready_since: self.ready_since.get(&p.name).copied(),
            terminating: p.terminating,
        });
        let pending = self.pending.iter().map(|name| PodView {
            name: name.clone(),
            revision: revision(name),
            created_at: self.created.get(name).copied().unwrap_or_default(),
            ready_since: None,
            terminating: false,
        });
        placed.chain(pending).collect()
    }

    /// One pass of the Deployment controller over a rollout in progress: creates new pods,
    /// deletes old ones, or records the completion. Call it whenever pods change or time
    /// passes (minReadySeconds).
    pub fn rollout_step(&mut self) -> Result<Applied, Unschedulable> {
        let Some((revision, _started)) = self.rollout else {
            return Ok(Applied::default());
        };
        let spec = self.rollout_spec();
        let views = self.pod_views(revision);
        let mut applied = Applied::default();
        for action in rolling::reconcile(&spec, &views, self.now) {
            let step = match action {
                RolloutAction::CreateNew(n) => self.create_or_pend(n),
                RolloutAction::DeleteOld(pods) | RolloutAction::DeleteNew(pods) => {
                    self.delete_pods(&pods)
                }
            };
            applied.events.extend(step.events);
            applied.pod_ops.extend(step.pod_ops);
        }
        let views = self.pod_views(revision);
        if rolling::is_complete(&spec, &views, self.now) {
            self.rollout = None;
            applied.events.push(EventKind::Rollout {
                revision,
                stage: RolloutStage::Complete,
            });
        }
        Ok(applied)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::PodOp;
    use super::*;
    use crate::scenario::load_scenario_str;
    use crate::scenario::model::Action;

    const SCENARIO: &str = r#"
apiVersion: harness/v1alpha1
kind: Scenario
metadata: { name: r }
cluster:
  zones: [{ name: z, nodes: [{ name: n-1, allocatableCpu: "16" }, { name: n-2, allocatableCpu: "16" }] }]
service:
  name: s
  replicas: 12
  serviceTime: { fixed: 1ms }
  rollout: { maxSurge: 25%, maxUnavailable: 0 }
load:
  duration: 1m
  generators: [{ name: g, zone: z, rate: 1 }]
"#;

    /// Plays pod operations: started pods become ready, stopped ones go.
    fn settle(model: &mut ClusterModel, ops: Vec<PodOp>) {
        for op in ops {
            match op {
                PodOp::Start { pod, .. } => {
                    model.set_pod_ready(&pod, true);
                }
                PodOp::Stop { pod, .. } => {
                    model.pod_gone(&pod);
                }
                PodOp::Kubelet { .. } => {}
            }
        }
    }

    #[test]
    fn rollout_replaces_every_pod_within_the_surge_and_availability_bounds() {
        let scenario = load_scenario_str(SCENARIO, "r.yaml", None).unwrap();
        let mut model = ClusterModel::new(&scenario, 1);
        let created = model.create_pods(12).unwrap();
        settle(&mut model, created.pod_ops);
        let before: Vec<String> = model.endpoints().pods().map(|p| p.name.clone()).collect();

        let change = RolloutChange {
            restart: true,
            drain_delay: None,
            pre_stop: None,
            grace_period: None,
        };
        let first = model.apply(&Action::Rollout(change)).unwrap();
        assert!(first.events.iter().any(|e| matches!(
            e,
            EventKind::Rollout {
                stage: RolloutStage::Started,
                ..
            }
        )));
        let mut pending = first.pod_ops;
        let mut now = Duration::ZERO;
        let mut completed = false;
        for _ in 0..100 {
            // maxSurge 25% of 12 = 3 above, maxUnavailable 0: 12..=15 live pods, >= 12 ready.
            let live = model.endpoints().pods().filter(|p| !p.terminating).count();
            let ready = model.endpoints().pods().filter(|p| p.ready).count();
            assert!(live <= 15, "{live} live pods");
            assert!(ready >= 12, "{ready} ready pods");
            settle(&mut model, std::mem::take(&mut pending));
            now += Duration::from_secs(1);
            model.set_time(now);
            let step = model.rollout_step().unwrap();
            completed |= step.events.iter().any(|e| {
                matches!(
                    e,
                    EventKind::Rollout {
                        stage: RolloutStage::Complete,
                        ..
                    }
                )
            });
            pending = step.pod_ops;
            if completed && pending.is_empty() {
                break;
            }
        }
        assert!(completed);
        assert!(!model.rollout_in_progress());
        let after: Vec<String> = model.endpoints().pods().map(|p| p.name.clone()).collect();
        assert_eq!(after.len(), 12);
        assert!(
            after.iter().all(|p| !before.contains(p)),
            "every pod replaced"
        );
        assert_eq!(model.current_revision().number, 1);
    }
}

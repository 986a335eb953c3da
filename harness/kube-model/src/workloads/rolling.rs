// Ported from kubernetes/kubernetes v1.34 (release-1.34 line; source read at
// pkg/controller/deployment/rolling.go @95f08499d652: rolloutRolling, reconcileNewReplicaSet,
// reconcileOldReplicaSets, cleanupUnhealthyReplicas, scaleDownOldReplicaSetsForRollingUpdate;
// scaleReplicaSetAndRecordEvent's "no change, no scale" rule from sync.go).
//! One rolling-update pass of the Deployment controller over ReplicaSet sizes.
//!
//! A pass first tries to grow the new ReplicaSet ([`reconcile_new_replica_set`]); only when
//! that changes nothing does it shrink old ReplicaSets ([`reconcile_old_replica_sets`]): first
//! by their unavailable pods (those never count towards availability), then by as many
//! available pods as `minAvailable` allows. Old sets are visited oldest first.
//!
//! These functions change `spec.replicas` only; which pods go is the ReplicaSet controller's
//! choice (see [`super::pod_ranking`]).

use super::deployment_util::{
    DeploymentSpecView, DeploymentUtilError, ReplicaSetView, available_count, max_unavailable,
    new_rs_new_replicas, replica_count,
};

/// What a pass decided for the new ReplicaSet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NewRsScale {
    /// The size is already right (or cannot grow now).
    Unchanged,
    /// Set `spec.replicas` of the new ReplicaSet to this.
    To(i32),
}

/// `reconcileNewReplicaSet`: shrink the new set to `spec.replicas` if it is larger, otherwise
/// grow it as far as `NewRSNewReplicas` allows.
pub fn reconcile_new_replica_set(
    d: &DeploymentSpecView,
    all_rss: &[ReplicaSetView],
    new_rs: &ReplicaSetView,
) -> Result<NewRsScale, DeploymentUtilError> {
    if new_rs.replicas == d.replicas {
        return Ok(NewRsScale::Unchanged);
    }
    let target = if new_rs.replicas > d.replicas {
        d.replicas
    } else {
        new_rs_new_replicas(d, all_rss, new_rs)?
    };
    // scaleReplicaSetAndRecordEvent: no update when the size would not change.
    Ok(if target == new_rs.replicas {
        NewRsScale::Unchanged
    } else {
        NewRsScale::To(target)
    })
}

/// How much a pass shrank the old ReplicaSets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OldRsScaleDown {
    /// Replicas removed because they were not available (`cleanupUnhealthyReplicas`).
    pub cleaned_up: i32,
    /// Replicas removed within the availability budget
    /// (`scaleDownOldReplicaSetsForRollingUpdate`).
    pub scaled_down: i32,
}

impl OldRsScaleDown {
    /// `reconcileOldReplicaSets` reports "scaled" when either step removed something.
    pub fn scaled(&self) -> bool {
        self.cleaned_up + self.scaled_down > 0
    }
}

/// Upstream sorts old sets with `ReplicaSetsByCreationTimestamp`: oldest first, name breaks
/// ties.
fn sort_by_creation(rss: &mut [ReplicaSetView]) {
    rss.sort_by(|a, b| {
        a.created_at
            .cmp(&b.created_at)
            .then_with(|| a.name.cmp(&b.name))
    });
}

/// `reconcileOldReplicaSets`. `old_rss` are the active old sets (`FilterActiveReplicaSets`:
/// `spec.replicas > 0`); their `replicas` are lowered in place. `all_rss` must hold the same
/// old sets plus the new one, as upstream's `allRSs`.
///
/// The first budget, `allPods - minAvailable - newRSUnavailable`, keeps unavailable new pods
/// from licensing further scale-down; unhealthy old replicas are cleaned up within it. Then the
/// old sets shrink by `available - minAvailable` (available counted over all sets).
pub fn reconcile_old_replica_sets(
    d: &DeploymentSpecView,
    all_rss: &[ReplicaSetView],
    old_rss: &mut [ReplicaSetView],
    new_rs: &ReplicaSetView,
) -> OldRsScaleDown {
    if replica_count(old_rss) == 0 {
        return OldRsScaleDown::default();
    }
    let all_pods = replica_count(all_rss);
    let min_available = d.replicas - max_unavailable(d);
    let new_rs_unavailable = new_rs.replicas - new_rs.available;
    let max_scaled_down = all_pods - min_available - new_rs_unavailable;
    if max_scaled_down <= 0 {
        return OldRsScaleDown::default();
    }
    let cleaned_up = cleanup_unhealthy_replicas(old_rss, max_scaled_down);
    // allRSs = append(oldRSs, newRS): the cleaned-up sizes, the same availability.
    let mut after_cleanup: Vec<ReplicaSetView> = old_rss.to_vec();
    after_cleanup.push(new_rs.clone());
    let scaled_down = scale_down_old_replica_sets_for_rolling_update(d, &after_cleanup, old_rss);
    OldRsScaleDown {
        cleaned_up,
        scaled_down,
    }
}

/// `cleanupUnhealthyReplicas`: oldest set first, remove each set's unavailable replicas
/// (`spec.replicas - status.availableReplicas`) until `max_cleanup` is used up. Returns how
/// many were removed.
pub fn cleanup_unhealthy_replicas(old_rss: &mut [ReplicaSetView], max_cleanup: i32) -> i32 {
    sort_by_creation(old_rss);
    let mut total = 0;
    for rs in old_rss.iter_mut() {
        if total >= max_cleanup {
            break;
        }
        if rs.replicas == 0 || rs.replicas == rs.available {
            continue;
        }
        let count = (max_cleanup - total).min(rs.replicas - rs.available);
        rs.replicas -= count;
        total += count;
    }
    total
}

/// `scaleDownOldReplicaSetsForRollingUpdate`: if more pods are available (over `all_rss`) than
/// `minAvailable`, shrink old sets, oldest first, by the excess. Returns how many replicas were
/// removed.
pub fn scale_down_old_replica_sets_for_rolling_update(
    d: &DeploymentSpecView,
    all_rss: &[ReplicaSetView],
    old_rss: &mut [ReplicaSetView],
) -> i32 {
    let min_available = d.replicas - max_unavailable(d);
    let available = available_count(all_rss);
    if available <= min_available {
        return 0;
    }
    sort_by_creation(old_rss);
    let wanted = available - min_available;
    let mut total = 0;
    for rs in old_rss.iter_mut() {
        if total >= wanted {
            break;
        }
        if rs.replicas == 0 {
            continue;
        }
        let count = rs.replicas.min(wanted - total);
        rs.replicas -= count;
        total += count;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::deployment_util::Strategy;
    use crate::workloads::intstr::IntOrPercent;

    fn deployment(replicas: i32, surge: i32, unavailable: i32) -> DeploymentSpecView {
        DeploymentSpecView {
            replicas,
            strategy: Strategy::rolling(IntOrPercent::Int(surge), IntOrPercent::Int(unavailable)),
        }
    }

    #[test]
    fn old_sets_shrink_oldest_first() {
        let d = deployment(10, 0, 4);
        let mut old = vec![
            ReplicaSetView {
                created_at: std::time::Duration::from_secs(20),
                ..ReplicaSetView::new("b", 5, 5)
            },
            ReplicaSetView {
                created_at: std::time::Duration::from_secs(10),
                ..ReplicaSetView::new("a", 3, 3)
            },
        ];
        let new = ReplicaSetView::new("new", 2, 2);
        let mut all = old.clone();
        all.push(new.clone());
        let result = reconcile_old_replica_sets(&d, &all, &mut old, &new);
        assert_eq!(result.scaled_down, 4);
        assert_eq!(old[0].name, "a");
        assert_eq!((old[0].replicas, old[1].replicas), (0, 4));
    }
}

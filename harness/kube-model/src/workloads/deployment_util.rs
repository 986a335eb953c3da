// Ported from kubernetes/kubernetes v1.34 (release-1.34 line; source read at
// pkg/controller/deployment/util/deployment_util.go @95f08499d652: ResolveFenceposts,
// MaxUnavailable, MinAvailable, MaxSurge, NewRSNewReplicas, DeploymentComplete and the
// Get*ReplicaCountForReplicaSets sums; the same copy carries the v1.33+ terminating-replica
// helpers and none of the later podReplacementPolicy code).
//! The Deployment controller's replica arithmetic: resolving `maxSurge`/`maxUnavailable`
//! against the desired count, how far the new ReplicaSet may grow, and when a rollout is done.
//!
//! Rounding: `maxSurge` rounds up and `maxUnavailable` rounds down; when both resolve to 0,
//! `maxUnavailable` becomes 1 so the rollout can still move (upstream's "fenceposts").

use super::intstr::IntOrPercent;

/// `spec.strategy` of a Deployment. An unset field inside `rollingUpdate` is `None`; the API
/// server defaults both to 25%, but the helpers below handle the unset case as upstream does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Strategy {
    Recreate,
    RollingUpdate {
        max_surge: Option<IntOrPercent>,
        max_unavailable: Option<IntOrPercent>,
    },
}

impl Strategy {
    /// A rolling update with both limits set.
    pub fn rolling(max_surge: IntOrPercent, max_unavailable: IntOrPercent) -> Self {
        Strategy::RollingUpdate {
            max_surge: Some(max_surge),
            max_unavailable: Some(max_unavailable),
        }
    }
}

/// The parts of a Deployment the rollout arithmetic reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeploymentSpecView {
    /// `spec.replicas`.
    pub replicas: i32,
    pub strategy: Strategy,
}

/// A ReplicaSet as the Deployment controller sees it: its desired size and how many of its
/// active (not terminating) pods are available.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaSetView {
    pub name: String,
    /// `metadata.creationTimestamp`, as an offset on the caller's clock; orders old sets.
    pub created_at: std::time::Duration,
    /// `spec.replicas`.
    pub replicas: i32,
    /// `status.availableReplicas`.
    pub available: i32,
}

impl ReplicaSetView {
    pub fn new(name: &str, replicas: i32, available: i32) -> Self {
        ReplicaSetView {
            name: name.to_owned(),
            created_at: std::time::Duration::ZERO,
            replicas,
            available,
        }
    }
}

/// `NewRSNewReplicas` needs `maxSurge`; upstream fails on an unset one ("nil value for
/// IntOrString"), which API defaulting normally prevents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DeploymentUtilError {
    #[error("nil value for IntOrString")]
    MaxSurgeUnset,
}

/// `ResolveFenceposts`: `(surge, unavailable)` for `desired` replicas. An unset limit counts
/// as 0. Surge rounds up, unavailable rounds down, and if both come out 0 unavailable is 1.
pub fn resolve_fenceposts(
    max_surge: Option<&IntOrPercent>,
    max_unavailable: Option<&IntOrPercent>,
    desired: i32,
) -> (i32, i32) {
    let zero = IntOrPercent::Int(0);
    let surge = max_surge.unwrap_or(&zero).scaled_value(desired, true);
    let mut unavailable = max_unavailable
        .unwrap_or(&zero)
        .scaled_value(desired, false);
    if surge == 0 && unavailable == 0 {
        // Validation forbids 0/0 when set explicitly, but rounding down can still produce it;
        // upstream then allows one unavailable pod in case surging is blocked by quota.
        unavailable = 1;
    }
    (surge, unavailable)
}

/// [`resolve_fenceposts`] of a rolling update's limits for `spec.replicas`; None for Recreate
/// (the `IsRollingUpdate` check `MaxUnavailable` and `MaxSurge` both start with).
fn rolling_fenceposts(d: &DeploymentSpecView) -> Option<(i32, i32)> {
    let Strategy::RollingUpdate {
        max_surge,
        max_unavailable,
    } = &d.strategy
    else {
        return None;
    };
    Some(resolve_fenceposts(
        max_surge.as_ref(),
        max_unavailable.as_ref(),
        d.replicas,
    ))
}

/// `MaxUnavailable`: 0 for Recreate or for 0 replicas, never more than `spec.replicas`.
pub fn max_unavailable(d: &DeploymentSpecView) -> i32 {
    if d.replicas == 0 {
        return 0;
    }
    rolling_fenceposts(d).map_or(0, |(_, unavailable)| unavailable.min(d.replicas))
}

/// `MinAvailable`: `spec.replicas - MaxUnavailable`, 0 for Recreate.
pub fn min_available(d: &DeploymentSpecView) -> i32 {
    match d.strategy {
        Strategy::Recreate => 0,
        Strategy::RollingUpdate { .. } => d.replicas - max_unavailable(d),
    }
}

/// `MaxSurge`: 0 for Recreate.
pub fn max_surge(d: &DeploymentSpecView) -> i32 {
    rolling_fenceposts(d).map_or(0, |(surge, _)| surge)
}

/// `GetReplicaCountForReplicaSets`: the sum of `spec.replicas`.
pub fn replica_count(rss: &[ReplicaSetView]) -> i32 {
    rss.iter().map(|rs| rs.replicas).sum()
}

/// `GetAvailableReplicaCountForReplicaSets`: the sum of `status.availableReplicas`.
pub fn available_count(rss: &[ReplicaSetView]) -> i32 {
    rss.iter().map(|rs| rs.available).sum()
}

/// `NewRSNewReplicas`: the size the new ReplicaSet should have now. Rolling update: grow it
/// by as much as `spec.replicas + maxSurge` minus the pods all sets already ask for allows,
/// but never past `spec.replicas`. Recreate: `spec.replicas` at once. `maxSurge` is scaled
/// directly here (rounded up), not through the fenceposts.
pub fn new_rs_new_replicas(
    d: &DeploymentSpecView,
    all_rss: &[ReplicaSetView],
    new_rs: &ReplicaSetView,
) -> Result<i32, DeploymentUtilError> {
    match &d.strategy {
        Strategy::Recreate => Ok(d.replicas),
        Strategy::RollingUpdate { max_surge, .. } => {
            let surge = max_surge
                .as_ref()
                .ok_or(DeploymentUtilError::MaxSurgeUnset)?
                .scaled_value(d.replicas, true);
            let current = replica_count(all_rss);
            let max_total = d.replicas + surge;
            if current >= max_total {
                return Ok(new_rs.replicas);
            }
            let scale_up = (max_total - current).min(d.replicas - new_rs.replicas);
            Ok(new_rs.replicas + scale_up)
        }
    }
}

/// The Deployment status fields `DeploymentComplete` compares (`calculateStatus` in sync.go).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeploymentStatusView {
    /// `status.replicas`: active pods of all ReplicaSets.
    pub replicas: i32,
    /// `status.updatedReplicas`: active pods of the new ReplicaSet.
    pub updated_replicas: i32,
    /// `status.availableReplicas`.
    pub available_replicas: i32,
}

/// `DeploymentComplete`: every desired replica is updated and available and no old pod is
/// still active. (The `observedGeneration` check is left out: the model has no generations.)
/// Terminating pods are not active, so a rollout completes while old pods still shut down.
pub fn deployment_complete(d: &DeploymentSpecView, status: &DeploymentStatusView) -> bool {
    status.updated_replicas == d.replicas
        && status.replicas == d.replicas
        && status.available_replicas == d.replicas
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rolling(replicas: i32, surge: &str, unavailable: &str) -> DeploymentSpecView {
        DeploymentSpecView {
            replicas,
            strategy: Strategy::rolling(
                IntOrPercent::parse(surge).unwrap(),
                IntOrPercent::parse(unavailable).unwrap(),
            ),
        }
    }

    #[test]
    fn incident_fenceposts() {
        // 12 replicas, maxSurge 25%, maxUnavailable 0 -> surge 3, unavailable 0 (not 1: the
        // fencepost rule only applies when both resolve to 0).
        let d = DeploymentSpecView {
            replicas: 12,
            strategy: Strategy::rolling(IntOrPercent::percent(25), IntOrPercent::Int(0)),
        };
        assert_eq!(max_surge(&d), 3);
        assert_eq!(max_unavailable(&d), 0);
        assert_eq!(min_available(&d), 12);
    }

    #[test]
    fn default_quarter_limits_on_small_deployments() {
        // 25%/25% of 3: surge ceil(0.75) = 1, unavailable floor(0.75) = 0.
        let d = rolling(3, "25%", "25%");
        assert_eq!((max_surge(&d), max_unavailable(&d)), (1, 0));
        // 1%/1% of 2: surge 1, unavailable 0.
        let d = rolling(2, "0%", "1%");
        assert_eq!((max_surge(&d), max_unavailable(&d)), (0, 1));
    }

    #[test]
    fn new_rs_growth_is_capped_by_surge_and_desired() {
        let d = rolling(12, "25%", "0%");
        let old = ReplicaSetView::new("old", 12, 12);
        let new = ReplicaSetView::new("new", 0, 0);
        let all = [old.clone(), new.clone()];
        assert_eq!(new_rs_new_replicas(&d, &all, &new), Ok(3));
        let old = ReplicaSetView::new("old", 2, 2);
        let new = ReplicaSetView::new("new", 11, 11);
        assert_eq!(new_rs_new_replicas(&d, &[old, new.clone()], &new), Ok(12));
    }
}

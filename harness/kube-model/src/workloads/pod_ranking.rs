// Ported from kubernetes/kubernetes v1.34 (release-1.34 line; ActivePodsWithRanks.Less,
// afterOrZero, podReadyTime, logarithmicRankDiff and maxContainerRestarts of
// pkg/controller/controller_utils.go, read from a stored copy of the v1.2x+ form that has the
// pod-deletion-cost and LogarithmicScaleDown steps, plus getPodsToDelete of
// pkg/controller/replicaset/replica_set.go; cases from controller_utils_test.go
// TestSortingActivePodsWithRanks).
//! Which pods a ReplicaSet deletes first when it is scaled down.
//!
//! Rules, applied in turn until one decides: unscheduled before scheduled; Pending before
//! Unknown before Running; not ready before ready; lower `controller.kubernetes.io/pod-deletion-cost`
//! first; more colocated pods (rank) first; ready for a shorter time first; more container
//! restarts first; created more recently first. With `LogarithmicScaleDown` (on by default)
//! the two time comparisons use `floor(log2(now - t))` in nanoseconds, and pods in the same
//! bucket are ordered by UID. A zero (unset) time sorts first.

use std::time::Duration;

/// `status.phase`, as the ranking orders it (Pending < Unknown < Running).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PodPhase {
    Pending,
    Unknown,
    Running,
}

impl PodPhase {
    fn ordinal(self) -> u8 {
        match self {
            PodPhase::Pending => 0,
            PodPhase::Unknown => 1,
            PodPhase::Running => 2,
        }
    }
}

/// The pod facts the ranking reads. Times are offsets on the caller's clock; `None` is
/// Kubernetes' zero time (unset).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankedPod {
    pub name: String,
    /// `metadata.uid`: the last tie-breaker under `LogarithmicScaleDown`.
    pub uid: String,
    /// `spec.nodeName` is set.
    pub scheduled: bool,
    pub phase: PodPhase,
    /// The `Ready` condition is `True`.
    pub ready: bool,
    /// `lastTransitionTime` of the `Ready` condition (read only when ready).
    pub ready_since: Option<Duration>,
    /// Highest `restartCount` over the pod's containers.
    pub max_restarts: u32,
    /// `metadata.creationTimestamp`.
    pub created_at: Option<Duration>,
    /// `controller.kubernetes.io/pod-deletion-cost` (0 when absent or invalid).
    pub deletion_cost: i32,
    /// Active pods of the same owner on this pod's node (`getPodsRankedByRelatedPodsOnSameNode`).
    pub rank: u32,
}

impl RankedPod {
    /// A scheduled, Running pod without restarts or deletion cost, its UID its name (a
    /// model's pods have no other): what the cluster models know of their pods.
    pub fn running(
        name: &str,
        ready_since: Option<Duration>,
        created_at: Duration,
        rank: u32,
    ) -> Self {
        RankedPod {
            name: name.to_owned(),
            uid: name.to_owned(),
            scheduled: true,
            phase: PodPhase::Running,
            ready: ready_since.is_some(),
            ready_since,
            max_restarts: 0,
            created_at: Some(created_at),
            deletion_cost: 0,
            rank,
        }
    }
}

/// Feature gates that change the ranking (both on by default in v1.34).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RankingOptions {
    pub pod_deletion_cost: bool,
    pub logarithmic_scale_down: bool,
}

impl Default for RankingOptions {
    fn default() -> Self {
        RankingOptions {
            pod_deletion_cost: true,
            logarithmic_scale_down: true,
        }
    }
}

/// `afterOrZero(t1, t2)`: a zero time is "after" everything; otherwise the later time.
fn after_or_zero(t1: Option<Duration>, t2: Option<Duration>) -> bool {
    match (t1, t2) {
        (None, _) => true,
        (_, None) => false,
        (Some(a), Some(b)) => a > b,
    }
}

/// `logarithmicRankDiff(t1, t2, now)`: difference of `floor(log2(now - t))`, -1 for t >= now.
fn logarithmic_rank_diff(t1: Duration, t2: Duration, now: Duration) -> i64 {
    let rank = |t: Duration| -> i64 {
        match now.checked_sub(t) {
            Some(d) if !d.is_zero() => (d.as_nanos() as f64).log2() as i64,
            _ => -1,
        }
    };
    rank(t1) - rank(t2)
}

/// Compares two times the way steps 6 and 8 do; `None` when the times are equal.
fn compare_times(
    a: &RankedPod,
    b: &RankedPod,
    ta: Option<Duration>,
    tb: Option<Duration>,
    now: Option<Duration>,
    opts: RankingOptions,
) -> Option<bool> {
    if ta == tb {
        return None;
    }
    let (Some(ta_set), Some(tb_set), Some(now), true) = (ta, tb, now, opts.logarithmic_scale_down)
    else {
        return Some(after_or_zero(ta, tb));
    };
    let diff = logarithmic_rank_diff(ta_set, tb_set, now);
    if diff == 0 {
        return Some(a.uid < b.uid);
    }
    Some(diff < 0)
}

/// `ActivePodsWithRanks.Less`: true when `a` should be deleted before `b`. `now` is the
/// reference time for logarithmic comparisons (`None`: compare without scaling).
pub fn delete_before(
    a: &RankedPod,
    b: &RankedPod,
    now: Option<Duration>,
    opts: RankingOptions,
) -> bool {
    // 1. Unassigned < assigned.
    if a.scheduled != b.scheduled {
        return !a.scheduled;
    }
    // 2. Pending < Unknown < Running.
    if a.phase != b.phase {
        return a.phase.ordinal() < b.phase.ordinal();
    }
    // 3. Not ready < ready.
    if a.ready != b.ready {
        return !a.ready;
    }
    // 4. Lower pod-deletion-cost < higher.
    if opts.pod_deletion_cost && a.deletion_cost != b.deletion_cost {
        return a.deletion_cost < b.deletion_cost;
    }
    // 5. Doubled up < not doubled up.
    if a.rank != b.rank {
        return a.rank > b.rank;
    }
    // 6. Ready for a shorter time < longer (only when both are ready).
    if a.ready
        && b.ready
        && let Some(less) = compare_times(a, b, a.ready_since, b.ready_since, now, opts)
    {
        return less;
    }
    // 7. More restarts < fewer.
    if a.max_restarts != b.max_restarts {
        return a.max_restarts > b.max_restarts;
    }
    // 8. Newer < older.
    if let Some(less) = compare_times(a, b, a.created_at, b.created_at, now, opts) {
        return less;
    }
    false
}

/// `getPodsToDelete`: the `count` pods to delete, best candidates first.
///
/// Upstream uses Go's `sort.Sort`, which tolerates the comparator not being a strict total
/// order (the logarithmic buckets make it intransitive at bucket edges). This uses a stable
/// insertion sort on the same comparator, which never rejects an order; ties keep input order.
pub fn pods_to_delete(
    pods: &[RankedPod],
    count: usize,
    now: Duration,
    opts: RankingOptions,
) -> Vec<RankedPod> {
    if count >= pods.len() {
        return pods.to_vec();
    }
    let mut sorted: Vec<RankedPod> = Vec::with_capacity(pods.len());
    for pod in pods {
        let at = sorted
            .iter()
            .position(|placed| delete_before(pod, placed, Some(now), opts))
            .unwrap_or(sorted.len());
        sorted.insert(at, pod.clone());
    }
    sorted.truncate(count);
    sorted
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ready(name: &str, since: u64, created: u64) -> RankedPod {
        RankedPod {
            name: name.to_owned(),
            uid: name.to_owned(),
            scheduled: true,
            phase: PodPhase::Running,
            ready: true,
            ready_since: Some(Duration::from_secs(since)),
            max_restarts: 0,
            created_at: Some(Duration::from_secs(created)),
            deletion_cost: 0,
            rank: 0,
        }
    }

    #[test]
    fn unready_goes_first_then_most_recently_ready() {
        let now = Duration::from_secs(100_000);
        let mut unready = ready("unready", 0, 0);
        unready.ready = false;
        let pods = vec![ready("old", 10, 0), ready("fresh", 99_990, 99_000), unready];
        let chosen = pods_to_delete(&pods, 2, now, RankingOptions::default());
        let names: Vec<_> = chosen.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["unready", "fresh"]);
    }
}

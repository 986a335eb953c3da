//! Cases from upstream's own unit tests for the rollout arithmetic, translated to the Rust
//! models in `kube_model::workloads`. Each test names the upstream test it follows; all
//! are from kubernetes/kubernetes, v1.34 line:
//!
//! - `staging/src/k8s.io/apimachinery/pkg/util/intstr/intstr_test.go` (read @316eff8dee1b);
//! - `pkg/controller/deployment/util/deployment_util_test.go` (read from a stored copy newer
//!   than v1.34 — it already has podReplacementPolicy cases elsewhere; the tables used here
//!   belong to functions unchanged in v1.34);
//! - `pkg/controller/deployment/rolling_test.go` (tables identical in the stored copy
//!   @bb81beffb115 and in a later copy using `intstr.FromInt32`/ktesting);
//! - `pkg/controller/controller_utils_test.go` `TestSortingActivePodsWithRanks` (stored copy
//!   with the LogarithmicScaleDown and PodDeletionCost gates).

use std::time::Duration;

use kube_model::workloads::IntOrPercent;
use kube_model::workloads::deployment_util::{
    DeploymentSpecView, DeploymentStatusView, ReplicaSetView, Strategy, deployment_complete,
    max_unavailable, min_available, new_rs_new_replicas, resolve_fenceposts,
};
use kube_model::workloads::pod_ranking::{PodPhase, RankedPod, RankingOptions, delete_before};
use kube_model::workloads::rolling::{
    NewRsScale, cleanup_unhealthy_replicas, reconcile_new_replica_set, reconcile_old_replica_sets,
    scale_down_old_replica_sets_for_rolling_update,
};

fn pct(s: &str) -> IntOrPercent {
    IntOrPercent::parse(s).unwrap()
}

fn rolling(replicas: i32, surge: IntOrPercent, unavailable: IntOrPercent) -> DeploymentSpecView {
    DeploymentSpecView {
        replicas,
        strategy: Strategy::rolling(surge, unavailable),
    }
}

/// intstr_test.go `TestGetIntFromIntOrString` (the string half; `FromInt(200)` is
/// `IntOrPercent::Int(200)` by construction).
#[test]
fn intstr_get_int_or_percent_value_safely() {
    assert_eq!(IntOrPercent::parse("40%"), Ok(IntOrPercent::Percent(40)));
    for bad in ["200", "30%0", "%", "a%", "a", "40#", "40%%"] {
        assert!(
            IntOrPercent::parse(bad).is_err(),
            "{bad:?} must be rejected"
        );
    }
}

/// intstr_test.go `TestGetIntFromIntOrPercent`.
#[test]
fn intstr_get_scaled_value_from_int_or_percent() {
    assert_eq!(IntOrPercent::Int(123).scaled_value(0, false), 123);
    assert_eq!(pct("90%").scaled_value(100, true), 90);
    assert_eq!(pct("90%").scaled_value(95, true), 86);
    assert_eq!(pct("90%").scaled_value(95, false), 85);
    for bad in ["%", "90#", "#%", "90"] {
        assert!(
            IntOrPercent::parse(bad).is_err(),
            "{bad:?} must be rejected"
        );
    }
}

/// deployment_util_test.go `TestResolveFenceposts` (all values `intstr.FromString`).
#[test]
fn deployment_util_resolve_fenceposts() {
    let p = |s: &str| Some(pct(s));
    type Case = (Option<IntOrPercent>, Option<IntOrPercent>, i32, (i32, i32));
    let cases: [Case; 5] = [
        (p("0%"), p("0%"), 0, (0, 1)),
        (p("39%"), p("39%"), 10, (4, 3)),
        (None, p("39%"), 10, (0, 3)),
        (p("39%"), None, 10, (4, 0)),
        (None, None, 10, (0, 1)),
    ];
    for (i, (surge, unavailable, desired, want)) in cases.iter().enumerate() {
        let got = resolve_fenceposts(surge.as_ref(), unavailable.as_ref(), *desired);
        assert_eq!(got, *want, "case {i}");
    }
    // The two error cases ("oops" surge, "urg" unavailable) fail when the value is parsed.
    assert!(IntOrPercent::parse("oops").is_err());
    assert!(IntOrPercent::parse("urg").is_err());
}

/// deployment_util_test.go `TestNewRSNewReplicas` (allRSs holds only a 5-replica set,
/// maxUnavailable 1).
#[test]
fn deployment_util_new_rs_new_replicas() {
    let rs5 = ReplicaSetView::new("rs5", 5, 0);
    let cases = [
        ("can not scale up - to newRSReplicas", false, 1, 5, 1, 5),
        ("scale up - to depReplicas", false, 6, 2, 10, 6),
        ("recreate - to depReplicas", true, 3, 1, 1, 3),
    ];
    for (name, recreate, dep, new_replicas, surge, want) in cases {
        let d = DeploymentSpecView {
            replicas: dep,
            strategy: if recreate {
                Strategy::Recreate
            } else {
                Strategy::rolling(IntOrPercent::Int(surge), IntOrPercent::Int(1))
            },
        };
        let new_rs = ReplicaSetView::new("new", new_replicas, 0);
        let got = new_rs_new_replicas(&d, std::slice::from_ref(&rs5), &new_rs);
        assert_eq!(got, Ok(want), "{name}");
    }
}

/// deployment_util_test.go `TestMaxUnavailable` (maxSurge 1). Upstream's Recreate case has no
/// `spec.replicas`; any value gives 0.
#[test]
fn deployment_util_max_unavailable() {
    let cases = [
        ("less than replicas", 10, IntOrPercent::Int(5), 5),
        ("equal replicas", 10, IntOrPercent::Int(10), 10),
        ("greater than replicas", 5, IntOrPercent::Int(10), 5),
        ("with replicas is 0", 0, IntOrPercent::Int(10), 0),
        ("less than replicas with percents", 10, pct("50%"), 5),
        ("equal replicas with percents", 10, pct("100%"), 10),
        ("greater than replicas with percents", 5, pct("100%"), 5),
    ];
    for (name, replicas, unavailable, want) in cases {
        let d = rolling(replicas, IntOrPercent::Int(1), unavailable);
        assert_eq!(max_unavailable(&d), want, "maxUnavailable {name}");
    }
    let recreate = DeploymentSpecView {
        replicas: 10,
        strategy: Strategy::Recreate,
    };
    assert_eq!(
        max_unavailable(&recreate),
        0,
        "with Recreate deployment strategy"
    );
}

/// deployment_util_test.go `TestMinAvailable` (maxSurge 1).
#[test]
fn deployment_util_min_available() {
    let cases = [
        (
            "replicas greater than maxUnavailable",
            10,
            IntOrPercent::Int(5),
            5,
        ),
        (
            "replicas equal maxUnavailable",
            10,
            IntOrPercent::Int(10),
            0,
        ),
        (
            "replicas less than maxUnavailable",
            5,
            IntOrPercent::Int(10),
            0,
        ),
        ("replicas is 0", 0, IntOrPercent::Int(10), 0),
        (
            "greater than maxUnavailable with percents",
            10,
            pct("60%"),
            4,
        ),
        ("equal maxUnavailable with percents", 10, pct("100%"), 0),
        ("less than maxUnavailable with percents", 5, pct("100%"), 0),
    ];
    for (name, replicas, unavailable, want) in cases {
        let d = rolling(replicas, IntOrPercent::Int(1), unavailable);
        assert_eq!(min_available(&d), want, "{name}");
    }
    let recreate = DeploymentSpecView {
        replicas: 10,
        strategy: Strategy::Recreate,
    };
    assert_eq!(min_available(&recreate), 0, "minAvailable with Recreate");
}

/// deployment_util_test.go `TestDeploymentComplete`:
/// `deployment(desired, current, updated, available, maxUnavailable, maxSurge)`.
#[test]
fn deployment_util_deployment_complete() {
    let cases = [
        (
            "not complete: min but not all pods become available",
            [5, 5, 5, 4, 1, 0],
            false,
        ),
        (
            "not complete: min availability is not honored",
            [5, 5, 5, 3, 1, 0],
            false,
        ),
        ("complete", [5, 5, 5, 5, 0, 0], true),
        (
            "not complete: all pods are available but not updated",
            [5, 5, 4, 5, 0, 0],
            false,
        ),
        (
            "not complete: still running old pods",
            [1, 2, 1, 1, 0, 1],
            false,
        ),
        (
            "not complete: one replica deployment never comes up",
            [1, 1, 1, 0, 1, 1],
            false,
        ),
    ];
    for (name, [desired, current, updated, available, unavailable, surge], want) in cases {
        let d = rolling(
            desired,
            IntOrPercent::Int(surge),
            IntOrPercent::Int(unavailable),
        );
        let status = DeploymentStatusView {
            replicas: current,
            updated_replicas: updated,
            available_replicas: available,
        };
        assert_eq!(deployment_complete(&d, &status), want, "{name}");
    }
}

/// rolling_test.go `TestDeploymentController_reconcileNewReplicaSet` (maxUnavailable 0;
/// allRSs = {newRS, oldRS}).
#[test]
fn rolling_reconcile_new_replica_set() {
    // (deploymentReplicas, maxSurge, oldReplicas, newReplicas, expected)
    let cases = [
        (10, 0, 10, 0, None), // should not scale up
        (10, 2, 10, 0, Some(2)),
        (10, 2, 5, 0, Some(7)),
        (10, 2, 10, 2, None),
        (10, 2, 2, 11, Some(10)), // should scale down
    ];
    for (i, (dep, surge, old, new, want)) in cases.into_iter().enumerate() {
        let d = rolling(dep, IntOrPercent::Int(surge), IntOrPercent::Int(0));
        let new_rs = ReplicaSetView::new("foo-v2", new, 0);
        let old_rs = ReplicaSetView::new("foo-v2", old, 0);
        let got = reconcile_new_replica_set(&d, &[new_rs.clone(), old_rs], &new_rs).unwrap();
        let want = want.map_or(NewRsScale::Unchanged, NewRsScale::To);
        assert_eq!(got, want, "scenario {i}");
    }
}

/// rolling_test.go `TestDeploymentController_reconcileOldReplicaSets` (maxSurge 0). Upstream
/// checks only whether scaling happened; the expected old sizes it lists are checked too.
#[test]
fn rolling_reconcile_old_replica_sets() {
    // (deploymentReplicas, maxUnavailable, oldReplicas, newReplicas, readyOld, readyNew,
    //  scaleExpected, expectedOldReplicas)
    let cases = [
        (10, 0, 10, 0, 10, 0, true, 9),
        (10, 2, 10, 0, 10, 0, true, 8),
        (10, 2, 10, 0, 8, 0, true, 8), // unhealthy old replicas cleaned up
        (10, 2, 10, 0, 9, 0, true, 8), // 1 unhealthy cleaned up, 1 ready scaled down
        (10, 2, 8, 2, 8, 0, false, 8), // unavailable new pods block further scale-down
    ];
    for (i, (dep, unavailable, old, new, ready_old, ready_new, scale, want_old)) in
        cases.into_iter().enumerate()
    {
        let d = rolling(dep, IntOrPercent::Int(0), IntOrPercent::Int(unavailable));
        let new_rs = ReplicaSetView::new("foo-new", new, ready_new);
        let old_rs = ReplicaSetView::new("foo-old", old, ready_old);
        let all = [old_rs.clone(), new_rs.clone()];
        let mut olds = vec![old_rs];
        let result = reconcile_old_replica_sets(&d, &all, &mut olds, &new_rs);
        assert_eq!(result.scaled(), scale, "scenario {i}: {result:?}");
        assert_eq!(olds[0].replicas, want_old, "scenario {i}");
    }
}

/// rolling_test.go `TestDeploymentController_cleanupUnhealthyReplicas` (10 old replicas).
#[test]
fn rolling_cleanup_unhealthy_replicas() {
    // (readyPods, maxCleanupCount, cleanupCountExpected)
    let cases = [(8, 1, 1), (8, 3, 2), (8, 0, 0), (10, 3, 0)];
    for (i, (ready, max_cleanup, want)) in cases.into_iter().enumerate() {
        let mut olds = vec![ReplicaSetView::new("foo-v2", 10, ready)];
        assert_eq!(
            cleanup_unhealthy_replicas(&mut olds, max_cleanup),
            want,
            "scenario {i}"
        );
        assert_eq!(olds[0].replicas, 10 - want, "scenario {i}");
    }
}

/// rolling_test.go `TestDeploymentController_scaleDownOldReplicaSetsForRollingUpdate`
/// (maxSurge 0; allRSs = oldRSs = {oldRS}).
#[test]
fn rolling_scale_down_old_replica_sets_for_rolling_update() {
    // (deploymentReplicas, maxUnavailable, readyPods, oldReplicas, expectedOldReplicas)
    let cases = [
        (10, 0, 10, 10, Some(9)),
        (10, 2, 10, 10, Some(8)),
        (10, 2, 8, 10, None),
        (10, 2, 10, 0, None),
        (10, 2, 1, 10, None),
    ];
    for (i, (dep, unavailable, ready, old, want)) in cases.into_iter().enumerate() {
        let d = rolling(dep, IntOrPercent::Int(0), IntOrPercent::Int(unavailable));
        let old_rs = ReplicaSetView::new("foo-v2", old, ready);
        let mut olds = vec![old_rs.clone()];
        let scaled = scale_down_old_replica_sets_for_rolling_update(&d, &[old_rs], &mut olds);
        match want {
            Some(n) => {
                assert!(scaled > 0, "scenario {i}");
                assert_eq!(olds[0].replicas, n, "scenario {i}");
            }
            None => assert_eq!(scaled, 0, "scenario {i}"),
        }
    }
}

const HOUR: u64 = 3600;
/// `now` in upstream's test; only differences to it matter.
const NOW: Duration = Duration::from_secs(400 * 24 * HOUR);

fn ago(secs: u64) -> Option<Duration> {
    Some(NOW - Duration::from_secs(secs))
}

/// The `pod(...)` helper of `TestSortingActivePodsWithRanks`: an unready pod has neither a
/// Ready condition nor container statuses. `None` times are Go's zero time.
fn pod(
    name: &str,
    node: &str,
    phase: PodPhase,
    ready: bool,
    restarts: u32,
    ready_since: Option<Duration>,
    created: Option<Duration>,
) -> RankedPod {
    RankedPod {
        name: name.to_owned(),
        uid: String::new(),
        scheduled: !node.is_empty(),
        phase,
        ready,
        ready_since: if ready { ready_since } else { None },
        max_restarts: if ready { restarts } else { 0 },
        created_at: created,
        deletion_cost: 0,
        rank: 0,
    }
}

/// controller_utils_test.go `TestSortingActivePodsWithRanks` (equality and inequality tables).
#[test]
fn controller_utils_sorting_active_pods_with_ranks() {
    use PodPhase::{Pending, Running, Unknown};
    let month = 30 * 24 * HOUR;
    let now = Some(NOW);
    let unscheduled = pod("unscheduled", "", Pending, false, 0, None, None);
    let pending = pod("pending", "node", Pending, false, 0, None, None);
    let unknown = pod("unknown-phase", "node", Unknown, false, 0, None, None);
    let not_ready = pod("not-ready", "node", Running, false, 0, None, None);
    let ready_no_ltt = pod("ready-no-ltt", "node", Running, true, 0, None, None);
    let ready_now = pod("ready-now", "node", Running, true, 0, now, now);
    let ready_then = pod(
        "ready-then",
        "node",
        Running,
        true,
        0,
        ago(month),
        ago(month),
    );
    let high_restarts = pod("ready-high-restarts", "node", Running, true, 9001, now, now);
    let created_then = pod(
        "ready-now-created-then",
        "node",
        Running,
        true,
        0,
        now,
        ago(month),
    );
    let low_cost = RankedPod {
        deletion_cost: 10,
        ..pod(
            "low-deletion-cost",
            "node",
            Running,
            true,
            0,
            now,
            ago(month),
        )
    };
    let high_cost = RankedPod {
        deletion_cost: 100,
        ..pod(
            "high-deletion-cost",
            "node",
            Running,
            true,
            0,
            now,
            ago(month),
        )
    };
    let unsched_5h = pod(
        "unscheduled-5-hours",
        "",
        Pending,
        false,
        0,
        ago(5 * HOUR),
        ago(5 * HOUR),
    );
    let unsched_8h = pod(
        "unscheduled-10-hours",
        "",
        Pending,
        false,
        0,
        ago(8 * HOUR),
        ago(8 * HOUR),
    );
    let ready_2h = pod(
        "ready-2-hours",
        "",
        Running,
        true,
        0,
        ago(2 * HOUR),
        ago(month),
    );
    let ready_5h = pod(
        "ready-5-hours",
        "",
        Running,
        true,
        0,
        ago(5 * HOUR),
        ago(month),
    );
    let ready_8h = pod(
        "ready-10-hours",
        "",
        Running,
        true,
        0,
        ago(8 * HOUR),
        ago(month),
    );
    let on = RankingOptions::default();
    let with_rank = |p: &RankedPod, rank: u32| RankedPod { rank, ..p.clone() };

    let equal = [
        (&unscheduled, &unscheduled),
        (&pending, &pending),
        (&unknown, &unknown),
        (&not_ready, &not_ready),
        (&created_then, &created_then),
        (&ready_now, &ready_now),
        (&ready_then, &ready_then),
        (&high_restarts, &high_restarts),
        (&unsched_5h, &unsched_8h),
        (&ready_5h, &ready_8h),
    ];
    for (i, (a, b)) in equal.into_iter().enumerate() {
        let (a, b) = (with_rank(a, 1), with_rank(b, 1));
        assert!(
            !delete_before(&a, &b, now, on) && !delete_before(&b, &a, now, on),
            "equality {i}: {} vs {}",
            a.name,
            b.name
        );
    }

    let no_cost = RankingOptions {
        pod_deletion_cost: false,
        ..on
    };
    let unequal = [
        ((&unscheduled, 1), (&pending, 2), on),
        ((&unscheduled, 2), (&pending, 1), on),
        ((&pending, 1), (&unknown, 2), on),
        ((&unknown, 1), (&not_ready, 2), on),
        ((&not_ready, 1), (&ready_no_ltt, 1), on),
        ((&ready_no_ltt, 1), (&ready_now, 1), on),
        ((&ready_now, 2), (&ready_no_ltt, 1), on),
        ((&ready_now, 1), (&ready_then, 1), on),
        ((&ready_now, 2), (&ready_then, 1), on),
        ((&high_restarts, 1), (&ready_now, 1), on),
        ((&ready_now, 2), (&high_restarts, 1), on),
        ((&ready_now, 1), (&created_then, 1), on),
        ((&created_then, 2), (&ready_now, 1), on),
        ((&low_cost, 2), (&high_cost, 1), on),
        ((&high_cost, 2), (&low_cost, 1), no_cost),
        ((&ready_2h, 1), (&ready_5h, 1), on),
    ];
    for (i, ((lesser, lr), (greater, gr), opts)) in unequal.into_iter().enumerate() {
        let (l, g) = (with_rank(lesser, lr), with_rank(greater, gr));
        assert!(
            delete_before(&l, &g, now, opts),
            "inequality {i}: {} < {}",
            l.name,
            g.name
        );
        assert!(
            !delete_before(&g, &l, now, opts),
            "inequality {i}: {} !< {}",
            g.name,
            l.name
        );
    }
}

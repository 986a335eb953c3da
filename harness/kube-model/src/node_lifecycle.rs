//! What happens to a node's pods when its kubelet goes silent and when it comes back, as in
//! kubernetes/kubernetes v1.34:
//!
//! - **Pods marked not ready.** `pkg/controller/nodelifecycle/node_lifecycle_controller.go`
//!   (`monitorNodeHealth`, every `--node-monitor-period`, 5 s): when neither the Node's status
//!   nor its Lease was renewed for `--node-monitor-grace-period` (50 s since v1.32, PR
//!   #126287), the controller sets the Ready condition to `Unknown` ("Kubelet stopped posting
//!   node status.") and calls `MarkPodsNotReady` (`pkg/controller/util/node/controller_utils.go`):
//!   every pod bound to the node gets its `Ready` condition set to `False` (only `Ready`;
//!   nothing is deleted) and a `NodeNotReady` event. The EndpointSlice controller then lists
//!   them as not ready (`staging/src/k8s.io/endpointslice/utils.go`, `podToEndpoint`: ready =
//!   the pod's Ready condition and not terminating).
//! - **Taint-based eviction.** The same controller taints the node
//!   `node.kubernetes.io/unreachable:NoExecute` (Ready `Unknown`; `not-ready` for `False`) and
//!   `...:NoSchedule`, so no new pod lands there. The DefaultTolerationSeconds admission plugin
//!   (`plugin/pkg/admission/defaulttolerationseconds`) gives every pod tolerations of 300 s
//!   for both NoExecute taints unless it carries its own. The taint eviction controller
//!   (`pkg/controller/tainteviction/taint_eviction.go`, `processPodOnNode`) schedules each pod's
//!   deletion at the moment it observes the taint plus the smallest matching
//!   `tolerationSeconds` (a pod without a matching toleration goes at once; a toleration without
//!   seconds tolerates forever), keeps an earlier deadline when the taint is swapped, and
//!   cancels everything when the taints are removed. The deletion is an ordinary graceful delete
//!   (`DisruptionTarget` condition, reason `DeletionByTaintManager`, event
//!   `TaintManagerEviction`); the ReplicaSet stops counting the pod at once (`IsPodActive` in
//!   `pkg/controller/controller_utils.go`: a deletion timestamp makes it inactive) and creates a
//!   replacement elsewhere. On the silent node nothing carries the termination out: the pod
//!   stays terminating until the kubelet returns and terminates it.
//! - **The kubelet comes back.** The taints are removed (`markNodeAsReachable`); pods already
//!   deleted stay deleted. The restarted kubelet's probe workers start afresh
//!   (`pkg/kubelet/prober/worker.go`): a readiness result starts as `Failure`, and a worker
//!   created within one period of the kubelet's start first sleeps a random part of the period
//!   ("If kubelet restarted the probes could be started in rapid succession"). So each pod turns
//!   ready again when its probe has passed `successThreshold` times, the first run at that
//!   random offset.

use std::time::Duration;

/// `--node-monitor-grace-period`'s default since v1.32: how long a silent kubelet's node
/// stays Ready before the controller marks it `Unknown` (and its pods not ready).
pub const NODE_MONITOR_GRACE_PERIOD: Duration = Duration::from_secs(50);

/// `--node-monitor-period`'s default: how often the controller checks the nodes.
pub const NODE_MONITOR_PERIOD: Duration = Duration::from_secs(5);

/// The DefaultTolerationSeconds admission plugin's `--default-not-ready-toleration-seconds`
/// and `--default-unreachable-toleration-seconds`.
pub const DEFAULT_TOLERATION: Duration = Duration::from_secs(300);

/// The NoExecute taint the node lifecycle controller puts on a node by its Ready condition
/// (`nodeConditionToTaintKeyStatusMap`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeCondition {
    /// The kubelet reports the node not ready.
    False,
    /// The kubelet stopped posting status (the controller set `Unknown`).
    Unknown,
}

impl NodeCondition {
    /// The taint key for this Ready condition.
    pub fn taint_key(self) -> &'static str {
        match self {
            NodeCondition::False => "node.kubernetes.io/not-ready",
            NodeCondition::Unknown => "node.kubernetes.io/unreachable",
        }
    }

    /// Whether `MarkPodsNotReady` runs: only when the controller itself moved the node from
    /// Ready to `Unknown` (kubernetes/kubernetes#125618: a kubelet that reports `False` while
    /// renewing its lease leaves its pods' Ready condition alone).
    pub fn marks_pods_not_ready(self) -> bool {
        self == NodeCondition::Unknown
    }
}

/// When the taint eviction controller deletes a pod whose node got a NoExecute taint at
/// `tainted_at`: `None` when its toleration has no seconds (tolerated forever), else
/// `tainted_at + toleration` (a zero or negative toleration evicts at once).
pub fn eviction_at(tainted_at: Duration, toleration: Option<Duration>) -> Option<Duration> {
    toleration.map(|t| tainted_at + t)
}

/// With a taint swapped for another (`not-ready` ↔ `unreachable`) the earlier of the two
/// deadlines stands (`processPodOnNode`: a scheduled eviction that fires sooner is kept).
pub fn keep_earlier(scheduled: Option<Duration>, new: Option<Duration>) -> Option<Duration> {
    match (scheduled, new) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

/// The first readiness probe run of a container after its kubelet restarted: a random part
/// (`draw` in `[0, 1)`) of the probe period after the worker starts.
pub fn first_probe_after_restart(period: Duration, draw: f64) -> Duration {
    period.mul_f64(draw.clamp(0.0, 1.0))
}

/// When a container whose probe keeps passing is ready again after its kubelet restarted:
/// its first run (after the jitter) and `successThreshold − 1` more periods (a readiness
/// result starts as `Failure`).
pub fn ready_after_restart(period: Duration, success_threshold: u32, draw: f64) -> Duration {
    first_probe_after_restart(period, draw) + period * success_threshold.saturating_sub(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_silent_kubelet_marks_pods_not_ready_a_reporting_one_does_not() {
        assert!(NodeCondition::Unknown.marks_pods_not_ready());
        assert!(!NodeCondition::False.marks_pods_not_ready());
        assert_eq!(
            NodeCondition::Unknown.taint_key(),
            "node.kubernetes.io/unreachable"
        );
        assert_eq!(
            NodeCondition::False.taint_key(),
            "node.kubernetes.io/not-ready"
        );
    }

    #[test]
    fn eviction_follows_the_toleration() {
        let t = Duration::from_secs(100);
        // TestAdmission of defaulttolerationseconds: 300 s by default.
        assert_eq!(
            eviction_at(t, Some(DEFAULT_TOLERATION)),
            Some(Duration::from_secs(400))
        );
        assert_eq!(eviction_at(t, Some(Duration::ZERO)), Some(t));
        assert_eq!(eviction_at(t, None), None, "tolerated forever");
        // A swapped taint keeps the earlier deadline (taint_eviction.go processPodOnNode).
        let a = Some(Duration::from_secs(400));
        assert_eq!(keep_earlier(a, Some(Duration::from_secs(450))), a);
        assert_eq!(
            keep_earlier(a, Some(Duration::from_secs(350))),
            Some(Duration::from_secs(350))
        );
        assert_eq!(keep_earlier(None, a), a);
    }

    #[test]
    fn a_restarted_kubelet_probes_within_one_period() {
        let period = Duration::from_secs(10);
        assert_eq!(first_probe_after_restart(period, 0.0), Duration::ZERO);
        assert_eq!(
            first_probe_after_restart(period, 0.25),
            Duration::from_millis(2500)
        );
        // successThreshold 3: two more periods after the first run.
        assert_eq!(ready_after_restart(period, 3, 0.5), Duration::from_secs(25));
        for draw in [0.0, 0.3, 0.999] {
            assert!(first_probe_after_restart(period, draw) < period);
        }
    }
}

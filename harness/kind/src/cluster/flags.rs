//! kube-controller-manager flags a scenario needs, passed through a `ClusterConfiguration`
//! patch (`controllerManager.extraArgs`). Only what the scenario uses is set, so a cluster for
//! a scenario that needs nothing runs Kubernetes' defaults.
//!
//! - `node-monitor-grace-period`, when the timeline makes a node NotReady (`setNodeReady:
//!   false`, done on kind by stopping the node's kubelet): the node lifecycle controller marks a
//!   node NotReady once its lease and status are older than this (default 50s). 20s is two of the
//!   kubelet's lease renewals (every 10s: a quarter of the 40s lease), so one late renewal does
//!   not flip a healthy node; the controller checks every `node-monitor-period` (5s), so the
//!   node turns NotReady 20-25s after its kubelet stops.
//! - `horizontal-pod-autoscaler-sync-period` and `horizontal-pod-autoscaler-tolerance`, when the
//!   service has an autoscaler: the scenario's sync period and tolerance (both are flags of the
//!   controller manager, not fields of the HPA object, in Kubernetes v1.34).
//!
//! Values are the scenario's own, unscaled by `timeScale`.

use std::collections::BTreeMap;
use std::time::Duration;

use harness_core::scenario::{Action, Scenario};

/// The grace period set when a scenario makes nodes NotReady.
pub const NODE_MONITOR_GRACE_PERIOD: Duration = Duration::from_secs(20);

/// Flag name (without dashes) to value, in name order.
pub fn controller_manager_flags(scenario: &Scenario) -> BTreeMap<String, String> {
    let mut flags = BTreeMap::new();
    let stops_a_node = scenario
        .timeline
        .iter()
        .any(|event| matches!(event.action, Action::SetNodeReady { ready: false, .. }));
    if stops_a_node {
        flags.insert(
            "node-monitor-grace-period".to_owned(),
            go_duration(NODE_MONITOR_GRACE_PERIOD),
        );
    }
    if let Some(hpa) = &scenario.service.autoscaler {
        flags.insert(
            "horizontal-pod-autoscaler-sync-period".to_owned(),
            go_duration(hpa.sync_period),
        );
        flags.insert(
            "horizontal-pod-autoscaler-tolerance".to_owned(),
            hpa.tolerance.to_string(),
        );
    }
    flags
}

/// A duration as Go's `time.ParseDuration` reads it: whole seconds as `15s`, otherwise
/// milliseconds (`1500ms`).
pub fn go_duration(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_go_durations() {
        assert_eq!(go_duration(Duration::from_secs(15)), "15s");
        assert_eq!(go_duration(Duration::from_millis(1500)), "1500ms");
        assert_eq!(go_duration(Duration::from_secs(90)), "90s");
    }
}

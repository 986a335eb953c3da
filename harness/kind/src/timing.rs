//! Cluster-side timings that would silently change a scenario's outcome on kind, as warnings
//! for `harness plan --target kind` (what kind cannot hold at all is refused instead:
//! [`crate::driver::refusals`]).
//!
//! - `setNodeReady: false` stops the node's kubelet; the Node turns NotReady only when the node
//!   lifecycle controller finds its lease older than `node-monitor-grace-period` (20 s in the
//!   clusters the harness creates, [`crate::cluster::flags`]), checked every
//!   `node-monitor-period` (5 s): 20–25 s after the action, where the local target's model
//!   turns it NotReady at once. A node back before that never turned NotReady at all.
//! - The autoscaler reads Prometheus `rate()` over one sync period but at least
//!   [`MIN_RATE_WINDOW_S`](crate::manifests::autoscaler::MIN_RATE_WINDOW_S) (a few 1 s scrapes):
//!   a shorter sync period averages over more than one period, so the HPA reacts later than on
//!   the local target.

use std::time::Duration;

use harness_core::scenario::model::{Action, Scenario};

use crate::cluster::flags::NODE_MONITOR_GRACE_PERIOD;
use crate::manifests::autoscaler::MIN_RATE_WINDOW_S;

/// The node lifecycle controller's check period (`--node-monitor-period`, default 5 s).
pub const NODE_MONITOR_PERIOD: Duration = Duration::from_secs(5);

/// One sentence per timing the cluster will not keep as the scenario (and the local target)
/// does.
pub fn warnings(scenario: &Scenario) -> Vec<String> {
    let mut out = Vec::new();
    let grace = NODE_MONITOR_GRACE_PERIOD.as_secs();
    let latest = (NODE_MONITOR_GRACE_PERIOD + NODE_MONITOR_PERIOD).as_secs();
    for (i, event) in scenario.timeline.iter().enumerate() {
        let Action::SetNodeReady { node, ready: false } = &event.action else {
            continue;
        };
        let name = event.name.clone().unwrap_or_else(|| i.to_string());
        let back = scenario.timeline[i + 1..].iter().find(|later| {
            matches!(&later.action, Action::SetNodeReady { node: n, ready: true } if n == node)
        });
        let until = back.map_or(scenario.load.duration, |b| b.at);
        let silent = until.saturating_sub(event.at);
        let ends = if back.is_some() {
            "its kubelet is back"
        } else {
            "the load ends"
        };
        if silent < NODE_MONITOR_GRACE_PERIOD + NODE_MONITOR_PERIOD {
            out.push(format!(
                "timeline[{name}]: node {node} is silent for {}s before {ends}, but on kind the Node turns NotReady only {grace}-{latest}s after its kubelet stops (node-monitor-grace-period {grace}s, checked every {}s): its pods may never leave the endpoints there, while the local target takes them out at once",
                silent.as_secs_f64(),
                NODE_MONITOR_PERIOD.as_secs()
            ));
        } else {
            out.push(format!(
                "timeline[{name}]: on kind node {node} turns NotReady {grace}-{latest}s after {}s (when the node lifecycle controller notices its silent kubelet), on the local target at {}s: windows that start at this entry see its pods leave later there",
                event.at.as_secs_f64(),
                event.at.as_secs_f64()
            ));
        }
    }
    if let Some(hpa) = &scenario.service.autoscaler
        && hpa.sync_period < Duration::from_secs(u64::from(MIN_RATE_WINDOW_S))
    {
        out.push(format!(
            "service.autoscaler.syncPeriod {}s: on kind each sync reads Prometheus' rate over {MIN_RATE_WINDOW_S}s (a few 1s scrapes), longer than the period: the HPA sees changes later than on the local target",
            hpa.sync_period.as_secs_f64()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(timeline: &str) -> Scenario {
        harness_core::testing::one_node_scenario(
            &["replicas: 1", "serviceTime: { fixed: 1ms }"],
            &format!(
                "load:\n  duration: 120s\n  generators: [{{ name: g, zone: z, rate: 1 }}]\ntimeline:\n{timeline}"
            ),
        )
    }

    #[test]
    fn a_short_outage_never_turns_the_node_not_ready_on_kind() {
        let short = scenario(
            "  - { at: 10s, name: down, setNodeReady: { node: n, ready: false } }\n  - { at: 25s, name: up, setNodeReady: { node: n, ready: true } }\n",
        );
        let w = warnings(&short);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with("timeline[down]: node n is silent for 15s before its kubelet is back, but on kind the Node turns NotReady only 20-25s after"),
            "{w:?}"
        );
        let long = scenario(
            "  - { at: 10s, name: down, setNodeReady: { node: n, ready: false } }\n  - { at: 60s, name: up, setNodeReady: { node: n, ready: true } }\n",
        );
        let w = warnings(&long);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("turns NotReady 20-25s after 10s"), "{w:?}");
        let none = scenario("  - { at: 10s, name: roll, rollout: { restart: true } }\n");
        assert!(warnings(&none).is_empty());
    }
}

//! How timeline entries read in progress lines, plans, reports and the recorded timeline:
//! `node-change: node n-3 allocatable CPU 2000m`, `deploy: rollout restart`.

use std::fmt;

use super::{Action, IngressReplicas, PodPick, PreStop, RolloutChange, TimelineEvent};
use crate::scenario::units::format_duration;

impl fmt::Display for TimelineEvent {
    /// The action, after the entry's name when it has one.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.name {
            Some(name) => write!(f, "{name}: {}", self.action),
            None => write!(f, "{}", self.action),
        }
    }
}

impl fmt::Display for IngressReplicas {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IngressReplicas::All => f.write_str("every ingress replica"),
            IngressReplicas::One(i) => write!(f, "ingress-{i}"),
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::SetNodeReady { node, ready } => write!(f, "node {node} Ready={ready}"),
            Action::AddNode {
                zone,
                name,
                allocatable_millicpu,
                ..
            } => write!(f, "add node {name} in {zone} ({allocatable_millicpu}m CPU)"),
            Action::RemoveNode { node } => write!(f, "remove node {node}"),
            Action::RelabelNode { node, zone } => write!(f, "relabel node {node} to zone {zone}"),
            Action::SetAllocatableCpu {
                node,
                allocatable_millicpu,
            } => write!(f, "node {node} allocatable CPU {allocatable_millicpu}m"),
            Action::Scale { replicas } => write!(f, "scale to {replicas}"),
            Action::KillPod { pod } => write!(f, "kill pod-{pod}"),
            Action::KillPickedPod { pick, zone } => {
                let which = match pick {
                    PodPick::Oldest => "oldest",
                    PodPick::Newest => "newest",
                };
                match zone {
                    Some(zone) => write!(f, "kill the {which} pod in {zone}"),
                    None => write!(f, "kill the {which} pod"),
                }
            }
            Action::Rollout(change) => write!(f, "{change}"),
            Action::ReloadIngress(which) => write!(f, "reload {which}"),
            Action::RestartIngress(which) => write!(f, "restart {which}"),
            Action::ZoneNetwork(change) => write!(f, "{change}"),
        }
    }
}

impl fmt::Display for RolloutChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.restart {
            return f.write_str("rollout restart");
        }
        let mut changes = Vec::new();
        if let Some(delay) = self.drain_delay {
            changes.push(format!("drainDelay {}", format_duration(delay)));
        }
        match &self.pre_stop {
            Some(PreStop::None) => changes.push("no preStop hook".to_owned()),
            Some(PreStop::Sleep(d)) => {
                changes.push(format!("preStop sleep {}", format_duration(*d)))
            }
            Some(PreStop::Exec(command)) => {
                changes.push(format!("preStop exec {}", command.join(" ")))
            }
            None => {}
        }
        if let Some(grace) = self.grace_period {
            changes.push(format!("gracePeriod {}", format_duration(grace)));
        }
        write!(f, "rollout ({})", changes.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn entries_read_as_name_and_action() {
        let event = TimelineEvent {
            at: Duration::from_secs(12),
            name: Some("node-change".into()),
            action: Action::SetAllocatableCpu {
                node: "n-3".into(),
                allocatable_millicpu: 2000,
            },
        };
        assert_eq!(
            event.to_string(),
            "node-change: node n-3 allocatable CPU 2000m"
        );
        let rollout = Action::Rollout(RolloutChange {
            restart: false,
            drain_delay: None,
            pre_stop: Some(PreStop::Sleep(Duration::from_secs(30))),
            grace_period: Some(Duration::from_secs(60)),
        });
        assert_eq!(
            rollout.to_string(),
            "rollout (preStop sleep 30s, gracePeriod 1m)"
        );
        assert_eq!(Action::KillPod { pod: 3 }.to_string(), "kill pod-3");
        let picked = Action::KillPickedPod {
            pick: PodPick::Newest,
            zone: Some("z-1".into()),
        };
        assert_eq!(picked.to_string(), "kill the newest pod in z-1");
    }
}

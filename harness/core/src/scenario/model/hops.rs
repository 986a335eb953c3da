//! Where the hops between a caller and the pods run, by zone: the load balancer (one replica,
//! in `loadBalancer.zone` or the first zone with a worker) and each ingress replica (spread
//! over the zones with a worker, one at a time in file order, as a zone spread with `maxSkew:
//! 1` places them). A `zoneNetwork` fault acts on a hop whose two ends are in its zones.

use super::{Cluster, NodeRole, Scenario};

/// The zones with at least one worker node at load start, in file order.
pub fn worker_zones(cluster: &Cluster) -> Vec<&str> {
    cluster
        .zones
        .iter()
        .filter(|z| cluster.nodes_in_zone(z).any(|n| n.role == NodeRole::Worker))
        .map(String::as_str)
        .collect()
}

/// The load balancer's zone: as declared, else the first zone with a worker (`None`: no load
/// balancer, or no worker anywhere).
pub fn load_balancer_zone(scenario: &Scenario) -> Option<String> {
    let lb = scenario.load_balancer.as_ref()?;
    lb.zone.clone().or_else(|| {
        worker_zones(&scenario.cluster)
            .first()
            .map(|z| (*z).to_owned())
    })
}

/// Ingress replica `index`'s zone: the zones with a worker taken in turn (`None`: no worker
/// anywhere).
pub fn ingress_replica_zone(cluster: &Cluster, index: u32) -> Option<String> {
    let zones = worker_zones(cluster);
    if zones.is_empty() {
        return None;
    }
    Some(zones[index as usize % zones.len()].to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::model::Node;

    fn node(name: &str, zone: &str, role: NodeRole) -> Node {
        Node {
            name: name.into(),
            zone: zone.into(),
            allocatable_millicpu: 4000,
            ready: true,
            role,
        }
    }

    #[test]
    fn replicas_take_the_worker_zones_in_turn_and_skip_control_plane_only_zones() {
        let cluster = Cluster {
            zones: vec!["cp".into(), "a".into(), "b".into(), "empty".into()],
            nodes: vec![
                node("cp-1", "cp", NodeRole::ControlPlane),
                node("a-1", "a", NodeRole::Worker),
                node("b-1", "b", NodeRole::Worker),
                node("b-2", "b", NodeRole::Worker),
            ],
        };
        assert_eq!(worker_zones(&cluster), ["a", "b"]);
        let zones: Vec<_> = (0..5)
            .map(|i| ingress_replica_zone(&cluster, i).unwrap())
            .collect();
        assert_eq!(zones, ["a", "b", "a", "b", "a"]);
        let none = Cluster {
            zones: vec!["cp".into()],
            nodes: vec![node("cp-1", "cp", NodeRole::ControlPlane)],
        };
        assert_eq!(ingress_replica_zone(&none, 0), None);
    }
}

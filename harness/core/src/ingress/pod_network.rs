//! Modelled pod IPs (the local target runs every pod on loopback, but the controller sorts by
//! pod IP): each node has a /24 of `10.244.0.0/16` (its index in the cluster's node list, as
//! kube-controller-manager's range allocator hands out `podCIDR`s), and the host-local IPAM
//! plugin hands out its addresses in order from `.2` (`.1` is the bridge's gateway), never
//! reusing one during a run.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

/// Pod → IP, allocated as pods are first seen.
#[derive(Debug, Clone, Default)]
pub struct PodNetwork {
    /// Node name → its index (the third octet).
    nodes: BTreeMap<String, u8>,
    /// Node index → next host part.
    next: BTreeMap<u8, u8>,
    ips: BTreeMap<String, Ipv4Addr>,
}

impl PodNetwork {
    /// `nodes`: every node of the cluster, in the scenario's order.
    pub fn new<'a>(nodes: impl IntoIterator<Item = &'a str>) -> Self {
        let nodes = nodes
            .into_iter()
            .enumerate()
            .map(|(i, n)| (n.to_owned(), (i % 250) as u8))
            .collect();
        Self {
            nodes,
            ..Self::default()
        }
    }

    /// The pod's IP; a pod seen for the first time gets the next address of its node's range.
    pub fn ip(&mut self, pod: &str, node: &str) -> Ipv4Addr {
        if let Some(ip) = self.ips.get(pod) {
            return *ip;
        }
        let fallback = self.nodes.len().min(250) as u8;
        let index = *self.nodes.entry(node.to_owned()).or_insert(fallback);
        let host = self.next.entry(index).or_insert(2);
        let ip = Ipv4Addr::new(10, 244, index, *host);
        *host = host.saturating_add(1).min(254);
        self.ips.insert(pod.to_owned(), ip);
        ip
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_come_in_order_per_node_and_stay() {
        let mut net = PodNetwork::new(["a-1", "a-2"]);
        assert_eq!(net.ip("pod-0", "a-1"), Ipv4Addr::new(10, 244, 0, 2));
        assert_eq!(net.ip("pod-1", "a-2"), Ipv4Addr::new(10, 244, 1, 2));
        assert_eq!(net.ip("pod-2", "a-1"), Ipv4Addr::new(10, 244, 0, 3));
        assert_eq!(net.ip("pod-0", "a-2"), Ipv4Addr::new(10, 244, 0, 2), "kept");
    }
}

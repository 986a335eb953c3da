// Ported from kubernetes/kubernetes v1.34 (release-1.34 line; source read at topology.go @008b3652959c).
// pkg/proxy/topology.go (CategorizeEndpoints, topologyModeFromHints, availableForTopology,
// filterEndpoints), the endpoint condition defaults of pkg/proxy/endpointslicecache.go and the
// traffic-policy predicates of pkg/proxy/serviceport.go.
//! Which endpoints kube-proxy on a given node sends a Service's traffic to, and the
//! per-connection backend choice.
//!
//! Topology: hints are honoured only when every ready endpoint carries one and at least one is
//! hinted for this node (PreferSameNode, when node hints are enabled) or for this node's zone
//! (PreferSameZone); otherwise every ready endpoint is used. This applies to the Service's
//! Cluster-policy endpoints; Local-policy endpoints ignore topology. With no ready endpoint at
//! all, serving-and-terminating endpoints are used instead, again ignoring topology.
//!
//! Readiness here follows kube-proxy, not the controller: an unset `ready` or `serving`
//! condition counts as true, an unset `terminating` as false.
//!
//! Backend choice: in iptables mode each new connection picks one of the usable endpoints
//! uniformly at random (a chain of `statistic --mode random` rules); [`pick_backend`] does the
//! same with a caller-supplied RNG so runs are reproducible.

use rand::Rng;

use super::types::Endpoint;

/// kube-proxy feature switches that change topology behaviour in v1.34.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProxyOptions {
    /// The `PreferSameTrafficDistribution` gate (beta, on by default in v1.34). Off: `forNodes`
    /// hints are ignored.
    pub prefer_same_traffic_distribution: bool,
}

impl Default for ProxyOptions {
    fn default() -> Self {
        ProxyOptions {
            prefer_same_traffic_distribution: true,
        }
    }
}

/// The traffic-policy facts of a Service port that decide which endpoint sets exist.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServicePolicy {
    /// `internalTrafficPolicy: Local`.
    pub internal_local: bool,
    /// `externalTrafficPolicy: Local`.
    pub external_local: bool,
    /// Has a NodePort, load-balancer IPs or external IPs.
    pub externally_accessible: bool,
}

impl ServicePolicy {
    /// Cluster-policy endpoints are needed for internal Cluster traffic or any external traffic.
    pub fn uses_cluster_endpoints(self) -> bool {
        !self.internal_local || self.externally_accessible
    }

    /// Local-policy endpoints are needed for internal Local traffic or external Local traffic.
    pub fn uses_local_endpoints(self) -> bool {
        self.internal_local || (self.external_local && self.externally_accessible)
    }
}

/// The node kube-proxy runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProxyNode<'a> {
    pub name: &'a str,
    /// The node's zone label (`None` when missing).
    pub zone: Option<&'a str>,
}

/// Which topology filter applies (upstream's `topologyMode` strings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopologyMode {
    /// No filtering by topology.
    None,
    PreferSameZone,
    PreferSameNode,
}

/// Result of [`categorize_endpoints`]; `None` lists mean "this Service does not use that kind".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Categorized<'a> {
    pub cluster: Option<Vec<&'a Endpoint>>,
    pub local: Option<Vec<&'a Endpoint>>,
    /// Union of both lists (cluster endpoints first, then local ones not already present).
    pub all_reachable: Vec<&'a Endpoint>,
    /// Whether the Service has a usable endpoint anywhere in the cluster.
    pub has_any: bool,
}

fn is_ready(e: &Endpoint) -> bool {
    e.conditions.ready.unwrap_or(true)
}

fn is_serving_terminating(e: &Endpoint) -> bool {
    e.conditions.serving.unwrap_or(true) && e.conditions.terminating.unwrap_or(false)
}

fn is_local(e: &Endpoint, node: ProxyNode<'_>) -> bool {
    e.node_name.as_deref() == Some(node.name)
}

fn node_hints(e: &Endpoint, options: ProxyOptions) -> &[String] {
    if options.prefer_same_traffic_distribution {
        e.for_nodes()
    } else {
        &[]
    }
}

/// Upstream `topologyModeFromHints`.
pub fn topology_mode_from_hints(
    endpoints: &[Endpoint],
    node: ProxyNode<'_>,
    options: ProxyOptions,
) -> TopologyMode {
    let zone = node.zone.unwrap_or("");
    let ready: Vec<&Endpoint> = endpoints.iter().filter(|e| is_ready(e)).collect();
    if ready.is_empty() {
        return TopologyMode::None;
    }
    if options.prefer_same_traffic_distribution {
        let all_have = ready.iter().all(|e| !node_hints(e, options).is_empty());
        if all_have
            && ready
                .iter()
                .any(|e| node_hints(e, options).iter().any(|n| n == node.name))
        {
            return TopologyMode::PreferSameNode;
        }
    }
    let all_have = ready.iter().all(|e| !e.for_zones().is_empty());
    if all_have
        && ready
            .iter()
            .any(|e| e.for_zones().iter().any(|z| z == zone))
    {
        return TopologyMode::PreferSameZone;
    }
    TopologyMode::None
}

/// Upstream `availableForTopology`.
fn available_for_topology(
    e: &Endpoint,
    mode: TopologyMode,
    node: ProxyNode<'_>,
    options: ProxyOptions,
) -> bool {
    match mode {
        TopologyMode::None => true,
        TopologyMode::PreferSameNode => node_hints(e, options).iter().any(|n| n == node.name),
        TopologyMode::PreferSameZone => e.for_zones().iter().any(|z| z == node.zone.unwrap_or("")),
    }
}

/// Upstream `CategorizeEndpoints` for kube-proxy on `node`.
pub fn categorize_endpoints<'a>(
    endpoints: &'a [Endpoint],
    policy: ServicePolicy,
    node: ProxyNode<'_>,
    options: ProxyOptions,
) -> Categorized<'a> {
    if endpoints.is_empty() {
        // Nothing to categorize: upstream returns every list unset.
        return Categorized {
            cluster: None,
            local: None,
            all_reachable: Vec::new(),
            has_any: false,
        };
    }
    let mut has_any = false;
    let mut mode = TopologyMode::None;
    let mut cluster = None;
    if policy.uses_cluster_endpoints() {
        mode = topology_mode_from_hints(endpoints, node, options);
        let mut list: Vec<&Endpoint> = endpoints
            .iter()
            .filter(|e| is_ready(e) && available_for_topology(e, mode, node, options))
            .collect();
        if list.is_empty() {
            list = endpoints
                .iter()
                .filter(|e| is_serving_terminating(e))
                .collect();
        }
        has_any = !list.is_empty();
        cluster = Some(list);
    }
    if !policy.uses_local_endpoints() {
        let all_reachable = cluster.clone().unwrap_or_default();
        return Categorized {
            cluster,
            local: None,
            all_reachable,
            has_any,
        };
    }

    let (mut local_ready, mut local_terminating) = (false, false);
    for e in endpoints {
        if is_ready(e) {
            has_any = true;
            local_ready |= is_local(e, node);
        } else if is_serving_terminating(e) {
            has_any = true;
            local_terminating |= is_local(e, node);
        }
    }
    let use_terminating = !local_ready && local_terminating;
    let local: Vec<&Endpoint> = if local_ready {
        endpoints
            .iter()
            .filter(|e| is_local(e, node) && is_ready(e))
            .collect()
    } else if local_terminating {
        endpoints
            .iter()
            .filter(|e| is_local(e, node) && is_serving_terminating(e))
            .collect()
    } else {
        Vec::new()
    };

    let Some(cluster_list) = &cluster else {
        return Categorized {
            cluster,
            all_reachable: local.clone(),
            local: Some(local),
            has_any,
        };
    };
    let all_reachable = if mode == TopologyMode::None && !use_terminating {
        // Every ready endpoint is in the cluster list, so it covers the local list.
        cluster_list.clone()
    } else {
        let mut merged = cluster_list.clone();
        for e in &local {
            if !merged.iter().any(|m| m.address == e.address) {
                merged.push(e);
            }
        }
        merged
    };
    Categorized {
        cluster,
        local: Some(local),
        all_reachable,
        has_any,
    }
}

/// The endpoints a client on `node` reaches through the Service's cluster IP: the Local-policy
/// list when `internalTrafficPolicy: Local`, else the Cluster-policy list (topology applied).
pub fn usable_endpoints<'a>(
    endpoints: &'a [Endpoint],
    node: ProxyNode<'_>,
    policy: ServicePolicy,
    options: ProxyOptions,
) -> Vec<&'a Endpoint> {
    let categorized = categorize_endpoints(endpoints, policy, node, options);
    let list = if policy.internal_local {
        categorized.local
    } else {
        categorized.cluster
    };
    list.unwrap_or_default()
}

/// Picks the backend for one new connection: uniformly at random among `usable`, as the
/// iptables proxier's probability chain does. `None` when there is nothing to pick.
pub fn pick_backend<'a, T, R: Rng + ?Sized>(usable: &'a [T], rng: &mut R) -> Option<&'a T> {
    if usable.is_empty() {
        return None;
    }
    usable.get(rng.random_range(0..usable.len()))
}

#[cfg(test)]
mod tests {
    use super::pick_backend;
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    #[test]
    fn pick_backend_is_uniform_and_reproducible() {
        let backends = ["a", "b", "c", "d"];
        let mut rng = StdRng::seed_from_u64(7);
        let mut hits = [0usize; 4];
        for _ in 0..40_000 {
            let chosen = pick_backend(&backends, &mut rng).unwrap();
            hits[backends.iter().position(|b| b == chosen).unwrap()] += 1;
        }
        for h in hits {
            assert!((9_500..=10_500).contains(&h), "uniform within 5%: {hits:?}");
        }
        let first: Vec<&str> = {
            let mut rng = StdRng::seed_from_u64(7);
            (0..8)
                .map(|_| *pick_backend(&backends, &mut rng).unwrap())
                .collect()
        };
        let again: Vec<&str> = {
            let mut rng = StdRng::seed_from_u64(7);
            (0..8)
                .map(|_| *pick_backend(&backends, &mut rng).unwrap())
                .collect()
        };
        assert_eq!(first, again);
        assert!(pick_backend::<&str, _>(&[], &mut rng).is_none());
    }
}

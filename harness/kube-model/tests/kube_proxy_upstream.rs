//! kube-proxy topology filtering with cases from upstream's `TestCategorizeEndpoints`, plus the
//! incident's data plane (which pods a client in the callers' zone reaches).
//!
//! The stored copy of upstream's topology_test.go that was read predates the PreferSameNode
//! additions (v1.33); its zone, traffic-policy and terminating cases carry over unchanged to the
//! v1.34 `topologyModeFromHints` code. The PreferSameNode cases come from Antrea's copy of the
//! v1.33+ test (see below).

use std::collections::BTreeSet;

use kube_model::kube_proxy::{Categorized, categorize_endpoints};
use kube_model::{Endpoint, Hints, ProxyNode, ProxyOptions, ServicePolicy, usable_endpoints};

const NODE: &str = "this-node";

#[derive(Clone, Copy, Default)]
struct Ep {
    ready: bool,
    serving: bool,
    terminating: bool,
    local: bool,
}

const READY: Ep = Ep {
    ready: true,
    serving: true,
    terminating: false,
    local: false,
};
const READY_LOCAL: Ep = Ep {
    ready: true,
    serving: true,
    terminating: false,
    local: true,
};
const UNREADY: Ep = Ep {
    ready: false,
    serving: false,
    terminating: false,
    local: false,
};
const TERMINATING: Ep = Ep {
    ready: false,
    serving: true,
    terminating: true,
    local: false,
};

fn pe(addr: &str, zones: &[&str], nodes: &[&str], flags: Ep) -> Endpoint {
    let mut e = Endpoint::new(addr, None, flags.ready);
    e.conditions.serving = Some(flags.serving);
    e.conditions.terminating = Some(flags.terminating);
    e.node_name = Some(if flags.local {
        NODE.to_owned()
    } else {
        "other-node".to_owned()
    });
    if !zones.is_empty() || !nodes.is_empty() {
        e.hints = Some(Hints {
            for_zones: zones.iter().map(|z| z.to_string()).collect(),
            for_nodes: nodes.iter().map(|n| n.to_string()).collect(),
        });
    }
    e
}

fn set(list: &[&Endpoint]) -> BTreeSet<String> {
    list.iter().map(|e| e.address.clone()).collect()
}

fn addrs(a: &[&str]) -> BTreeSet<String> {
    a.iter().map(|s| s.to_string()).collect()
}

fn run<'a>(
    eps: &'a [Endpoint],
    policy: ServicePolicy,
    zone: Option<&str>,
    node: &str,
    gate: bool,
) -> Categorized<'a> {
    categorize_endpoints(
        eps,
        policy,
        ProxyNode { name: node, zone },
        ProxyOptions {
            prefer_same_traffic_distribution: gate,
        },
    )
}

const CLUSTER: ServicePolicy = ServicePolicy {
    internal_local: false,
    external_local: false,
    externally_accessible: false,
};
const ETP_LOCAL: ServicePolicy = ServicePolicy {
    internal_local: false,
    external_local: true,
    externally_accessible: true,
};
const ITP_LOCAL_NODEPORT: ServicePolicy = ServicePolicy {
    internal_local: true,
    external_local: false,
    externally_accessible: true,
};
const ITP_LOCAL: ServicePolicy = ServicePolicy {
    internal_local: true,
    external_local: false,
    externally_accessible: false,
};
const BOTH_LOCAL: ServicePolicy = ServicePolicy {
    internal_local: true,
    external_local: true,
    externally_accessible: true,
};

fn four(zones: [&str; 4], flags: [Ep; 4]) -> Vec<Endpoint> {
    (0..4)
        .map(|i| pe(&format!("10.1.2.{}:80", i + 3), &[zones[i]], &[], flags[i]))
        .collect()
}

// Ported from kubernetes/kubernetes v1.34 pkg/proxy/topology_test.go TestCategorizeEndpoints:
// the topology cases ("should use topology since all endpoints have hints...", "empty node
// labels", "empty zone label", "node in different zone, no endpoint filtering", "unready
// endpoint", "only unready endpoints in same zone (should not filter)", "missing hints, no
// filtering applied", "multiple hints per endpoint, filtering includes any endpoint with zone
// included").
#[test]
fn zone_hint_cases() {
    let all_ready = four(["zone-a", "zone-b", "zone-c", "zone-a"], [READY; 4]);
    let c = run(&all_ready, CLUSTER, Some("zone-a"), NODE, true);
    assert_eq!(
        set(&c.cluster.unwrap()),
        addrs(&["10.1.2.3:80", "10.1.2.6:80"])
    );
    assert!(c.local.is_none());

    let one = vec![pe("10.1.2.3:80", &["zone-a"], &[], READY)];
    for zone in [None, Some(""), Some("zone-b")] {
        let c = run(&one, CLUSTER, zone, NODE, true);
        assert_eq!(
            set(&c.cluster.unwrap()),
            addrs(&["10.1.2.3:80"]),
            "node zone {zone:?}"
        );
    }

    let unready = four(
        ["zone-a", "zone-b", "zone-c", "zone-a"],
        [READY, READY, READY, UNREADY],
    );
    assert_eq!(
        set(&run(&unready, CLUSTER, Some("zone-a"), NODE, true)
            .cluster
            .unwrap()),
        addrs(&["10.1.2.3:80"])
    );

    let only_unready_here = four(
        ["zone-a", "zone-b", "zone-c", "zone-a"],
        [UNREADY, READY, READY, UNREADY],
    );
    let c = run(&only_unready_here, CLUSTER, Some("zone-a"), NODE, true);
    assert_eq!(
        set(&c.cluster.unwrap()),
        addrs(&["10.1.2.4:80", "10.1.2.5:80"])
    );

    let mut missing = four(["zone-a", "zone-b", "zone-c", "zone-a"], [READY; 4]);
    missing[2].hints = None;
    let c = run(&missing, CLUSTER, Some("zone-a"), NODE, true);
    assert_eq!(set(&c.cluster.unwrap()).len(), 4);

    let multi = vec![
        pe("10.1.2.3:80", &["zone-a", "zone-b", "zone-c"], &[], READY),
        pe("10.1.2.4:80", &["zone-b", "zone-c"], &[], READY),
        pe("10.1.2.5:80", &["zone-b", "zone-d"], &[], READY),
        pe("10.1.2.6:80", &["zone-c"], &[], READY),
    ];
    let c = run(&multi, CLUSTER, Some("zone-c"), NODE, true);
    assert_eq!(
        set(&c.cluster.unwrap()),
        addrs(&["10.1.2.3:80", "10.1.2.4:80", "10.1.2.6:80"])
    );
}

// Ported from kubernetes/kubernetes v1.34 pkg/proxy/topology_test.go TestCategorizeEndpoints: "externalTrafficPolicy: Local, topology ignored for
// Local endpoints", "internalTrafficPolicy: Local, topology ignored for Local endpoints" and
// "conflicting topology and localness require merging allEndpoints".
#[test]
fn local_endpoints_ignore_topology() {
    let eps = four(
        ["zone-a", "zone-b", "zone-c", "zone-a"],
        [READY_LOCAL, READY_LOCAL, READY, READY],
    );
    for policy in [ETP_LOCAL, ITP_LOCAL_NODEPORT] {
        let c = run(&eps, policy, Some("zone-a"), NODE, true);
        assert_eq!(
            set(&c.cluster.unwrap()),
            addrs(&["10.1.2.3:80", "10.1.2.6:80"])
        );
        assert_eq!(
            set(&c.local.unwrap()),
            addrs(&["10.1.2.3:80", "10.1.2.4:80"])
        );
        assert_eq!(
            set(&c.all_reachable),
            addrs(&["10.1.2.3:80", "10.1.2.4:80", "10.1.2.6:80"])
        );
    }
}

// Ported from kubernetes/kubernetes v1.34 pkg/proxy/topology_test.go TestCategorizeEndpoints: the traffic-policy and terminating-fallback cases.
#[test]
fn traffic_policy_and_terminating_cases() {
    let two = |a: Ep, b: Ep| {
        vec![
            pe("10.0.0.0:80", &[], &[], a),
            pe("10.0.0.1:80", &[], &[], b),
        ]
    };
    let both = addrs(&["10.0.0.0:80", "10.0.0.1:80"]);

    // "internalTrafficPolicy: Local, with empty endpoints"
    let c = run(&[], ITP_LOCAL, None, NODE, true);
    assert!(c.cluster.is_none() && c.local.unwrap_or_default().is_empty() && !c.has_any);
    // "internalTrafficPolicy: Local, but all endpoints are remote" (onlyRemoteEndpoints)
    let remote = two(READY, READY);
    let c = run(&remote, ITP_LOCAL, None, NODE, true);
    assert!(c.cluster.is_none() && c.local.unwrap().is_empty() && c.has_any);
    // "internalTrafficPolicy: Local, all endpoints are local" / "some endpoints are local"
    assert_eq!(
        set(
            &run(&two(READY_LOCAL, READY_LOCAL), ITP_LOCAL, None, NODE, true)
                .local
                .unwrap()
        ),
        both
    );
    assert_eq!(
        set(&run(&two(READY_LOCAL, READY), ITP_LOCAL, None, NODE, true)
            .local
            .unwrap()),
        addrs(&["10.0.0.0:80"])
    );
    // "Cluster traffic policy, endpoints not Ready" / "some endpoints are Ready" / "all endpoints are terminating"
    let unready = two(UNREADY, UNREADY);
    let c = run(&unready, CLUSTER, None, NODE, true);
    assert!(c.cluster.unwrap().is_empty() && c.local.is_none() && !c.has_any);
    assert_eq!(
        set(&run(&two(UNREADY, READY), CLUSTER, None, NODE, true)
            .cluster
            .unwrap()),
        addrs(&["10.0.0.1:80"])
    );
    let local_terminating = Ep {
        local: true,
        ..TERMINATING
    };
    assert_eq!(
        set(&run(
            &two(local_terminating, TERMINATING),
            CLUSTER,
            None,
            NODE,
            true
        )
        .cluster
        .unwrap()),
        both
    );
    // "iTP: Local, eTP: Cluster", "iTP: Cluster, eTP: Local", "iTP: Local, eTP: Local" with some endpoints local
    for policy in [ITP_LOCAL_NODEPORT, ETP_LOCAL, BOTH_LOCAL] {
        let eps = two(READY_LOCAL, READY);
        let c = run(&eps, policy, None, NODE, true);
        assert_eq!(set(&c.cluster.unwrap()), both);
        assert_eq!(set(&c.local.unwrap()), addrs(&["10.0.0.0:80"]));
        assert_eq!(set(&c.all_reachable), both);
    }
    // "iTP: Local, eTP: Local, all endpoints remote" and "... remote and terminating"
    for flags in [READY, TERMINATING] {
        let eps = two(flags, flags);
        let c = run(&eps, BOTH_LOCAL, None, NODE, true);
        assert_eq!(set(&c.cluster.unwrap()), both);
        assert!(c.local.unwrap().is_empty());
        assert_eq!(set(&c.all_reachable), both);
        assert!(c.has_any);
    }
    // "iTP: Cluster, eTP: Local, with terminating endpoints"
    let eps = vec![
        pe("10.0.0.0:80", &[], &[], READY),
        pe(
            "10.0.0.1:80",
            &[],
            &[],
            Ep {
                local: true,
                ..UNREADY
            },
        ),
        pe("10.0.0.2:80", &[], &[], local_terminating),
        pe("10.0.0.3:80", &[], &[], TERMINATING),
    ];
    let c = run(&eps, ETP_LOCAL, None, NODE, true);
    assert_eq!(set(&c.cluster.unwrap()), addrs(&["10.0.0.0:80"]));
    assert_eq!(set(&c.local.unwrap()), addrs(&["10.0.0.2:80"]));
    assert_eq!(
        set(&c.all_reachable),
        addrs(&["10.0.0.0:80", "10.0.0.2:80"])
    );
}

// PreferSameNode cases of TestCategorizeEndpoints for the v1.33+ topology.go
// (topologyModeFromHints), as carried in antrea-io/antrea third_party/proxy/topology_test.go:
// "PreferSameNode falls back to same-zone when feature gate disabled", "PreferSameNode
// available", "PreferSameNode ignored if some endpoints unhinted", "PreferSameNode falls back to
// PreferSameZone if no endpoint for node".
#[test]
fn prefer_same_node_cases() {
    let zones = ["zone-a", "zone-b", "zone-c", "zone-a"];
    let nodes = ["node-1", "node-2", "node-3", "node-4"];
    let eps: Vec<Endpoint> = (0..4)
        .map(|i| {
            pe(
                &format!("10.1.2.{}:80", i + 3),
                &[zones[i]],
                &[nodes[i]],
                READY,
            )
        })
        .collect();
    let same_zone = addrs(&["10.1.2.3:80", "10.1.2.6:80"]);
    assert_eq!(
        set(&run(&eps, CLUSTER, Some("zone-a"), "node-1", false)
            .cluster
            .unwrap()),
        same_zone
    );
    assert_eq!(
        set(&run(&eps, CLUSTER, Some("zone-a"), "node-1", true)
            .cluster
            .unwrap()),
        addrs(&["10.1.2.3:80"])
    );
    assert_eq!(
        set(&run(&eps, CLUSTER, Some("zone-a"), "node-0", true)
            .cluster
            .unwrap()),
        same_zone
    );
    let mut unhinted = eps.clone();
    unhinted[1].hints = None;
    assert_eq!(
        set(&run(&unhinted, CLUSTER, Some("zone-a"), "node-1", true)
            .cluster
            .unwrap())
        .len(),
        4
    );
}

// The incident's data plane: with hints 2a,2a,2c,2c a client on a 2a node reaches only the two
// 2a-hinted pods; without hints it reaches all four.
#[test]
fn usable_endpoints_for_the_incident() {
    let hinted: Vec<Endpoint> = ["2a", "2a", "2c", "2c"]
        .iter()
        .enumerate()
        .map(|(i, z)| pe(&format!("10.0.2.{}", i + 1), &[z], &[], READY))
        .collect();
    let client = ProxyNode {
        name: "ingress-1",
        zone: Some("2a"),
    };
    let usable = usable_endpoints(&hinted, client, CLUSTER, ProxyOptions::default());
    assert_eq!(set(&usable), addrs(&["10.0.2.1", "10.0.2.2"]));
    let plain: Vec<Endpoint> = hinted.iter().cloned().map(|e| e.with_hints(None)).collect();
    assert_eq!(
        usable_endpoints(&plain, client, CLUSTER, ProxyOptions::default()).len(),
        4
    );
}

//! The topology cache's view of nodes: upstream's `TestSetNodes` cases (which nodes count,
//! CPU per zone, ratios) and the node events that make the controller recompute.

use std::collections::BTreeMap;

use kube_model::{Node, TopologyCache};

/// A node as upstream's TestSetNodes builds it (no name needed there; names are unique here).
fn node(i: usize, zone: &str, cpu: u64, ready: bool, control_plane: bool) -> Node {
    Node {
        name: format!("node-{i}"),
        zone: Some(zone.into()),
        allocatable_cpu_millis: Some(cpu),
        ready,
        control_plane,
    }
}

// Ported from kubernetes/kubernetes v1.34 staging/src/k8s.io/endpointslice/topologycache/topologycache_test.go TestSetNodes (all nine cases).
#[test]
fn set_nodes_upstream_cases() {
    type Case = (
        &'static str,
        Vec<Node>,
        Option<Vec<(&'static str, u64, f64)>>,
    );
    let cases: Vec<Case> = vec![
        ("empty", vec![], None),
        (
            "single node",
            vec![node(0, "zone-a", 1000, true, false)],
            None,
        ),
        (
            "single zone",
            vec![
                node(0, "zone-a", 1000, true, false),
                node(1, "zone-a", 1000, true, false),
            ],
            None,
        ),
        (
            "2 zones",
            vec![
                node(0, "zone-a", 1000, true, false),
                node(1, "zone-b", 1000, true, false),
            ],
            Some(vec![("zone-a", 1000, 0.5), ("zone-b", 1000, 0.5)]),
        ),
        (
            "2 zones, unready node in 1, ready node in 1",
            vec![
                node(0, "zone-a", 1000, false, false),
                node(1, "zone-b", 1000, true, false),
            ],
            None,
        ),
        (
            "2 zones, control plane node in 1, ready node in 1",
            vec![
                node(0, "zone-a", 1000, true, false),
                node(1, "zone-b", 1000, true, true),
            ],
            None,
        ),
        (
            "2 zones, unready node in 1, ready node in 2",
            vec![
                node(0, "zone-a", 1000, true, false),
                node(1, "zone-b", 1000, true, false),
                node(2, "zone-b", 1000, false, false),
            ],
            Some(vec![("zone-a", 1000, 0.5), ("zone-b", 1000, 0.5)]),
        ),
        (
            "2 zones, control plane node in 1, ready node in 2",
            vec![
                node(0, "zone-a", 1000, true, false),
                node(1, "zone-b", 1000, true, false),
                node(2, "zone-b", 1000, true, true),
            ],
            Some(vec![("zone-a", 1000, 0.5), ("zone-b", 1000, 0.5)]),
        ),
        (
            "3 zones, 4 nodes in 1, 2 nodes in 1, 1 node in 1",
            vec![
                node(0, "zone-a", 1000, true, false),
                node(1, "zone-a", 1000, true, false),
                node(2, "zone-a", 1000, true, false),
                node(3, "zone-a", 2000, true, false),
                node(4, "zone-b", 3000, true, false),
                node(5, "zone-b", 1500, true, false),
                node(6, "zone-c", 500, true, false),
            ],
            Some(vec![
                ("zone-a", 5000, 0.5),
                ("zone-b", 4500, 0.45),
                ("zone-c", 500, 0.05),
            ]),
        ),
    ];
    for (name, nodes, expected) in cases {
        let mut cache = TopologyCache::new();
        cache.recompute_from_nodes(&nodes);
        assert_eq!(
            cache.sufficient_node_info(),
            expected.is_some(),
            "{name}: sufficientNodeInfo"
        );
        match expected {
            None => {
                assert!(cache.cpu_ratios().is_none(), "{name}: ratios");
                assert!(cache.cpu_by_zone().is_none(), "{name}: cpu");
            }
            Some(zones) => {
                let want_cpu: BTreeMap<String, u64> =
                    zones.iter().map(|(z, c, _)| (z.to_string(), *c)).collect();
                let want_ratio: BTreeMap<String, f64> =
                    zones.iter().map(|(z, _, r)| (z.to_string(), *r)).collect();
                assert_eq!(cache.cpu_by_zone(), Some(&want_cpu), "{name}: cpu");
                assert_eq!(cache.cpu_ratios(), Some(&want_ratio), "{name}: ratios");
            }
        }
    }
}

// Upstream topologycache.go SetNodes: one ready worker without a zone label (or without
// allocatable CPU) wipes all ratios, even when other zones are fine.
#[test]
fn one_node_without_zone_or_cpu_invalidates_all_ratios() {
    let mut cache = TopologyCache::new();
    let mut nodes = vec![
        node(0, "zone-a", 1000, true, false),
        node(1, "zone-b", 1000, true, false),
    ];
    nodes.push(Node {
        name: "no-zone".into(),
        zone: None,
        allocatable_cpu_millis: Some(1000),
        ready: true,
        control_plane: false,
    });
    cache.recompute_from_nodes(&nodes);
    assert!(cache.cpu_ratios().is_none());
    nodes[2] = Node {
        name: "no-cpu".into(),
        zone: Some("zone-a".into()),
        allocatable_cpu_millis: None,
        ready: true,
        control_plane: false,
    };
    cache.recompute_from_nodes(&nodes);
    assert!(cache.cpu_ratios().is_none());
    // ...but an unready one is ignored before its labels are looked at.
    nodes[2].ready = false;
    cache.recompute_from_nodes(&nodes);
    assert_eq!(cache.cpu_ratios().map(|r| r["zone-a"]), Some(0.5));
}

// pkg/controller/endpointslice/endpointslice_controller.go v1.34: addNode/deleteNode always queue a
// topology check; updateNode only when readiness or the zone label changed.
#[test]
fn set_nodes_recomputes_only_on_upstream_node_events() {
    let mut cache = TopologyCache::new();
    let mut nodes = vec![
        node(0, "zone-a", 1000, true, false),
        node(1, "zone-b", 1000, true, false),
    ];
    assert!(cache.set_nodes(&nodes), "initial list");
    assert!(!cache.set_nodes(&nodes), "no change");

    nodes[0].allocatable_cpu_millis = Some(3000);
    assert!(!cache.set_nodes(&nodes), "allocatable CPU change alone");
    assert_eq!(
        cache.cpu_ratios().map(|r| r["zone-a"]),
        Some(0.5),
        "ratios stay stale"
    );

    nodes.push(node(2, "zone-b", 1000, true, false));
    assert!(cache.set_nodes(&nodes), "node added");
    assert_eq!(
        cache.cpu_ratios().map(|r| r["zone-a"]),
        Some(0.6),
        "recompute sees the earlier CPU change"
    );

    nodes[2].ready = false;
    assert!(cache.set_nodes(&nodes), "ready flip");
    assert_eq!(cache.cpu_ratios().map(|r| r["zone-a"]), Some(0.75));

    nodes[2].zone = Some("zone-c".into());
    assert!(cache.set_nodes(&nodes), "zone label change");

    nodes[1].control_plane = true;
    assert!(
        !cache.set_nodes(&nodes),
        "role label change is not a trigger"
    );

    nodes.pop();
    assert!(cache.set_nodes(&nodes), "node deleted");
    assert!(
        cache.cpu_ratios().is_none(),
        "now the control-plane label counts: one zone left"
    );
}

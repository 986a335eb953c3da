//! Why kube-proxy uses or ignores topology hints, checked on the cases of upstream's
//! TestCategorizeEndpoints (kubernetes/kubernetes v1.34, pkg/proxy/topology_test.go): for each
//! case the explained endpoint list equals upstream's expected `clusterEndpoints` (and what
//! `categorize_endpoints` returns), and the reason is the condition under which upstream's
//! `topologyModeFromHints` (pkg/proxy/topology.go) uses the hints or logs why it ignores them.
//! The cases with a Local traffic policy only differ in their Local list, which ignores
//! topology; their Cluster lists are covered here.

use std::collections::BTreeSet;

use kube_model::kube_proxy::{TopologyMode, categorize_endpoints};
use kube_model::topology_reason::{
    EndpointSource, HintsDecision, NodeHintsSkipped, explain_cluster_endpoints,
};
use kube_model::{Endpoint, Hints, ProxyNode, ProxyOptions, ServicePolicy};

const NODE: &str = "this-node";

/// `BaseEndpointInfo{endpoint, zoneHints, ready, serving, terminating}` with every condition
/// written out (Go's zero value is false; an unset condition here would mean true).
fn ep(addr: &str, zones: &[&str], ready: bool, serving: bool, terminating: bool) -> Endpoint {
    let mut e = Endpoint::new(addr, None, ready);
    e.conditions.serving = Some(serving);
    e.conditions.terminating = Some(terminating);
    e.node_name = Some("other-node".into());
    if !zones.is_empty() {
        e.hints = Some(Hints {
            for_zones: zones.iter().map(|z| z.to_string()).collect(),
            for_nodes: Vec::new(),
        });
    }
    e
}

fn ready(addr: &str, zones: &[&str]) -> Endpoint {
    ep(addr, zones, true, true, false)
}

fn set<'a>(list: impl IntoIterator<Item = &'a Endpoint>) -> BTreeSet<String> {
    list.into_iter().map(|e| e.address.clone()).collect()
}

struct Case {
    name: &'static str,
    zone: Option<&'static str>,
    endpoints: Vec<Endpoint>,
    cluster: &'static [&'static str],
    mode: TopologyMode,
    hints: HintsDecision,
    source: EndpointSource,
}

fn cases() -> Vec<Case> {
    let four = |z: [&[&str]; 4], r: [bool; 4]| -> Vec<Endpoint> {
        (0..4)
            .map(|i| ep(&format!("10.1.2.{}:80", i + 3), z[i], r[i], r[i], false))
            .collect()
    };
    let abca: [&[&str]; 4] = [&["zone-a"], &["zone-b"], &["zone-c"], &["zone-a"]];
    vec![
        Case {
            name: "should use topology since all endpoints have hints, node has a zone label and \
                   and there are endpoints for the node's zone",
            zone: Some("zone-a"),
            endpoints: four(abca, [true; 4]),
            cluster: &["10.1.2.3:80", "10.1.2.6:80"],
            mode: TopologyMode::PreferSameZone,
            hints: HintsDecision::ZoneHintsUsed {
                zone: "zone-a".into(),
            },
            source: EndpointSource::Ready,
        },
        Case {
            name: "empty node labels",
            zone: None,
            endpoints: vec![ready("10.1.2.3:80", &["zone-a"])],
            cluster: &["10.1.2.3:80"],
            mode: TopologyMode::None,
            hints: HintsDecision::NodeMissingZoneLabel,
            source: EndpointSource::Ready,
        },
        Case {
            name: "empty zone label",
            zone: Some(""),
            endpoints: vec![ready("10.1.2.3:80", &["zone-a"])],
            cluster: &["10.1.2.3:80"],
            mode: TopologyMode::None,
            hints: HintsDecision::NodeMissingZoneLabel,
            source: EndpointSource::Ready,
        },
        Case {
            name: "node in different zone, no endpoint filtering",
            zone: Some("zone-b"),
            endpoints: vec![ready("10.1.2.3:80", &["zone-a"])],
            cluster: &["10.1.2.3:80"],
            mode: TopologyMode::None,
            hints: HintsDecision::NoEndpointForZone {
                zone: "zone-b".into(),
            },
            source: EndpointSource::Ready,
        },
        Case {
            name: "unready endpoint",
            zone: Some("zone-a"),
            endpoints: four(abca, [true, true, true, false]),
            cluster: &["10.1.2.3:80"],
            mode: TopologyMode::PreferSameZone,
            hints: HintsDecision::ZoneHintsUsed {
                zone: "zone-a".into(),
            },
            source: EndpointSource::Ready,
        },
        Case {
            name: "only unready endpoints in same zone (should not filter)",
            zone: Some("zone-a"),
            endpoints: four(abca, [false, true, true, false]),
            cluster: &["10.1.2.4:80", "10.1.2.5:80"],
            mode: TopologyMode::None,
            hints: HintsDecision::NoEndpointForZone {
                zone: "zone-a".into(),
            },
            source: EndpointSource::Ready,
        },
        Case {
            name: "missing hints, no filtering applied",
            zone: Some("zone-a"),
            endpoints: four([&["zone-a"], &["zone-b"], &[], &["zone-a"]], [true; 4]),
            cluster: &["10.1.2.3:80", "10.1.2.4:80", "10.1.2.5:80", "10.1.2.6:80"],
            mode: TopologyMode::None,
            hints: HintsDecision::EndpointMissingZoneHint {
                endpoints: vec!["10.1.2.5:80".into()],
            },
            source: EndpointSource::Ready,
        },
        Case {
            name: "multiple hints per endpoint, filtering includes any endpoint with zone included",
            zone: Some("zone-c"),
            endpoints: four(
                [
                    &["zone-a", "zone-b", "zone-c"],
                    &["zone-b", "zone-c"],
                    &["zone-b", "zone-d"],
                    &["zone-c"],
                ],
                [true; 4],
            ),
            cluster: &["10.1.2.3:80", "10.1.2.4:80", "10.1.2.6:80"],
            mode: TopologyMode::PreferSameZone,
            hints: HintsDecision::ZoneHintsUsed {
                zone: "zone-c".into(),
            },
            source: EndpointSource::Ready,
        },
        Case {
            name: "Cluster traffic policy, endpoints not Ready",
            zone: None,
            endpoints: vec![
                ep("10.0.0.0:80", &[], false, false, false),
                ep("10.0.0.1:80", &[], false, false, false),
            ],
            cluster: &[],
            mode: TopologyMode::None,
            hints: HintsDecision::NoReadyEndpoints,
            source: EndpointSource::None,
        },
        Case {
            name: "Cluster traffic policy, some endpoints are Ready",
            zone: None,
            endpoints: vec![
                ep("10.0.0.0:80", &[], false, false, false),
                ready("10.0.0.1:80", &[]),
            ],
            cluster: &["10.0.0.1:80"],
            mode: TopologyMode::None,
            hints: HintsDecision::EndpointMissingZoneHint {
                endpoints: vec!["10.0.0.1:80".into()],
            },
            source: EndpointSource::Ready,
        },
        Case {
            name: "Cluster traffic policy, all endpoints are terminating",
            zone: None,
            endpoints: vec![
                ep("10.0.0.0:80", &[], false, true, true),
                ep("10.0.0.1:80", &[], false, true, true),
            ],
            cluster: &["10.0.0.0:80", "10.0.0.1:80"],
            mode: TopologyMode::None,
            hints: HintsDecision::NoReadyEndpoints,
            source: EndpointSource::ServingTerminating,
        },
        Case {
            name: "iTP: Cluster, eTP: Local, with terminating endpoints",
            zone: None,
            endpoints: vec![
                ready("10.0.0.0:80", &[]),
                ep("10.0.0.1:80", &[], false, false, false),
                ep("10.0.0.2:80", &[], false, true, true),
                ep("10.0.0.3:80", &[], false, true, true),
            ],
            cluster: &["10.0.0.0:80"],
            mode: TopologyMode::None,
            hints: HintsDecision::EndpointMissingZoneHint {
                endpoints: vec!["10.0.0.0:80".into()],
            },
            source: EndpointSource::Ready,
        },
    ]
}

#[test]
fn explains_every_cluster_case_of_test_categorize_endpoints() {
    for c in cases() {
        let node = ProxyNode {
            name: NODE,
            zone: c.zone,
        };
        for options in [
            ProxyOptions::default(),
            ProxyOptions {
                prefer_same_traffic_distribution: false,
            },
        ] {
            let x = explain_cluster_endpoints(&c.endpoints, node, options);
            let expected: BTreeSet<String> = c.cluster.iter().map(|s| s.to_string()).collect();
            assert_eq!(set(x.endpoints.iter().copied()), expected, "{}", c.name);
            let upstream =
                categorize_endpoints(&c.endpoints, ServicePolicy::default(), node, options);
            assert_eq!(
                set(upstream.cluster.unwrap_or_default()),
                expected,
                "{}: the model agrees",
                c.name
            );
            assert_eq!(x.mode, c.mode, "{}", c.name);
            assert_eq!(x.hints, c.hints, "{}", c.name);
            assert_eq!(x.source, c.source, "{}", c.name);
            // No endpoint in these cases has a node hint: with the gate on, node hints are
            // passed over for that reason whenever a ready endpoint exists.
            let any_ready = c.endpoints.iter().any(|e| e.conditions.ready == Some(true));
            let expected_skip = (options.prefer_same_traffic_distribution && any_ready)
                .then_some(NodeHintsSkipped::EndpointMissingNodeHint);
            assert_eq!(x.node_hints, expected_skip, "{}", c.name);
        }
    }
}

// The PreferSameNode cases (v1.33+, gate PreferSameTrafficDistribution): node hints win when
// every ready endpoint has one and one is for this node; otherwise zone hints decide.
#[test]
fn node_hints_used_or_passed_over() {
    let zones = ["zone-a", "zone-b", "zone-c", "zone-a"];
    let nodes = ["node-1", "node-2", "node-3", "node-4"];
    let eps: Vec<Endpoint> = (0..4)
        .map(|i| {
            let mut e = ready(&format!("10.1.2.{}:80", i + 3), &[zones[i]]);
            e.hints.as_mut().unwrap().for_nodes = vec![nodes[i].to_string()];
            e
        })
        .collect();
    let on = ProxyOptions::default();
    let x = explain_cluster_endpoints(
        &eps,
        ProxyNode {
            name: "node-1",
            zone: Some("zone-a"),
        },
        on,
    );
    assert_eq!(
        (x.mode, x.hints.clone()),
        (TopologyMode::PreferSameNode, HintsDecision::NodeHintsUsed)
    );
    assert_eq!(
        set(x.endpoints.iter().copied()),
        ["10.1.2.3:80".to_string()].into()
    );
    assert_eq!(x.node_hints, None);

    let x = explain_cluster_endpoints(
        &eps,
        ProxyNode {
            name: "node-0",
            zone: Some("zone-a"),
        },
        on,
    );
    assert_eq!(x.mode, TopologyMode::PreferSameZone);
    assert_eq!(x.node_hints, Some(NodeHintsSkipped::NoEndpointForNode));
    assert_eq!(set(x.endpoints.iter().copied()).len(), 2);

    let mut unhinted = eps.clone();
    unhinted[1].hints.as_mut().unwrap().for_nodes.clear();
    let x = explain_cluster_endpoints(
        &unhinted,
        ProxyNode {
            name: "node-1",
            zone: Some("zone-a"),
        },
        on,
    );
    assert_eq!(x.mode, TopologyMode::PreferSameZone);
    assert_eq!(
        x.node_hints,
        Some(NodeHintsSkipped::EndpointMissingNodeHint)
    );

    let off = ProxyOptions {
        prefer_same_traffic_distribution: false,
    };
    let x = explain_cluster_endpoints(
        &eps,
        ProxyNode {
            name: "node-1",
            zone: Some("zone-a"),
        },
        off,
    );
    assert_eq!(
        (x.mode, x.node_hints.clone()),
        (TopologyMode::PreferSameZone, None)
    );
}

#[test]
fn reasons_read_as_upstreams_log_lines() {
    assert_eq!(
        HintsDecision::NoEndpointForZone {
            zone: "zone-a".into()
        }
        .describe(),
        "zone hints ignored: no hints were provided for zone zone-a"
    );
    assert!(
        HintsDecision::EndpointMissingZoneHint {
            endpoints: vec!["10.0.0.5".into()]
        }
        .describe()
        .contains("one or more endpoints is missing a zone hint (10.0.0.5)")
    );
}

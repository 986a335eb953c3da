//! Cases from upstream's own unit tests for the EndpointSlice topology cache, translated to the
//! Rust model, plus the skew incident's numbers and the node-event recompute trigger.

use std::collections::BTreeMap;

use kube_model::events::{REASON_DISABLED, REASON_ENABLED, messages};
use kube_model::{
    AddressType, Endpoint, EndpointSlice, EventType, Hints, Node, SliceInfo, TopologyCache,
};

fn ep(addr: &str, zone: &str, ready: Option<bool>) -> Endpoint {
    let mut e = Endpoint::new(addr, Some(zone), true);
    e.conditions.ready = ready;
    e
}

fn hinted(mut e: Endpoint, zone: &str) -> Endpoint {
    e.hints = Some(Hints::zone(zone));
    e
}

fn slice(name: &str, endpoints: Vec<Endpoint>) -> EndpointSlice {
    EndpointSlice::new(name, endpoints)
}

fn info(to_create: Vec<EndpointSlice>, to_update: Vec<EndpointSlice>) -> SliceInfo {
    SliceInfo {
        service_key: "ns/svc".into(),
        address_type: AddressType::IPv4,
        to_create,
        to_update,
        unchanged: vec![],
    }
}

/// TestAddHints' single-slice cases: slice `a`, to create, with `endpoints`.
fn to_create(endpoints: Vec<Endpoint>) -> SliceInfo {
    info(vec![slice("a", endpoints)], vec![])
}

/// The first two endpoints of TestAddHints' two-endpoint cases: 10.1.2.3 in zone-a and
/// 10.1.2.4 in zone-b, both ready.
fn ready_in_a_and_b() -> Vec<Endpoint> {
    vec![
        ep("10.1.2.3", "zone-a", Some(true)),
        ep("10.1.2.4", "zone-b", Some(true)),
    ]
}

fn ratios(pairs: &[(&str, f64)]) -> Option<BTreeMap<String, f64>> {
    Some(pairs.iter().map(|(z, r)| (z.to_string(), *r)).collect())
}

fn counts(pairs: &[(&str, i64)]) -> BTreeMap<String, i64> {
    pairs.iter().map(|(z, n)| (z.to_string(), *n)).collect()
}

fn zones_of(slices: &[EndpointSlice]) -> Vec<Vec<String>> {
    slices
        .iter()
        .flat_map(|s| &s.endpoints)
        .map(|e| e.for_zones().to_vec())
        .collect()
}

fn z(names: &[&str]) -> Vec<Vec<String>> {
    names
        .iter()
        .map(|n| {
            if n.is_empty() {
                vec![]
            } else {
                vec![n.to_string()]
            }
        })
        .collect()
}

// Ported from kubernetes/kubernetes v1.34 staging/src/k8s.io/endpointslice/topologycache/topologycache_test.go
// TestAddHints "empty" and "slice to create, no zone ratios": no ratios -> InsufficientNodeInfo, no hints.
#[test]
fn add_hints_without_node_information_is_disabled() {
    let mut cache = TopologyCache::new();
    cache.set_cpu_ratios(None);
    let mut si = to_create(vec![ep("10.1.2.3", "zone-a", Some(true))]);
    let events = cache.add_hints(&mut si);
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].event_type, EventType::Warning);
    assert_eq!(events[0].reason, REASON_DISABLED);
    assert_eq!(
        events[0].message,
        format!("{}, addressType: IPv4", messages::INSUFFICIENT_NODE_INFO)
    );
    assert_eq!(zones_of(&si.to_create), z(&[""]));
    assert!(cache.hint_counts("ns/svc", AddressType::IPv4).is_none());
}

// Ported from kubernetes/kubernetes v1.34 staging/src/k8s.io/endpointslice/topologycache/topologycache_test.go TestAddHints
// "slice to create with 2 endpoints, zone ratios require 3".
#[test]
fn add_hints_with_fewer_endpoints_than_zones_is_disabled() {
    let mut cache = TopologyCache::new();
    cache.set_cpu_ratios(ratios(&[("zone-a", 0.3), ("zone-b", 0.4), ("zone-c", 0.3)]));
    let mut si = to_create(ready_in_a_and_b());
    let events = cache.add_hints(&mut si);
    assert_eq!(events[0].reason, REASON_DISABLED);
    assert_eq!(
        events[0].message,
        "Insufficient number of endpoints (2 endpoints, 3 zones), addressType: IPv4"
    );
    assert_eq!(zones_of(&si.to_create), z(&["", ""]));
}

// Ported from kubernetes/kubernetes v1.34 staging/src/k8s.io/endpointslice/topologycache/topologycache_test.go TestAddHints
// "slice to create with 2 endpoints, zone ratios only require 2".
#[test]
fn add_hints_two_endpoints_two_zones() {
    let mut cache = TopologyCache::new();
    cache.set_cpu_ratios(ratios(&[("zone-a", 0.45), ("zone-b", 0.55)]));
    let mut si = to_create(ready_in_a_and_b());
    let events = cache.add_hints(&mut si);
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].event_type, EventType::Normal);
    assert_eq!(events[0].reason, REASON_ENABLED);
    assert_eq!(
        events[0].message,
        "Topology Aware Hints has been enabled, addressType: IPv4"
    );
    assert_eq!(zones_of(&si.to_create), z(&["zone-a", "zone-b"]));
    assert_eq!(
        cache.hint_counts("ns/svc", AddressType::IPv4),
        Some(&counts(&[("zone-a", 1), ("zone-b", 1)]))
    );
}

// Ported from kubernetes/kubernetes v1.34 staging/src/k8s.io/endpointslice/topologycache/topologycache_test.go TestAddHints
// "slice to create with 2 ready, 1 unready, 1 unknown endpoints, zone ratios only require 2".
#[test]
fn add_hints_skips_unready_and_unknown_endpoints() {
    let mut cache = TopologyCache::new();
    cache.set_cpu_ratios(ratios(&[("zone-a", 0.45), ("zone-b", 0.55)]));
    let mut endpoints = ready_in_a_and_b();
    endpoints.extend([
        ep("10.1.2.5", "zone-b", Some(false)),
        ep("10.1.2.6", "zone-b", None),
    ]);
    let mut si = to_create(endpoints);
    let events = cache.add_hints(&mut si);
    assert_eq!(events[0].reason, REASON_ENABLED);
    assert_eq!(zones_of(&si.to_create), z(&["zone-a", "zone-b", "", ""]));
    assert_eq!(
        cache.hint_counts("ns/svc", AddressType::IPv4),
        Some(&counts(&[("zone-a", 1), ("zone-b", 1)]))
    );
}

// Ported from kubernetes/kubernetes v1.34 staging/src/k8s.io/endpointslice/topologycache/topologycache_test.go TestAddHints
// "slices to create and update within 3 zone threshold": zone-a's surplus endpoint (the first
// ready zone-a endpoint, 10.1.2.3) is redistributed to zone-b.
#[test]
fn add_hints_redistributes_across_three_zones() {
    let mut cache = TopologyCache::new();
    cache.set_cpu_ratios(ratios(&[
        ("zone-a", 0.35),
        ("zone-b", 0.35),
        ("zone-c", 0.30),
    ]));
    let t = Some(true);
    let mut si = info(
        vec![
            slice(
                "c1",
                vec![ep("10.1.2.3", "zone-a", t), ep("10.1.2.4", "zone-b", t)],
            ),
            slice(
                "c2",
                vec![
                    ep("10.1.3.3", "zone-c", t),
                    ep("10.1.3.4", "zone-c", t),
                    ep("10.1.3.4", "zone-a", t),
                ],
            ),
        ],
        vec![
            slice(
                "u1",
                vec![ep("10.2.2.3", "zone-a", t), ep("10.2.2.4", "zone-a", t)],
            ),
            slice(
                "u2",
                vec![
                    ep("10.2.3.3", "zone-b", t),
                    ep("10.2.3.4", "zone-c", t),
                    ep("10.2.3.4", "zone-a", t),
                ],
            ),
        ],
    );
    let events = cache.add_hints(&mut si);
    assert_eq!(events[0].reason, REASON_ENABLED);
    assert_eq!(
        zones_of(&si.to_create),
        z(&["zone-b", "zone-b", "zone-c", "zone-c", "zone-a"])
    );
    assert_eq!(
        zones_of(&si.to_update),
        z(&["zone-a", "zone-a", "zone-b", "zone-c", "zone-a"])
    );
    assert_eq!(
        cache.hint_counts("ns/svc", AddressType::IPv4),
        Some(&counts(&[("zone-a", 4), ("zone-b", 3), ("zone-c", 3)]))
    );
}

fn incident(cpu_a: u64, cpu_c: u64) -> (TopologyCache, SliceInfo, Vec<kube_model::Event>) {
    let mut cache = TopologyCache::new();
    let nodes = [
        Node::worker("a1", "ap-northeast-2a", cpu_a),
        Node::worker("c1", "ap-northeast-2c", cpu_c),
    ];
    cache.set_nodes(&nodes);
    let eps = (1..=4)
        .map(|i| ep(&format!("10.0.2.{i}"), "ap-northeast-2c", Some(true)))
        .collect();
    let mut si = SliceInfo::existing(
        "flags/flagsvc",
        AddressType::IPv4,
        vec![slice("flagsvc-x", eps)],
    );
    let events = cache.add_hints(&mut si);
    (cache, si, events)
}

// Incident 1 (topology-aware-routing-skew): 4 endpoints, CPU 0.5/0.5 -> minimum 2 per zone,
// hints on, two endpoints of zone 2c are handed to 2a.
#[test]
fn incident_balanced_cpu_hints_two_and_two() {
    let (cache, si, events) = incident(4000, 4000);
    assert_eq!(cache.allocations(4).unwrap()["ap-northeast-2a"].minimum, 2);
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].reason, REASON_ENABLED);
    assert_eq!(
        zones_of(&si.to_update),
        z(&[
            "ap-northeast-2a",
            "ap-northeast-2a",
            "ap-northeast-2c",
            "ap-northeast-2c"
        ])
    );
    assert_eq!(
        cache.hint_counts("flags/flagsvc", AddressType::IPv4),
        Some(&counts(&[("ap-northeast-2a", 2), ("ap-northeast-2c", 2)]))
    );
}

// Incident 1: CPU 0.65/0.35 -> minimums 3 and 2, 5 > 4: hints removed with the exact message.
#[test]
fn incident_skewed_cpu_disables_hints_with_exact_message() {
    let (cache, si, events) = incident(6500, 3500);
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].event_type, EventType::Warning);
    assert_eq!(events[0].reason, "TopologyAwareHintsDisabled");
    assert_eq!(
        events[0].message,
        "Unable to allocate minimum required endpoints to each zone without exceeding overload threshold \
         (4 endpoints, 2 zones), addressType: IPv4"
    );
    assert!(
        si.all_slices()
            .flat_map(|s| &s.endpoints)
            .all(|e| e.hints.is_none())
    );
    assert!(!cache.has_populated_hints("flags/flagsvc"));
}

// Upstream sliceinfo.go getAllocatedHintsByZone: unchanged slices whose hints still fit are kept
// as they are (here: hints from an earlier 2a/2c split survive a reconcile at the same ratios).
#[test]
fn valid_existing_hints_are_kept_unchanged() {
    let mut cache = TopologyCache::new();
    cache.set_nodes(&[
        Node::worker("a1", "zone-a", 1000),
        Node::worker("b1", "zone-b", 1000),
    ]);
    let eps = vec![
        hinted(ep("10.0.0.1", "zone-b", Some(true)), "zone-a"),
        hinted(ep("10.0.0.2", "zone-b", Some(true)), "zone-b"),
    ];
    let mut si = SliceInfo::existing("ns/svc", AddressType::IPv4, vec![slice("s", eps)]);
    let events = cache.add_hints(&mut si);
    assert_eq!(events[0].reason, REASON_ENABLED);
    assert!(si.to_update.is_empty());
    assert_eq!(zones_of(&si.unchanged), z(&["zone-a", "zone-b"]));
    // A second reconcile of a Service that already has hints emits nothing.
    assert!(cache.add_hints(&mut si).is_empty());
}

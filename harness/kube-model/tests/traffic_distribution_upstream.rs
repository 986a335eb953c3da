//! trafficDistribution hints and the reconciler's choice between the topology annotation and
//! `spec.trafficDistribution`, with cases from upstream's tests. The stored trafficdist_test.go
//! that was read (@413af836b381) predates PreferSameNode; the PreferSameNode case below is
//! derived from trafficdist.go itself.

use kube_model::reconcile::{ANNOTATION_TOPOLOGY_AWARE_HINTS, ANNOTATION_TOPOLOGY_MODE};
use kube_model::traffic_dist::reconcile_hints;
use kube_model::{
    AddressType, ControllerOptions, Endpoint, EndpointSlice, HintsInput, Node, RoutingMode,
    ServiceTopology, TrafficDistribution, compute_hints,
};

fn ep(addr: &str, zone: &str, node: &str, ready: bool, hint: Option<&str>) -> Endpoint {
    let mut e = Endpoint::new(addr, Some(zone), ready).on_node(node);
    e.hints = hint.map(kube_model::Hints::zone);
    e
}

fn hint_zones(slices: &[EndpointSlice]) -> Vec<Vec<String>> {
    slices
        .iter()
        .flat_map(|s| &s.endpoints)
        .map(|e| e.for_zones().to_vec())
        .collect()
}

fn owned(v: &[&[&str]]) -> Vec<Vec<String>> {
    v.iter()
        .map(|zs| zs.iter().map(|z| z.to_string()).collect())
        .collect()
}

// Ported from kubernetes/kubernetes v1.34 staging/src/k8s.io/endpointslice/trafficdist/trafficdist_test.go
// TestReconcileHints "should correct incorrect hints with PreferClose".
#[test]
fn prefer_close_corrects_incorrect_hints() {
    let mut create = vec![];
    let mut update = vec![EndpointSlice::new(
        "u",
        vec![ep("10.0.0.1", "zone-a", "node-1", true, Some("zone-b"))],
    )];
    let mut unchanged = vec![
        EndpointSlice::new(
            "x",
            vec![ep("10.0.0.2", "zone-b", "node-2", true, Some("zone-c"))],
        ),
        EndpointSlice::new("y", vec![ep("10.0.0.3", "zone-c", "node-3", true, None)]),
    ];
    reconcile_hints(
        Some(TrafficDistribution::PreferClose),
        &mut create,
        &mut update,
        &mut unchanged,
    );
    assert!(unchanged.is_empty());
    assert_eq!(
        hint_zones(&update),
        owned(&[&["zone-a"], &["zone-b"], &["zone-c"]])
    );
    assert!(
        update
            .iter()
            .flat_map(|s| &s.endpoints)
            .all(|e| e.for_nodes().is_empty())
    );
}

// Ported from kubernetes/kubernetes v1.34 staging/src/k8s.io/endpointslice/trafficdist/trafficdist_test.go
// TestReconcileHints "unready endpoints should not trigger updates".
#[test]
fn unready_endpoints_do_not_trigger_updates() {
    let (mut create, mut update) = (vec![], vec![]);
    let mut unchanged = vec![EndpointSlice::new(
        "x",
        vec![ep("10.0.0.2", "zone-b", "node-2", false, None)],
    )];
    reconcile_hints(
        Some(TrafficDistribution::PreferClose),
        &mut create,
        &mut update,
        &mut unchanged,
    );
    assert!(update.is_empty());
    assert_eq!(unchanged.len(), 1);
    assert_eq!(hint_zones(&unchanged), owned(&[&[]]));
}

// Ported from kubernetes/kubernetes v1.34 staging/src/k8s.io/endpointslice/trafficdist/trafficdist_test.go
// TestReconcileHints "should remove hints when trafficDistribution is unset".
#[test]
fn unset_distribution_removes_hints() {
    let mut create = vec![];
    let mut update = vec![EndpointSlice::new(
        "u",
        vec![ep("10.0.0.5", "zone-a", "node-5", true, Some("zone-a"))],
    )];
    let mut unchanged = vec![EndpointSlice::new(
        "x",
        vec![ep("10.0.0.6", "zone-b", "node-6", true, Some("zone-b"))],
    )];
    reconcile_hints(None, &mut create, &mut update, &mut unchanged);
    assert_eq!(update.len(), 2);
    assert!(unchanged.is_empty());
    assert_eq!(hint_zones(&update), owned(&[&[], &[]]));
    assert!(
        update
            .iter()
            .flat_map(|s| &s.endpoints)
            .all(|e| e.hints.is_none())
    );
}

// trafficdist.go v1.34 preferCloseHeuristic{generateNodeHints: PreferSameNode}: PreferSameNode adds forNodes.
#[test]
fn prefer_same_node_adds_node_hints() {
    let mut create = vec![EndpointSlice::new(
        "c",
        vec![ep("10.0.0.1", "zone-a", "node-1", true, None)],
    )];
    let (mut update, mut unchanged) = (vec![], vec![]);
    reconcile_hints(
        Some(TrafficDistribution::PreferSameNode),
        &mut create,
        &mut update,
        &mut unchanged,
    );
    let e = &create[0].endpoints[0];
    assert_eq!(e.for_zones(), ["zone-a".to_owned()]);
    assert_eq!(e.for_nodes(), ["node-1".to_owned()]);
    // PreferSameZone then drops the node hint of an otherwise unchanged slice.
    let mut unchanged = create;
    let (mut create, mut update) = (vec![], vec![]);
    reconcile_hints(
        Some(TrafficDistribution::PreferSameZone),
        &mut create,
        &mut update,
        &mut unchanged,
    );
    assert_eq!(update.len(), 1);
    assert!(update[0].endpoints[0].for_nodes().is_empty());
}

// staging/src/k8s.io/endpointslice/utils.go v1.34 hintsEnabled + reconciler.go validTrafficDistribution.
#[test]
fn routing_mode_precedence() {
    let opts = ControllerOptions::default();
    let mut svc = ServiceTopology::traffic_distribution("PreferClose");
    assert_eq!(
        svc.routing_mode(opts),
        RoutingMode::TrafficDistribution(TrafficDistribution::PreferClose)
    );
    svc.annotations
        .insert(ANNOTATION_TOPOLOGY_MODE.into(), "Auto".into());
    assert_eq!(
        svc.routing_mode(opts),
        RoutingMode::TopologyAuto,
        "annotation wins"
    );
    svc.annotations
        .insert(ANNOTATION_TOPOLOGY_AWARE_HINTS.into(), "Disabled".into());
    assert_eq!(
        svc.routing_mode(opts),
        RoutingMode::TrafficDistribution(TrafficDistribution::PreferClose),
        "the deprecated annotation takes precedence when present"
    );
    svc.annotations
        .insert(ANNOTATION_TOPOLOGY_AWARE_HINTS.into(), "auto".into());
    assert_eq!(svc.routing_mode(opts), RoutingMode::TopologyAuto);
    let same_node = ServiceTopology::traffic_distribution("PreferSameNode");
    assert_eq!(
        same_node.routing_mode(opts),
        RoutingMode::TrafficDistribution(TrafficDistribution::PreferSameNode)
    );
    let gate_off = ControllerOptions {
        prefer_same_traffic_distribution: false,
    };
    assert_eq!(same_node.routing_mode(gate_off), RoutingMode::None);
    assert_eq!(
        ServiceTopology::traffic_distribution("Nearby").routing_mode(opts),
        RoutingMode::None
    );
}

// reconciler.go v1.34: switching a Service from topology-mode Auto to trafficDistribution emits
// TopologyAwareHintsDisabled and rewrites the hints to same-zone ones.
#[test]
fn leaving_topology_mode_auto_emits_disabled_and_uses_same_zone_hints() {
    let nodes = [
        Node::worker("a1", "zone-a", 1000),
        Node::worker("c1", "zone-c", 1000),
    ];
    let slices = vec![EndpointSlice::new(
        "s",
        vec![
            ep("10.0.2.1", "zone-c", "c1", true, Some("zone-a")),
            ep("10.0.2.2", "zone-c", "c1", true, Some("zone-a")),
            ep("10.0.2.3", "zone-c", "c1", true, Some("zone-c")),
            ep("10.0.2.4", "zone-c", "c1", true, Some("zone-c")),
        ],
    )];
    let service = ServiceTopology::traffic_distribution("PreferClose");
    let outcome = compute_hints(HintsInput {
        nodes: &nodes,
        service_key: "ns/svc",
        service: &service,
        address_type: AddressType::IPv4,
        slices,
        previously_populated: true,
        options: ControllerOptions::default(),
    });
    assert_eq!(outcome.events.len(), 1);
    assert_eq!(
        outcome.events[0].message,
        "Topology Aware Hints has been disabled, addressType: IPv4"
    );
    assert!(outcome.hints_enabled);
    assert_eq!(outcome.hints_per_zone().get("zone-c"), Some(&4));
    assert_eq!(outcome.hints_per_zone().get("zone-a"), None);
}

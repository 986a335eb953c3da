//! Property: for any cluster of the shape proptest draws — 1 to 3 zones of 1 to 4 workers with
//! any allocatable CPU, some NotReady, maybe a control-plane node, any routing mode, a Deployment
//! spread evenly over the zones by a hard zone constraint with its endpoints where that puts
//! them — `harness plan` on the imported scenario predicts at load start what `harness hints`
//! predicts from the same objects (hints on or off, zone CPU ratios, hints per endpoint zone,
//! reachability per zone), and the import reports no placement difference.

mod support;

use proptest::prelude::*;
use serde_json::{Value, json};

#[derive(Debug, Clone)]
struct Cluster {
    /// Per zone: each worker's (CPU millicores, ready); the first is always ready.
    zones: Vec<Vec<(u32, bool)>>,
    control_plane: bool,
    routing: u8,
    pods_per_zone: usize,
}

fn cluster() -> impl Strategy<Value = Cluster> {
    let worker = (2u32..=64, prop::bool::weighted(0.8))
        .prop_map(|(quarters, ready)| (quarters * 250, ready));
    let zone = prop::collection::vec(worker, 1..=4).prop_map(|mut w| {
        w[0].1 = true;
        w
    });
    (
        prop::collection::vec(zone, 1..=3),
        any::<bool>(),
        0u8..4,
        1usize..=3,
    )
        .prop_map(|(zones, control_plane, routing, pods_per_zone)| Cluster {
            zones,
            control_plane,
            routing,
            pods_per_zone,
        })
}

fn cpu_text(millis: u32) -> String {
    if millis.is_multiple_of(1000) {
        (millis / 1000).to_string()
    } else {
        format!("{millis}m")
    }
}

fn node(name: &str, zone: &str, millis: u32, ready: bool, control_plane: bool) -> Value {
    let mut labels = json!({"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone});
    if control_plane {
        labels["node-role.kubernetes.io/control-plane"] = json!("");
    }
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
           "status": {"allocatable": {"cpu": cpu_text(millis)},
                      "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]}})
}

/// The objects as four files in `dir`: nodes, service, deployment, slices.
fn write_objects(c: &Cluster, dir: &std::path::Path) -> [String; 4] {
    let zone_name = |z: usize| format!("zone-{}", (b'a' + z as u8) as char);
    let mut nodes = Vec::new();
    let mut endpoints = Vec::new();
    for (z, workers) in c.zones.iter().enumerate() {
        let ready: Vec<String> = workers
            .iter()
            .enumerate()
            .filter(|(_, (_, r))| *r)
            .map(|(i, _)| format!("w-{z}-{i}"))
            .collect();
        for (i, (millis, r)) in workers.iter().enumerate() {
            nodes.push(node(
                &format!("w-{z}-{i}"),
                &zone_name(z),
                *millis,
                *r,
                false,
            ));
        }
        for p in 0..c.pods_per_zone {
            endpoints.push(
                json!({"addresses": [format!("10.{z}.{p}.9")], "conditions": {"ready": true},
                                  "nodeName": ready[p % ready.len()], "zone": zone_name(z)}),
            );
        }
    }
    if c.control_plane {
        nodes.push(node("cp-0", &zone_name(0), 2000, true, true));
    }
    let labels = json!({"app": "svc"});
    let mut service = json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "svc", "namespace": "default"},
        "spec": {"selector": labels, "ports": [{"port": 80}]}});
    match c.routing {
        1 => {
            service["metadata"]["annotations"] =
                json!({"service.kubernetes.io/topology-mode": "Auto"})
        }
        2 => service["spec"]["trafficDistribution"] = json!("PreferClose"),
        3 => service["spec"]["trafficDistribution"] = json!("PreferSameZone"),
        _ => {}
    }
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "svc", "namespace": "default"},
        "spec": {"replicas": c.pods_per_zone * c.zones.len(), "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels}, "spec": {
                    "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule"}],
                    "containers": [{"name": "svc", "image": "svc:1"}]}}}});
    let slices = json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "addressType": "IPv4",
        "metadata": {"name": "svc-1", "namespace": "default", "labels": {"kubernetes.io/service-name": "svc"}},
        "endpoints": endpoints});
    let files = [
        (
            "nodes.yaml",
            json!({"apiVersion": "v1", "kind": "List", "items": nodes}),
        ),
        ("service.yaml", service),
        ("deployment.yaml", deployment),
        ("slices.yaml", slices),
    ];
    files.map(|(name, value)| {
        let path = dir.join(name);
        // JSON is YAML: the files are read as kubectl's YAML would be.
        std::fs::write(&path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
        path.display().to_string()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn plan_on_the_import_predicts_what_hints_predicts(c in cluster()) {
        let dir = tempfile::tempdir().unwrap();
        let [nodes, service, deployment, slices] = write_objects(&c, dir.path());
        support::import::assert_agreement(
            &[&nodes, &service, &deployment, &slices],
            "svc",
            (&nodes, &slices, &service),
            dir.path(),
        );
    }
}

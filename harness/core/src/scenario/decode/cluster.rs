//! Checks and builds `cluster`: unique zone and node names, CPU quantities, control-plane
//! nodes in declared zones. When the section cannot be read as a whole, the zone and node
//! names it holds still serve the other sections' reference checks ([`names_only`]).

use serde_json::Value as Json;

use super::super::diagnostic::Problems;
use super::super::format::ClusterSpec;
use super::super::model::{Cluster, Node, NodeRole};
use super::super::path::FieldPath;
use super::{check_unique, cpu, listing};

pub(super) fn build(spec: &ClusterSpec, problems: &mut Problems<'_>) -> Cluster {
    let root = FieldPath::root().key("cluster");
    let zones_path = root.key("zones");
    let control_path = root.key("controlPlane");

    check_unique(
        problems,
        "zone",
        spec.zones
            .iter()
            .enumerate()
            .map(|(i, z)| (zones_path.index(i).key("name"), z.name.0.as_str())),
    );
    let zones: Vec<String> = spec.zones.iter().map(|z| z.name.0.clone()).collect();

    let mut nodes = Vec::new();
    let mut node_names = Vec::new();
    for (i, node) in spec.control_plane.iter().enumerate() {
        let path = control_path.index(i);
        node_names.push((path.key("name"), node.name.0.as_str()));
        if !zones.contains(&node.zone.0) {
            problems.at(
                &path.key("zone"),
                format!(
                    "control-plane node `{}`: zone `{}` is not a cluster zone; cluster zones are: {}",
                    node.name.0,
                    node.zone.0,
                    listing(&zones, "(none)")
                ),
            );
        }
        nodes.push(Node {
            name: node.name.0.clone(),
            zone: node.zone.0.clone(),
            allocatable_millicpu: cpu(problems, &path.key("allocatableCpu"), &node.allocatable_cpu)
                .unwrap_or(0),
            ready: node.ready,
            role: NodeRole::ControlPlane,
        });
    }
    for (z, zone) in spec.zones.iter().enumerate() {
        for (i, node) in zone.nodes.iter().enumerate() {
            let path = zones_path.index(z).key("nodes").index(i);
            node_names.push((path.key("name"), node.name.0.as_str()));
            nodes.push(Node {
                name: node.name.0.clone(),
                zone: zone.name.0.clone(),
                allocatable_millicpu: cpu(
                    problems,
                    &path.key("allocatableCpu"),
                    &node.allocatable_cpu,
                )
                .unwrap_or(0),
                ready: node.ready,
                role: NodeRole::Worker,
            });
        }
    }
    check_unique(problems, "node name", node_names);
    Cluster { zones, nodes }
}

/// The zones and nodes named in a `cluster` section that could not be read as a whole (say a
/// node's `ready: "yes"`), for checking references to them; `None` when the names themselves
/// cannot be read. CPU is left at zero: nothing checks it.
pub(super) fn names_only(section: &Json) -> Option<Cluster> {
    let name = |v: &Json, key: &str| v.get(key)?.as_str().map(str::to_owned);
    let mut zones = Vec::new();
    let mut nodes = Vec::new();
    for node in section
        .get("controlPlane")
        .map_or(Some(&Vec::new()), Json::as_array)?
    {
        nodes.push(Node {
            name: name(node, "name")?,
            zone: name(node, "zone")?,
            allocatable_millicpu: 0,
            ready: true,
            role: NodeRole::ControlPlane,
        });
    }
    for zone in section.get("zones")?.as_array()? {
        let zone_name = name(zone, "name")?;
        for node in zone
            .get("nodes")
            .map_or(Some(&Vec::new()), Json::as_array)?
        {
            nodes.push(Node {
                name: name(node, "name")?,
                zone: zone_name.clone(),
                allocatable_millicpu: 0,
                ready: true,
                role: NodeRole::Worker,
            });
        }
        zones.push(zone_name);
    }
    Some(Cluster { zones, nodes })
}

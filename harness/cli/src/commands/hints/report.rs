//! `harness hints --nodes ... --endpointslices ... [--service ...]`: predicts what the
//! EndpointSlice controller does on its next reconcile of the Service's slices (no pod change),
//! then what kube-proxy in each zone and on each node does with the result.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::bail;
use kube_model::{
    ControllerOptions, Event, HintsInput, HintsOutcome, ProxyNode, ProxyOptions, RoutingMode,
    ServicePolicy, ServiceTopology, compute_hints, usable_endpoints,
};
use kube_model::{Endpoint, Node};
use serde::Serialize;

use kube_model::openapi::{self, ConvertError, OwnedSlice, ServiceInfo};

use super::load::{Located, Source};

/// One endpoint after the reconcile.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EndpointRow {
    pub address: String,
    pub zone: Option<String>,
    pub node: Option<String>,
    /// The `ready` condition as written (`null` when unset).
    pub ready: Option<bool>,
    pub slice: String,
    pub for_zones: Vec<String>,
    pub for_nodes: Vec<String>,
}

impl EndpointRow {
    /// The row of `e`, in slice `slice`.
    pub fn new(slice: &str, e: &Endpoint) -> Self {
        Self {
            address: e.address.clone(),
            zone: e.zone.clone(),
            node: e.node_name.clone(),
            ready: e.conditions.ready,
            slice: slice.to_owned(),
            for_zones: e.for_zones().to_vec(),
            for_nodes: e.for_nodes().to_vec(),
        }
    }
}

/// The prediction, as printed with `--output json`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub service: String,
    pub mode: String,
    pub zone_cpu_ratios: Option<BTreeMap<String, f64>>,
    pub hints_enabled: bool,
    pub events: Vec<Event>,
    pub endpoints: Vec<EndpointRow>,
    /// Zone -> addresses kube-proxy uses for a client on a node of that zone that hosts no
    /// endpoint of the Service.
    pub reachable_from: BTreeMap<String, Vec<String>>,
    /// Node -> addresses kube-proxy on that node uses.
    pub reachable_from_nodes: BTreeMap<String, Vec<String>>,
    /// Why there are no zone CPU ratios, naming the nodes (empty when there are ratios).
    pub ratios_missing_because: Vec<String>,
    pub assumptions: Vec<String>,
}

/// The decoded input files: nodes, the slices' file name and slices, and the Service.
pub(super) type Inputs = (Vec<Node>, String, Vec<OwnedSlice>, Option<ServiceInfo>);

/// Reads and decodes the three files. Every error is about the input.
pub(super) fn read_inputs(
    nodes: &Path,
    slices: &Path,
    service: Option<&Path>,
) -> anyhow::Result<Inputs> {
    let src = Source::read(nodes)?;
    let nodes: Vec<Node> =
        objects_for(&src, "--nodes", "Node", "--endpointslices", "EndpointSlice")?
            .iter()
            .map(|n| openapi::node(&n.value).map_err(|e| in_file(&src, n, e)))
            .collect::<anyhow::Result<_>>()?;
    let src = Source::read(slices)?;
    let slices: Vec<OwnedSlice> =
        objects_for(&src, "--endpointslices", "EndpointSlice", "--nodes", "Node")?
            .iter()
            .enumerate()
            .map(|(i, s)| openapi::slice(&s.value, i).map_err(|e| in_file(&src, s, e)))
            .collect::<anyhow::Result<_>>()?;
    let service = match service {
        Some(path) => {
            let svc_src = Source::read(path)?;
            let objects = svc_src.objects()?;
            let [svc] = objects.as_slice() else {
                bail!(
                    "{}: expected exactly one Service, found {}",
                    svc_src.name,
                    objects.len()
                );
            };
            Some(openapi::service(&svc.value).map_err(|e| in_file(&svc_src, svc, e))?)
        }
        None => None,
    };
    Ok((nodes, src.name, slices, service))
}

/// The objects of `src`, given with `flag` (which takes `kind`); when the file holds the other
/// flag's kind instead, the error asks whether the two were swapped.
fn objects_for<T>(
    src: &Source,
    flag: &str,
    kind: &str,
    other_flag: &str,
    other_kind: &str,
) -> anyhow::Result<Vec<Located<T>>>
where
    T: serde::de::DeserializeOwned + k8s_openapi::Resource,
{
    src.objects().map_err(|e| {
        let kinds = src.kinds();
        let holds_other = kinds
            .iter()
            .any(|k| k == other_kind || *k == format!("{other_kind}List"));
        if holds_other && !kinds.iter().any(|k| k == kind) {
            e.context(format!(
                "{} holds {other_kind} objects, but {flag} takes {kind}s: did you swap {flag} and {other_flag}?",
                src.name
            ))
        } else {
            e
        }
    })
}

/// Reads the three files and builds the report. Every error is about the input.
pub fn from_files(nodes: &Path, slices: &Path, service: Option<&Path>) -> anyhow::Result<Report> {
    let (nodes, slices_name, slices, service) = read_inputs(nodes, slices, service)?;
    build(&nodes, &slices_name, slices, service)
}

/// A conversion error with where it is in the file: the value's line and column when the
/// error is about a written value, else the line the object's document starts on.
fn in_file<T>(src: &Source, object: &Located<T>, e: ConvertError) -> anyhow::Error {
    let at = match &e {
        ConvertError::NodeCpu { value, .. } | ConvertError::NegativeCpu { value, .. } => {
            src.locate(object.line, "cpu", value)
        }
        _ => format!("{}:{}", src.name, object.line),
    };
    anyhow::Error::new(e).context(at)
}

/// Predicts the reconcile for already-decoded objects.
pub fn build(
    nodes: &[Node],
    slices_name: &str,
    slices: Vec<OwnedSlice>,
    service: Option<ServiceInfo>,
) -> anyhow::Result<Report> {
    let (key, slices) = select_slices(slices_name, slices, service.as_ref())?;
    let topology = service
        .as_ref()
        .map_or_else(ServiceTopology::topology_auto, |s| s.topology.clone());
    let policy = service
        .as_ref()
        .map_or(ServicePolicy::default(), |s| s.policy);
    let options = ControllerOptions::default();
    let mode = topology.routing_mode(options);
    let mut assumptions = vec![
        "the next reconcile sees no pod change: every existing slice is reconciled as unchanged".to_owned(),
        "Kubernetes v1.34 defaults: PreferSameTrafficDistribution gate on in the controller and kube-proxy".to_owned(),
    ];
    if service.is_none() {
        assumptions
            .push("no Service given: service.kubernetes.io/topology-mode: Auto assumed".to_owned());
    }
    let mut previously = mode == RoutingMode::TopologyAuto
        && slices
            .iter()
            .flat_map(|s| &s.slice.endpoints)
            .any(|e| e.controller_ready() && !e.for_zones().is_empty());
    if previously {
        assumptions.push(
            "ready endpoints already carry zone hints, so the controller is taken to have hints for this Service \
             (no TopologyAwareHintsEnabled event is expected)"
                .to_owned(),
        );
    }

    let mut outcomes: Vec<HintsOutcome> = Vec::new();
    let address_types: BTreeSet<_> = slices.iter().map(|s| s.address_type).collect();
    for address_type in address_types {
        let group = slices
            .iter()
            .filter(|s| s.address_type == address_type)
            .map(|s| s.slice.clone())
            .collect();
        let outcome = compute_hints(HintsInput {
            nodes,
            service_key: &key,
            service: &topology,
            address_type,
            slices: group,
            previously_populated: previously,
            options,
        });
        // The controller's "has hints" mark is per Service, shared by its address types.
        previously = mode == RoutingMode::TopologyAuto && outcome.hints_enabled;
        outcomes.push(outcome);
    }

    let endpoints: Vec<Endpoint> = outcomes
        .iter()
        .flat_map(|o| o.endpoints().cloned())
        .collect();
    let rows = outcomes
        .iter()
        .flat_map(|o| o.slices.iter())
        .flat_map(|s| s.endpoints.iter().map(|e| EndpointRow::new(&s.name, e)))
        .collect();
    let (reachable_from, reachable_from_nodes) = reachability(nodes, &endpoints, policy);
    let zone_cpu_ratios = outcomes
        .first()
        .and_then(|o| o.zone_cpu_ratios.clone())
        .or_else(|| ratios_without_slices(nodes));
    let ratios_missing_because = if zone_cpu_ratios.is_none() {
        missing_node_information(nodes)
    } else {
        Vec::new()
    };
    Ok(Report {
        service: key,
        mode: mode_name(mode),
        zone_cpu_ratios,
        hints_enabled: !outcomes.is_empty() && outcomes.iter().all(|o| o.hints_enabled),
        events: outcomes.into_iter().flat_map(|o| o.events).collect(),
        endpoints: rows,
        reachable_from,
        reachable_from_nodes,
        ratios_missing_because,
        assumptions,
    })
}

/// What keeps the EndpointSlice controller from computing zone CPU ratios, node by node: a
/// ready worker without a zone label or allocatable CPU (`topologycache.go` gives up on the
/// whole cluster then), or fewer than two zones.
pub(super) fn missing_node_information(nodes: &[Node]) -> Vec<String> {
    let mut why = Vec::new();
    let counted = nodes.iter().filter(|n| n.ready && !n.control_plane);
    for n in counted.clone() {
        if n.zone.as_deref().is_none_or(str::is_empty) {
            why.push(format!(
                "node {} has no topology.kubernetes.io/zone label",
                n.name
            ));
        }
        if n.allocatable_cpu_millis.is_none() {
            why.push(format!("node {} has no allocatable CPU", n.name));
        }
    }
    if why.is_empty() {
        let zones: BTreeSet<&str> = counted.filter_map(|n| n.zone.as_deref()).collect();
        if zones.len() < 2 {
            why.push(format!(
                "the ready worker nodes are in {} zone(s); ratios need two",
                zones.len()
            ));
        }
    }
    why
}

fn ratios_without_slices(nodes: &[Node]) -> Option<BTreeMap<String, f64>> {
    let mut cache = kube_model::TopologyCache::new();
    cache.set_nodes(nodes);
    cache.cpu_ratios().cloned()
}

fn mode_name(mode: RoutingMode) -> String {
    match mode {
        RoutingMode::None => "none".to_owned(),
        RoutingMode::TopologyAuto => "topology-mode: Auto".to_owned(),
        RoutingMode::TrafficDistribution(d) => format!("trafficDistribution: {d}"),
    }
}

/// Keeps the slices of the Service (by `kubernetes.io/service-name` and namespace) and returns
/// the Service key `namespace/name`.
pub(super) fn select_slices(
    file: &str,
    slices: Vec<OwnedSlice>,
    service: Option<&ServiceInfo>,
) -> anyhow::Result<(String, Vec<OwnedSlice>)> {
    let owners: BTreeSet<(String, String)> = slices
        .iter()
        .map(|s| {
            (
                s.namespace.clone().unwrap_or_else(|| "default".into()),
                s.service.clone().unwrap_or_default(),
            )
        })
        .collect();
    let describe = || {
        owners
            .iter()
            .map(|(ns, n)| format!("{ns}/{n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (key, kept) = match service {
        Some(svc) => {
            let kept: Vec<OwnedSlice> = slices
                .into_iter()
                .filter(|s| s.service.as_deref().is_none_or(|n| n == svc.name))
                .filter(|s| s.namespace.as_deref().is_none_or(|ns| ns == svc.namespace))
                .collect();
            if kept.is_empty() {
                bail!(
                    "{file}: no EndpointSlice belongs to Service {}/{} (found slices of: {})",
                    svc.namespace,
                    svc.name,
                    describe()
                );
            }
            (format!("{}/{}", svc.namespace, svc.name), kept)
        }
        None => {
            if owners.len() > 1 {
                bail!(
                    "{file}: the slices belong to several Services ({}); pass --service to pick one",
                    describe()
                );
            }
            let Some((ns, name)) = owners.into_iter().next() else {
                bail!("{file}: no EndpointSlice found");
            };
            (format!("{ns}/{name}"), slices)
        }
    };
    let mut names = BTreeSet::new();
    if let Some(dup) = kept.iter().find(|s| !names.insert(s.slice.name.clone())) {
        bail!("{file}: EndpointSlice {} appears twice", dup.slice.name);
    }
    Ok((key, kept))
}

type Reach = BTreeMap<String, Vec<String>>;

/// The zones clients can be in: the nodes' zones, else (no node has one) the endpoints'.
pub(super) fn client_zones(nodes: &[Node], endpoints: &[Endpoint]) -> BTreeSet<String> {
    let zones: BTreeSet<String> = nodes
        .iter()
        .filter_map(|n| n.zone.clone())
        .filter(|z| !z.is_empty())
        .collect();
    if zones.is_empty() {
        endpoints.iter().filter_map(|e| e.zone.clone()).collect()
    } else {
        zones
    }
}

fn reachability(nodes: &[Node], endpoints: &[Endpoint], policy: ServicePolicy) -> (Reach, Reach) {
    let options = ProxyOptions::default();
    let addresses = |list: Vec<&Endpoint>| {
        list.into_iter()
            .map(|e| e.address.clone())
            .collect::<Vec<_>>()
    };
    let by_zone = client_zones(nodes, endpoints)
        .iter()
        .map(|zone| {
            let client = ProxyNode {
                name: "",
                zone: Some(zone),
            };
            (
                zone.clone(),
                addresses(usable_endpoints(endpoints, client, policy, options)),
            )
        })
        .collect();
    let by_node = nodes
        .iter()
        .map(|n| {
            let client = ProxyNode {
                name: &n.name,
                zone: n.zone.as_deref(),
            };
            (
                n.name.clone(),
                addresses(usable_endpoints(endpoints, client, policy, options)),
            )
        })
        .collect();
    (by_zone, by_node)
}

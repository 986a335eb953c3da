//! `harness hints --nodes ... --endpointslices ... [--service ...]`: predicts what the
//! EndpointSlice controller does on its next reconcile of the Service's slices (no pod change),
//! then what kube-proxy in each zone and on each node does with the result.
//!
//! A Service scaled to zero is a real state, not an error: it has no EndpointSlice yet, or
//! only the controller's placeholder slice (`endpoints: null`), or slices whose endpoints are
//! none of them ready. The controller still reconciles it: `reconcileByAddressType` in
//! staging/src/k8s.io/endpointslice/reconciler.go (v1.34, read at @020438690733) adds the
//! placeholder slice for an address type with no slices, then calls `AddHints`, whose
//! `getAllocations(0)` (topologycache.go @40d99474ca4d) refuses hints with "Insufficient number
//! of endpoints (0 endpoints, N zones)" once the nodes give ratios. The report then carries the
//! zone CPU ratios, that event and `noEndpoints` saying why.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::bail;
use kube_model::{AddressType, Endpoint, Node};
use kube_model::{
    ControllerOptions, Event, HintsInput, HintsOutcome, ProxyNode, ProxyOptions, RoutingMode,
    ServicePolicy, compute_hints, usable_endpoints,
};
use serde::Serialize;

use kube_model::openapi::{self, ConvertError, OwnedSlice, ServiceInfo};

use crate::commands::kube_yaml::{Located, Source};

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
    /// Ready endpoints as kube-proxy counts them (`ready` true or unset) after the reconcile.
    pub ready_endpoints: usize,
    /// Set when no endpoint is ready: why (no EndpointSlice, slices without endpoints, or
    /// endpoints none of which is ready). kube-proxy then has nothing to send to.
    pub no_endpoints: Option<String>,
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
    let (key, slices, note) = select_slices(slices_name, slices, service.as_ref())?;
    let (topology, policy) = openapi::service_routing(service.as_ref());
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
    assumptions.extend(note);
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
    let mut address_types: BTreeSet<_> = slices.iter().map(|s| s.address_type).collect();
    if address_types.is_empty() {
        // No slice at all: the controller reconciles the Service's address types with no
        // slices (it creates the placeholder); IPv4 is the single-stack default.
        address_types.insert(AddressType::IPv4);
        assumptions.push(
            "the Service has no EndpointSlice: reconciled as a single-stack IPv4 Service with no endpoints \
             (the controller creates an empty placeholder slice)"
                .to_owned(),
        );
    }
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
    let ready_endpoints = endpoints
        .iter()
        .filter(|e| e.conditions.ready != Some(false))
        .count();
    let no_endpoints = (ready_endpoints == 0).then(|| no_endpoints_reason(&slices));
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
        ready_endpoints,
        no_endpoints,
        assumptions,
    })
}

/// Why the Service has no ready endpoint, in the words of its slices.
fn no_endpoints_reason(slices: &[OwnedSlice]) -> String {
    let total: usize = slices.iter().map(|s| s.slice.endpoints.len()).sum();
    if slices.is_empty() {
        "no endpoints: the Service has no EndpointSlice (scaled to zero, or no pod matches its selector)"
            .to_owned()
    } else if total == 0 {
        format!(
            "no endpoints: its {} EndpointSlice(s) hold no endpoint (scaled to zero, or no pod matches its selector)",
            slices.len()
        )
    } else {
        format!("no endpoints: none of its {total} endpoint(s) is ready")
    }
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
/// the Service key `namespace/name`, and a note when the file holds slices of other Services
/// only (the given Service then has none: worth saying, in case the wrong file was given).
pub(super) fn select_slices(
    file: &str,
    slices: Vec<OwnedSlice>,
    service: Option<&ServiceInfo>,
) -> anyhow::Result<(String, Vec<OwnedSlice>, Option<String>)> {
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
    let mut note = None;
    let (key, kept) = match service {
        Some(svc) => {
            let kept: Vec<OwnedSlice> = slices
                .into_iter()
                .filter(|s| s.service.as_deref().is_none_or(|n| n == svc.name))
                .filter(|s| s.namespace.as_deref().is_none_or(|ns| ns == svc.namespace))
                .collect();
            // None kept is a Service without slices (scaled to zero): reported, not refused.
            if kept.is_empty() && !owners.is_empty() {
                note = Some(format!(
                    "{file} holds no EndpointSlice of Service {}/{}, only slices of: {}",
                    svc.namespace,
                    svc.name,
                    describe()
                ));
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
                bail!(
                    "{file}: no EndpointSlice found, so the Service is unknown; pass --service SVC.yaml \
                     to see what the controller does for a Service without endpoints"
                );
            };
            (format!("{ns}/{name}"), slices)
        }
    };
    let mut names = BTreeSet::new();
    if let Some(dup) = kept.iter().find(|s| !names.insert(s.slice.name.clone())) {
        bail!("{file}: EndpointSlice {} appears twice", dup.slice.name);
    }
    Ok((key, kept, note))
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

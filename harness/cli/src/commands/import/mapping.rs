//! The objects of one Service turned into the parts of a scenario: the zones and nodes (zone
//! label, allocatable CPU as written, Ready, the control-plane role), the `service` fields from
//! the Deployment, Service and HPA, and the load from `--rate` — each part knowing whether it
//! was read, approximated or is a default, with the notes that say so.

use std::collections::BTreeMap;

use anyhow::bail;
use kube_model::openapi;
use kube_model::{ControllerOptions, RoutingMode};

use super::autoscaler::autoscaler;
use super::placement::{Worker, placement};
use super::pod_spec;
use super::select::{Selected, template_labels};
use super::text::{Field, Note, NoteKind, dns_label};
use harness_core::text::natural_key;

/// A node as written under `cluster`.
#[derive(Debug, Clone)]
pub struct NodeEntry {
    pub name: String,
    pub zone: String,
    /// `status.allocatable.cpu` as the object writes it.
    pub cpu: String,
    pub ready: bool,
}

/// A zone with its worker nodes.
#[derive(Debug, Clone)]
pub struct ZoneEntry {
    pub name: String,
    pub nodes: Vec<NodeEntry>,
}

/// One generator: a zone and its rate (`None`: to fill in).
#[derive(Debug, Clone)]
pub struct GeneratorEntry {
    pub zone: String,
    pub rate: Option<f64>,
}

/// The scenario's parts.
#[derive(Debug)]
pub struct Imported {
    pub name: String,
    pub description: String,
    pub control_plane: Vec<NodeEntry>,
    pub zones: Vec<ZoneEntry>,
    /// `service` fields in order (`name` first).
    pub service: Vec<Field>,
    /// Lines of comment about objects nothing reproduces (PodDisruptionBudgets).
    pub service_comments: Vec<String>,
    pub generators: Vec<GeneratorEntry>,
    pub notes: Vec<Note>,
    /// Ready endpoints per zone in the Service's EndpointSlices (empty without slices).
    pub observed_endpoints: BTreeMap<String, usize>,
}

/// Maps the selected objects; `rates` is `--rate` (zone → requests per second).
pub fn import(
    selected: &Selected,
    rates: &BTreeMap<String, f64>,
    origin: &str,
) -> anyhow::Result<Imported> {
    let mut notes = Vec::new();
    let (zones, control_plane) = nodes(selected, &mut notes)?;
    let service_name = selected.service.metadata.name.clone().unwrap_or_default();
    let deployment = &selected.deployment;
    let dep_name = deployment.metadata.name.clone().unwrap_or_default();
    let ns = &selected.namespace;
    let Some(pod) = deployment
        .spec
        .template
        .spec
        .clone()
        .filter(|p| !p.containers.is_empty())
    else {
        bail!("Deployment {ns}/{dep_name} has no containers in its pod template");
    };
    let mut service = vec![Field::read("name", service_name.clone())];
    let replicas = deployment.spec.replicas.unwrap_or(1);
    if replicas < 1 {
        notes.push(Note {
            kind: NoteKind::Approximation,
            field: "service.replicas".into(),
            text: format!("Deployment {dep_name} is scaled to {replicas}; a scenario starts with at least 1 pod"),
        });
    }
    service.push(
        Field::read("replicas", replicas.max(1).to_string())
            .with_comment(format!("Deployment {dep_name}")),
    );
    let workers: Vec<Worker> = selected
        .nodes
        .iter()
        .filter_map(|n| {
            let name = n.metadata.name.clone()?;
            let zone = zones
                .iter()
                .find(|z| z.nodes.iter().any(|e| e.name == name))?;
            Some(Worker {
                object: n,
                name,
                zone: zone.name.clone(),
            })
        })
        .collect();
    let pod_labels = template_labels(deployment);
    if let Some(field) = placement(&workers, &pod, &pod_labels, &mut notes)? {
        service.push(field);
    }
    if let Some(field) = routing(selected, &mut notes) {
        service.push(field);
    }
    let container = pod_spec::serving_container(&pod, &selected.service);
    let hpa = selected
        .autoscaler
        .as_ref()
        .map(|h| autoscaler(h, &mut notes));
    match pod_spec::recognised_sidecar(&pod) {
        Some(field) => service.push(field),
        None if hpa.as_ref().is_some_and(|h| h.needs_sidecar) => {
            notes.push(fill_in("service.sidecar", "the destination-side autoscaler metric needs the sidecar; its limits are not in the pod: write the concurrency and queue your pods allow"));
            service.push(
                Field::read(
                    "sidecar",
                    "{ maxConcurrency: 16, queueSize: 0, queueTimeout: 0s }",
                )
                .with_comment("FILL IN: your pods' concurrency limit and queue"),
            );
        }
        None => {
            notes.push(default_note("service.sidecar", "no concurrency limiter was recognised in the pod: none is written (uncomment it to limit each pod's requests in flight)"));
            service.push(
                Field::read(
                    "sidecar",
                    "{ maxConcurrency: 16, queueSize: 32, queueTimeout: 250ms }",
                )
                .commented_out()
                .with_comment("not in the objects: a concurrency limiter in front of each pod"),
            );
        }
    }
    notes.push(fill_in("service.serviceTime", "how long a request takes is not in the objects: write your service's typical latency (fixed, exponential or CPU time)"));
    service.push(
        Field::read("serviceTime", "{ fixed: 20ms }")
            .with_comment("FILL IN: your service's time per request"),
    );
    service.push(pod_spec::readiness_probe(container, &mut notes));
    notes.push(default_note("service.startup", "pod start-up (scheduling, sandbox, image already on the node) is not in the objects: the 2 s default applies; add your image pull time if nodes pull"));
    service.push(
        Field::read("startup", "{ latency: 2s }")
            .commented_out()
            .with_comment("not in the objects: creation to container start"),
    );
    service.push(pod_spec::rollout(deployment, &mut notes));
    service.push(pod_spec::termination(&pod, container, &mut notes));
    notes.push(default_note("service.app.drainDelay", "how long the app keeps serving after SIGTERM is in its code, not the objects: 0 s (stops at once) applies"));
    service.push(
        Field::read("app", "{ drainDelay: 0s }")
            .commented_out()
            .with_comment("not in the objects: serving on after SIGTERM"),
    );
    if let Some(field) = pod_spec::not_ready_toleration(&pod, &mut notes) {
        service.push(field);
    }
    if let Some(h) = hpa {
        service.push(h.field);
    }
    let service_comments = disruption_budgets(selected, &mut notes);
    notes.push(default_note(
        "cluster",
        "allocatable CPU is written as the nodes report it; on the kind target one factor scales every node to fit this host, keeping each zone's share (`harness plan FILE --target kind` shows it); on the local target it only drives placement and hints",
    ));
    let generators = generators(&zones, rates, &mut notes)?;
    let observed_endpoints = observed_endpoints(selected);
    Ok(Imported {
        name: scenario_name(&service_name),
        description: format!("Service {ns}/{service_name} imported from {origin}"),
        control_plane,
        zones,
        service,
        service_comments,
        generators,
        notes,
        observed_endpoints,
    })
}

fn fill_in(field: &str, text: &str) -> Note {
    Note {
        kind: NoteKind::FillIn,
        field: field.into(),
        text: text.into(),
    }
}

fn default_note(field: &str, text: &str) -> Note {
    Note {
        kind: NoteKind::Default,
        field: field.into(),
        text: text.into(),
    }
}

/// `<service>-imported`, the scenario's `metadata.name`.
fn scenario_name(service: &str) -> String {
    dns_label(&format!("{service}-imported"))
}

type Nodes = (Vec<ZoneEntry>, Vec<NodeEntry>);

fn nodes(selected: &Selected, notes: &mut Vec<Note>) -> anyhow::Result<Nodes> {
    let mut zones: BTreeMap<String, Vec<NodeEntry>> = BTreeMap::new();
    let mut control_plane = Vec::new();
    for object in &selected.nodes {
        let node = openapi::node(object)?;
        let cpu = object
            .status
            .as_ref()
            .and_then(|s| s.allocatable.as_ref())
            .and_then(|a| a.get("cpu"))
            .map(|q| q.0.clone());
        let (Some(zone), Some(cpu)) = (node.zone.clone().filter(|z| !z.is_empty()), cpu) else {
            notes.push(Note {
                kind: NoteKind::NotReproduced,
                field: "cluster".into(),
                text: format!(
                    "node {} has no topology.kubernetes.io/zone label or no allocatable CPU and is left out (while a ready worker lacks them, the EndpointSlice controller gives no topology hints at all)",
                    node.name
                ),
            });
            continue;
        };
        let entry = NodeEntry {
            name: node.name.clone(),
            zone: zone.clone(),
            cpu,
            ready: node.ready,
        };
        if node.control_plane {
            zones.entry(zone).or_default();
            control_plane.push(entry);
        } else {
            zones.entry(zone).or_default().push(entry);
        }
    }
    if zones.values().all(Vec::is_empty) {
        bail!(
            "no worker node has a zone label and allocatable CPU: the scenario has nowhere to run pods"
        );
    }
    let mut zones: Vec<ZoneEntry> = zones
        .into_iter()
        .map(|(name, mut nodes)| {
            nodes.sort_by(|a, b| natural_cmp(&a.name, &b.name));
            ZoneEntry { name, nodes }
        })
        .collect();
    zones.sort_by(|a, b| natural_cmp(&a.name, &b.name));
    control_plane.sort_by(|a, b| natural_cmp(&a.name, &b.name));
    Ok((zones, control_plane))
}

fn routing(selected: &Selected, notes: &mut Vec<Note>) -> Option<Field> {
    let info = openapi::service(&selected.service).ok()?;
    if info.policy.internal_local {
        notes.push(Note {
            kind: NoteKind::NotReproduced,
            field: "service.routing".into(),
            text: "internalTrafficPolicy: Local (only the caller's node's endpoints) is not modelled; the scenario routes as Cluster".into(),
        });
    }
    match info.topology.routing_mode(ControllerOptions::default()) {
        RoutingMode::None => None,
        RoutingMode::TopologyAuto => Some(
            Field::read("routing", "{ topologyMode: Auto }")
                .with_comment("annotation service.kubernetes.io/topology-mode"),
        ),
        RoutingMode::TrafficDistribution(d) => Some(
            Field::read("routing", format!("{{ trafficDistribution: {d} }}"))
                .with_comment("spec.trafficDistribution"),
        ),
    }
}

fn disruption_budgets(selected: &Selected, notes: &mut Vec<Note>) -> Vec<String> {
    selected
        .disruption_budgets
        .iter()
        .map(|pdb| {
            let name = pdb.metadata.name.clone().unwrap_or_default();
            let spec = pdb.spec.clone().unwrap_or_default();
            let bound = match (spec.min_available, spec.max_unavailable) {
                (Some(v), _) => format!("minAvailable {}", int_or_string(&v)),
                (_, Some(v)) => format!("maxUnavailable {}", int_or_string(&v)),
                _ => "no bound".to_owned(),
            };
            let text = format!(
                "PodDisruptionBudget {name} ({bound}) only limits evictions through the Eviction API (kubectl drain, the cluster autoscaler); the scenario's actions (pod kills, node loss, taint evictions, rollouts) do not go through it in Kubernetes either, so it changes nothing here"
            );
            notes.push(Note {
                kind: NoteKind::NotReproduced,
                field: format!("PodDisruptionBudget {name}"),
                text: text.clone(),
            });
            format!("PodDisruptionBudget {name} ({bound}): not reproduced, see `harness import` notes")
        })
        .collect()
}

fn int_or_string(v: &k8s_openapi::apimachinery::pkg::util::intstr::IntOrString) -> String {
    match v {
        k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(n) => n.to_string(),
        k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(s) => s.clone(),
    }
}

fn generators(
    zones: &[ZoneEntry],
    rates: &BTreeMap<String, f64>,
    notes: &mut Vec<Note>,
) -> anyhow::Result<Vec<GeneratorEntry>> {
    for zone in rates.keys() {
        if !zones.iter().any(|z| &z.name == zone) {
            bail!(
                "--rate {zone}=…: {zone} is not a zone of the nodes ({})",
                zones
                    .iter()
                    .map(|z| z.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    if !rates.is_empty() {
        return Ok(rates
            .iter()
            .map(|(zone, rate)| GeneratorEntry {
                zone: zone.clone(),
                rate: Some(*rate),
            })
            .collect());
    }
    notes.push(fill_in("load.generators", "the load per zone is not in the objects: write each zone's requests per second (or pass --rate ZONE=RPS)"));
    Ok(zones
        .iter()
        .filter(|z| !z.nodes.is_empty())
        .map(|z| GeneratorEntry {
            zone: z.name.clone(),
            rate: None,
        })
        .collect())
}

fn observed_endpoints(selected: &Selected) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for (i, slice) in selected.endpoint_slices.iter().enumerate() {
        let Ok(owned) = openapi::slice(slice, i) else {
            continue;
        };
        for e in &owned.slice.endpoints {
            if e.conditions.ready != Some(false) {
                *out.entry(e.zone.clone().unwrap_or_default()).or_default() += 1;
            }
        }
    }
    out
}

fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    natural_key(a).cmp(&natural_key(b))
}

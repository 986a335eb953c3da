//! Checks and builds `timeline`: times in order and within the load, unique names, exactly one
//! action per entry, and references that hold at that point of the timeline (nodes added and
//! removed by earlier entries, the pods that exist after earlier kills and scales — see
//! `pod_names` — the termination settings after earlier rollouts); no `scale` while an
//! autoscaler owns the replica count. An entry that could not be read at all still gives its
//! name and time to the windows; after it, the checks that depend on what it changed stop.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value as Json;

use super::super::diagnostic::Problems;
use super::super::format::TimelineEntrySpec;
use super::super::model::{
    Action, Cluster, IngressReplicas, NodeRole, PodPick, Service, TimelineEvent,
};
use super::super::path::FieldPath;
use super::super::units::{self, format_duration, parse_duration};
use super::pod_names::PodNames;
use super::{check_unique, cpu, duration, listing, rollout_action};

/// The built timeline, plus every named entry's time (also for entries with other problems,
/// so that windows referring to them are still checked).
pub(super) struct Timeline {
    pub events: Vec<TimelineEvent>,
    pub named: BTreeMap<String, Duration>,
}

/// One entry as the decoder left it: read, or only its raw value (its problems are reported).
pub(super) enum Entry {
    Read(Box<TimelineEntrySpec>),
    Unreadable(Json),
}

const ACTIONS: &str = "setNodeReady, addNode, removeNode, relabelNode, setAllocatableCpu, scale, killPod, rollout, reloadIngress, restartIngress, zoneNetwork";

/// The cluster as the timeline changes it.
struct State<'c> {
    cluster: &'c Cluster,
    /// Node name to zone.
    nodes: BTreeMap<String, String>,
    /// False after an unreadable entry: it may have added or removed nodes.
    nodes_known: bool,
}

/// What the checks know at a point of the timeline.
struct Context<'c> {
    state: Option<State<'c>>,
    /// The pods that exist (unknown when `service` could not be read).
    pods: Option<PodNames>,
    service: Option<&'c Service>,
    /// `Some(None)`: no `ingress` section; `Some(Some(n))`: `n` replicas; `None`: unknown.
    ingress_replicas: Option<Option<u32>>,
    /// The network faults active between zones.
    zone_faults: super::zone_network::ActiveFaults,
}

/// `service` is `None` when the service section could not be read.
pub(super) fn build(
    entries: &[Entry],
    cluster: Option<&Cluster>,
    service: Option<&Service>,
    ingress_replicas: Option<Option<u32>>,
    load_duration: Option<Duration>,
    problems: &mut Problems<'_>,
) -> Timeline {
    let root = FieldPath::root().key("timeline");
    let autoscaled = service.is_some_and(|s| s.autoscaler.is_some());
    let mut revision = service.map(|s| s.termination.clone());
    let mut context = Context {
        state: cluster.map(|cluster| State {
            cluster,
            nodes: cluster
                .nodes
                .iter()
                .map(|n| (n.name.clone(), n.zone.clone()))
                .collect(),
            nodes_known: true,
        }),
        pods: service.map(|s| {
            let mut names = PodNames::new(s.replicas);
            if s.autoscaler.is_some() {
                names.lose_track("`service.autoscaler` adds and deletes pods");
            }
            names
        }),
        service,
        ingress_replicas,
        zone_faults: BTreeMap::new(),
    };
    check_unique(
        problems,
        "timeline entry name",
        entries
            .iter()
            .enumerate()
            .filter_map(|(i, e)| entry_name(e).map(|n| (root.index(i).key("name"), n))),
    );
    let mut timeline = Timeline {
        events: Vec::new(),
        named: BTreeMap::new(),
    };
    let mut previous: Option<(Duration, FieldPath)> = None;
    for (i, item) in entries.iter().enumerate() {
        let path = root.index(i);
        let entry = match item {
            Entry::Read(entry) => entry,
            Entry::Unreadable(raw) => {
                unreadable(raw, &path, &mut timeline, &mut previous, &mut context);
                continue;
            }
        };
        let at = duration(problems, &path.key("at"), &entry.at);
        if let Some(at) = at {
            check_time(at, &path, load_duration, previous.as_ref(), problems);
            previous = Some((at, path.key("at")));
        }
        let name = entry.name.as_ref().map(|n| n.0.clone());
        if let Some(name) = &name {
            if name == "start" || name == "end" {
                problems.at(
                    &path.key("name"),
                    format!("`{name}` is reserved for window bounds; choose another name"),
                );
            } else if let Some(at) = at {
                timeline.named.entry(name.clone()).or_insert(at);
            }
        }
        let at_text = at.map_or_else(|| entry.at.0.clone(), format_duration);
        let action = single_action(entry, &path, problems).and_then(|key| match key {
            "rollout" => {
                let spec = entry.rollout.as_ref()?;
                if let Some(pods) = context.pods.as_mut() {
                    pods.lose_track(format!("the rollout at {at_text} replaces every pod"));
                }
                rollout_action::build(spec, &path.key(key), revision.as_mut(), problems)
                    .map(Action::Rollout)
            }
            _ => {
                if key == "scale" && autoscaled {
                    problems.at(
                        &path.key(key),
                        "`service.autoscaler` owns the replica count: the HorizontalPodAutoscaler would undo this scale at its next sync; remove the action or the autoscaler",
                    );
                }
                build_action(entry, key, &path, &at_text, &mut context, problems)
            }
        });
        if let (Some(at), Some(action)) = (at, action) {
            timeline.events.push(TimelineEvent { at, name, action });
        }
    }
    timeline
}

fn entry_name(entry: &Entry) -> Option<&str> {
    match entry {
        Entry::Read(e) => e.name.as_ref().map(|n| n.0.as_str()),
        Entry::Unreadable(raw) => raw.get("name").and_then(Json::as_str),
    }
}

/// An entry that could not be read: its name and time (when they can be read) still count
/// for windows and time order, and the node it adds, removes or moves where its names can be
/// read; what else it changed is unknown from here on.
fn unreadable(
    raw: &Json,
    path: &FieldPath,
    timeline: &mut Timeline,
    previous: &mut Option<(Duration, FieldPath)>,
    context: &mut Context<'_>,
) {
    let at = raw
        .get("at")
        .and_then(Json::as_str)
        .and_then(|t| parse_duration(t).ok());
    if let Some(at) = at {
        *previous = Some((at, path.key("at")));
        if let Some(name) = raw.get("name").and_then(Json::as_str) {
            timeline.named.entry(name.to_owned()).or_insert(at);
        }
    }
    let text = |action: &str, key: &str| raw.get(action)?.get(key)?.as_str().map(str::to_owned);
    if let Some(state) = context.state.as_mut() {
        let nodes = &mut state.nodes;
        let readable = if raw.get("addNode").is_some() {
            text("addNode", "name")
                .zip(text("addNode", "zone"))
                .map(|(name, zone)| nodes.insert(name, zone))
                .is_some()
        } else if raw.get("removeNode").is_some() {
            text("removeNode", "node")
                .map(|node| nodes.remove(&node))
                .is_some()
        } else if raw.get("relabelNode").is_some() {
            text("relabelNode", "node")
                .zip(text("relabelNode", "zone"))
                .map(|(node, zone)| nodes.insert(node, zone))
                .is_some()
        } else {
            true
        };
        state.nodes_known &= readable;
    }
    let changes_pods = ["killPod", "scale", "rollout", "removeNode"]
        .iter()
        .any(|key| raw.get(*key).is_some());
    if changes_pods && let Some(pods) = context.pods.as_mut() {
        pods.lose_track(format!("the entry at {path} could not be read"));
    }
}

fn check_time(
    at: Duration,
    path: &FieldPath,
    load_duration: Option<Duration>,
    previous: Option<&(Duration, FieldPath)>,
    problems: &mut Problems<'_>,
) {
    if let Some(load_duration) = load_duration
        && at > load_duration
    {
        problems.at(
            &path.key("at"),
            format!(
                "{} is after the load ends (load.duration is {})",
                format_duration(at),
                format_duration(load_duration)
            ),
        );
    }
    if let Some((before, before_path)) = previous
        && at < *before
    {
        let line = problems.line_of(before_path);
        problems.at(
            &path.key("at"),
            format!(
                "timeline entries must be in time order: {} comes after an entry at {} (line {line})",
                format_duration(at),
                format_duration(*before)
            ),
        );
    }
}

/// The one action key of an entry, or a problem.
fn single_action(
    entry: &TimelineEntrySpec,
    path: &FieldPath,
    problems: &mut Problems<'_>,
) -> Option<&'static str> {
    let set: Vec<&'static str> = [
        ("setNodeReady", entry.set_node_ready.is_some()),
        ("addNode", entry.add_node.is_some()),
        ("removeNode", entry.remove_node.is_some()),
        ("relabelNode", entry.relabel_node.is_some()),
        ("setAllocatableCpu", entry.set_allocatable_cpu.is_some()),
        ("scale", entry.scale.is_some()),
        ("killPod", entry.kill_pod.is_some()),
        ("rollout", entry.rollout.is_some()),
        ("reloadIngress", entry.reload_ingress.is_some()),
        ("restartIngress", entry.restart_ingress.is_some()),
        ("zoneNetwork", entry.zone_network.is_some()),
    ]
    .into_iter()
    .filter_map(|(key, present)| present.then_some(key))
    .collect();
    match set.as_slice() {
        [one] => Some(one),
        [] => {
            problems.at(path, format!("no action; set exactly one of: {ACTIONS}"));
            None
        }
        many => {
            problems.at(
                path,
                format!(
                    "{} actions in one entry ({}); set exactly one action per timeline entry",
                    many.len(),
                    many.join(", ")
                ),
            );
            None
        }
    }
}

fn build_action(
    entry: &TimelineEntrySpec,
    key: &str,
    path: &FieldPath,
    at: &str,
    context: &mut Context<'_>,
    problems: &mut Problems<'_>,
) -> Option<Action> {
    let path = path.key(key);
    let node_exists = |state: &mut Option<State<'_>>, problems: &mut Problems<'_>, node: &str| {
        let Some(state) = state.as_mut().filter(|s| s.nodes_known) else {
            return true;
        };
        if state.nodes.contains_key(node) {
            return true;
        }
        let names: Vec<String> = state.nodes.keys().cloned().collect();
        problems.at(
            &path.key("node"),
            format!(
                "node `{node}` does not exist at {at}; nodes at that point are: {}",
                listing(&names, "(none)")
            ),
        );
        false
    };
    let zone_known = |state: &Option<State<'_>>, problems: &mut Problems<'_>, zone: &str| {
        let Some(state) = state else { return };
        if !state.cluster.zones.iter().any(|z| z == zone) {
            problems.at(
                &path.key("zone"),
                format!(
                    "zone `{zone}` is not a cluster zone; cluster zones are: {}",
                    state.cluster.zones.join(", ")
                ),
            );
        }
    };
    let state = &mut context.state;
    match key {
        "zoneNetwork" => {
            let spec = entry.zone_network.as_ref()?;
            let zones = state.as_ref().map(|s| s.cluster.zones.as_slice());
            super::zone_network::build(spec, &path, at, zones, &mut context.zone_faults, problems)
        }
        "setNodeReady" => {
            let spec = entry.set_node_ready.as_ref()?;
            node_exists(state, problems, &spec.node.0);
            Some(Action::SetNodeReady {
                node: spec.node.0.clone(),
                ready: spec.ready,
            })
        }
        "addNode" => {
            let spec = entry.add_node.as_ref()?;
            zone_known(state, problems, &spec.zone.0);
            if let Some(state) = state.as_mut().filter(|s| s.nodes_known)
                && state
                    .nodes
                    .insert(spec.name.0.clone(), spec.zone.0.clone())
                    .is_some()
            {
                problems.at(
                    &path.key("name"),
                    format!("node `{}` already exists at {at}", spec.name.0),
                );
            }
            let allocatable_millicpu =
                cpu(problems, &path.key("allocatableCpu"), &spec.allocatable_cpu)?;
            Some(Action::AddNode {
                zone: spec.zone.0.clone(),
                name: spec.name.0.clone(),
                allocatable_millicpu,
                ready: spec.ready,
            })
        }
        "removeNode" => {
            let spec = entry.remove_node.as_ref()?;
            let node = &spec.node.0;
            let may_host = match (state.as_ref(), context.service) {
                (Some(state), Some(service)) => may_host_pods(state, service, node),
                _ => true,
            };
            if may_host && let Some(pods) = context.pods.as_mut() {
                pods.lose_track(format!(
                    "the pods on {node}, removed at {at}, are replaced under new names"
                ));
            }
            if node_exists(state, problems, node)
                && let Some(state) = state.as_mut()
            {
                state.nodes.remove(node);
            }
            Some(Action::RemoveNode { node: node.clone() })
        }
        "relabelNode" => {
            let spec = entry.relabel_node.as_ref()?;
            zone_known(state, problems, &spec.zone.0);
            if node_exists(state, problems, &spec.node.0)
                && let Some(state) = state.as_mut()
            {
                state.nodes.insert(spec.node.0.clone(), spec.zone.0.clone());
            }
            Some(Action::RelabelNode {
                node: spec.node.0.clone(),
                zone: spec.zone.0.clone(),
            })
        }
        "setAllocatableCpu" => {
            let spec = entry.set_allocatable_cpu.as_ref()?;
            node_exists(state, problems, &spec.node.0);
            let allocatable_millicpu =
                cpu(problems, &path.key("allocatableCpu"), &spec.allocatable_cpu)?;
            Some(Action::SetAllocatableCpu {
                node: spec.node.0.clone(),
                allocatable_millicpu,
            })
        }
        "scale" => {
            let spec = entry.scale.as_ref()?;
            if let Some(pods) = context.pods.as_mut() {
                pods.scale(spec.replicas, at);
            }
            Some(Action::Scale {
                replicas: spec.replicas,
            })
        }
        "killPod" => {
            let spec = entry.kill_pod.as_ref()?;
            match (&spec.pod, spec.pick, &spec.zone) {
                (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
                    problems.at(
                        &path,
                        "name the pod (`pod`) or let the harness pick one (`pick`, `zone`), not both",
                    );
                    None
                }
                (Some(text), None, None) => {
                    let pod = units::parse_pod(&text.0)
                        .map_err(|m| problems.at(&path.key("pod"), m))
                        .ok()?;
                    if let Some(pods) = context.pods.as_mut() {
                        match pods.check(pod, &text.0.to_string(), at) {
                            Ok(()) => pods.kill(pod),
                            Err(problem) => problems.at(&path.key("pod"), problem),
                        }
                    }
                    Some(Action::KillPod { pod })
                }
                (None, pick, zone) => {
                    let pick = pick.unwrap_or(PodPick::Oldest);
                    let zone = zone.as_ref().map(|z| z.0.clone());
                    if let Some(zone) = &zone {
                        zone_known(state, problems, zone);
                    }
                    if let Some(pods) = context.pods.as_mut() {
                        if pods.known_empty() {
                            problems.at(&path, format!("there are no pods at {at} to pick from"));
                        }
                        pods.kill_picked(pick, zone.as_deref());
                    }
                    Some(Action::KillPickedPod { pick, zone })
                }
            }
        }
        "reloadIngress" | "restartIngress" => {
            let spec = if key == "reloadIngress" {
                entry.reload_ingress.as_ref()?
            } else {
                entry.restart_ingress.as_ref()?
            };
            match context.ingress_replicas {
                Some(None) => problems.at(
                    &path,
                    format!("`{key}` acts on the ingress replicas, but there is no top-level `ingress`; add one or remove this entry"),
                ),
                Some(Some(replicas)) => {
                    if let Some(replica) = spec.replica.filter(|r| *r >= replicas) {
                        problems.at(
                            &path.key("replica"),
                            format!("replica {replica} does not exist: `ingress.replicas` is {replicas} (ingress-0 .. ingress-{})", replicas - 1),
                        );
                    }
                }
                None => {}
            }
            let which = spec
                .replica
                .map_or(IngressReplicas::All, IngressReplicas::One);
            Some(if key == "reloadIngress" {
                Action::ReloadIngress(which)
            } else {
                Action::RestartIngress(which)
            })
        }
        _ => None,
    }
}

/// Whether the service's pods may run on `node`: a worker node that the placement allows.
fn may_host_pods(state: &State<'_>, service: &Service, node: &str) -> bool {
    if !state.nodes_known {
        return true;
    }
    if state
        .cluster
        .node(node)
        .is_some_and(|n| n.role == NodeRole::ControlPlane)
    {
        return false;
    }
    let Some(zone) = state.nodes.get(node) else {
        return false;
    };
    let placement = &service.placement;
    (placement.zones.is_empty() || placement.zones.contains(zone))
        && (placement.nodes.is_empty() || placement.nodes.iter().any(|n| n == node))
}

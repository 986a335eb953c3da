//! Checks and builds `timeline`: times in order and within the load, unique names, exactly one
//! action per entry, and references that hold at that point of the timeline (nodes added and
//! removed by earlier entries, the replica count after earlier scales, the termination settings
//! after earlier rollouts); no `scale` while an autoscaler owns the replica count.

use std::collections::BTreeMap;
use std::time::Duration;

use super::super::diagnostic::Problems;
use super::super::format::TimelineEntrySpec;
use super::super::model::{Action, Cluster, Service, TimelineEvent};
use super::super::path::FieldPath;
use super::super::units::{self, format_duration};
use super::{check_unique, cpu, duration, listing, rollout_action};

/// The built timeline, plus every named entry's time (also for entries with other problems,
/// so that windows referring to them are still checked).
pub(super) struct Timeline {
    pub events: Vec<TimelineEvent>,
    pub named: BTreeMap<String, Duration>,
}

const ACTIONS: &str =
    "setNodeReady, addNode, removeNode, relabelNode, setAllocatableCpu, scale, killPod, rollout";

/// The cluster as the timeline changes it.
struct State<'c> {
    cluster: &'c Cluster,
    /// Node name to zone.
    nodes: BTreeMap<String, String>,
    replicas: Option<u32>,
}

/// `service` is `None` when the service section could not be read.
pub(super) fn build(
    specs: &[TimelineEntrySpec],
    cluster: Option<&Cluster>,
    service: Option<&Service>,
    load_duration: Option<Duration>,
    problems: &mut Problems<'_>,
) -> Timeline {
    let root = FieldPath::root().key("timeline");
    let replicas = service.map(|s| s.replicas);
    let autoscaled = service.is_some_and(|s| s.autoscaler.is_some());
    let mut revision = service.map(|s| s.termination.clone());
    let mut state = cluster.map(|cluster| State {
        cluster,
        nodes: cluster
            .nodes
            .iter()
            .map(|n| (n.name.clone(), n.zone.clone()))
            .collect(),
        replicas,
    });
    check_unique(
        problems,
        "timeline entry name",
        specs.iter().enumerate().filter_map(|(i, e)| {
            e.name
                .as_ref()
                .map(|n| (root.index(i).key("name"), n.0.as_str()))
        }),
    );
    let mut timeline = Timeline {
        events: Vec::new(),
        named: BTreeMap::new(),
    };
    let mut previous: Option<(Duration, FieldPath)> = None;
    for (i, entry) in specs.iter().enumerate() {
        let path = root.index(i);
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
                build_action(entry, key, &path, &at_text, state.as_mut(), problems)
            }
        });
        if let (Some(at), Some(action)) = (at, action) {
            timeline.events.push(TimelineEvent { at, name, action });
        }
    }
    timeline
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
    state: Option<&mut State<'_>>,
    problems: &mut Problems<'_>,
) -> Option<Action> {
    let path = path.key(key);
    let mut state = state;
    let node_exists =
        |state: &mut Option<&mut State<'_>>, problems: &mut Problems<'_>, node: &str| {
            let Some(state) = state else { return true };
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
    let zone_known = |state: &Option<&mut State<'_>>, problems: &mut Problems<'_>, zone: &str| {
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
    match key {
        "setNodeReady" => {
            let spec = entry.set_node_ready.as_ref()?;
            node_exists(&mut state, problems, &spec.node.0);
            Some(Action::SetNodeReady {
                node: spec.node.0.clone(),
                ready: spec.ready,
            })
        }
        "addNode" => {
            let spec = entry.add_node.as_ref()?;
            zone_known(&state, problems, &spec.zone.0);
            if let Some(state) = state.as_deref_mut()
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
            if node_exists(&mut state, problems, &spec.node.0)
                && let Some(state) = state.as_deref_mut()
            {
                state.nodes.remove(&spec.node.0);
            }
            Some(Action::RemoveNode {
                node: spec.node.0.clone(),
            })
        }
        "relabelNode" => {
            let spec = entry.relabel_node.as_ref()?;
            zone_known(&state, problems, &spec.zone.0);
            if node_exists(&mut state, problems, &spec.node.0)
                && let Some(state) = state.as_deref_mut()
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
            node_exists(&mut state, problems, &spec.node.0);
            let allocatable_millicpu =
                cpu(problems, &path.key("allocatableCpu"), &spec.allocatable_cpu)?;
            Some(Action::SetAllocatableCpu {
                node: spec.node.0.clone(),
                allocatable_millicpu,
            })
        }
        "scale" => {
            let spec = entry.scale.as_ref()?;
            if let Some(state) = state.as_deref_mut() {
                state.replicas = Some(spec.replicas);
            }
            Some(Action::Scale {
                replicas: spec.replicas,
            })
        }
        "killPod" => {
            let spec = entry.kill_pod.as_ref()?;
            let pod = units::parse_pod(&spec.pod.0)
                .map_err(|m| problems.at(&path.key("pod"), m))
                .ok()?;
            let replicas = state.as_ref().and_then(|s| s.replicas);
            if let Some(replicas) = replicas
                && pod >= replicas
            {
                let shown = &spec.pod.0;
                let pods = match replicas {
                    0 => "there are no pods".to_owned(),
                    1 => "the only pod is pod-0".to_owned(),
                    n => format!("pods are pod-0 .. pod-{}", n - 1),
                };
                problems.at(
                    &path.key("pod"),
                    format!("pod `{shown}` does not exist at {at}; {pods}"),
                );
            }
            Some(Action::KillPod { pod })
        }
        _ => None,
    }
}

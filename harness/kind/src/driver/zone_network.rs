//! `zoneNetwork` on kind: `tc` netem in the node containers ([`crate::netem`] has the layout
//! and the exact commands). When a fault starts, the Nodes are listed (their zone label and pod
//! CIDRs, which the node IPAM controller assigned and kindnet routes) and, once a run, the
//! worker containers' addresses are read with `docker inspect`; then every worker node of one
//! zone gets a netem band for the other zone's node and pod addresses, and the same the other
//! way. Control-plane nodes take no part, even with a zone: the fault is on the data plane, as
//! on the local target (kubelets keep reporting, endpoints and hints stay as they are). The
//! nodes' commands run at once (each node's in order). `clear` removes what the fault set;
//! teardown removes the root qdisc of every node the harness may have left one in, whether the
//! run ended, failed or was interrupted, tolerating "nothing there" ([`cleanup`]).
//!
//! Refused (before anything starts): in an existing cluster (`--allow-existing-cluster`: its
//! nodes are not the harness's to change, and not containers to `docker exec` into), with more
//! zones than `prio` has bands for, and an `addNode` or `relabelNode` while a fault is active
//! (the rules are written when the fault starts; a node added or moved later would be outside
//! them).

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

use harness_core::measure::EventKind;
use harness_core::scenario::model::{
    Action, Link, Scenario, TimelineEvent, ZoneFault, ZoneNetworkChange,
};
use harness_core::scenario::units::format_duration;

use super::{KindError, Running};
use crate::api::KubeApi;
use crate::cluster::KindRole;
use crate::exec::ExecError;
use crate::labels::ZONE_LABEL;
use crate::lifecycle::{Cluster, LifecycleError};
use crate::netem::{self, Layout, Member, NodeCommands, ZoneNet};

/// What a run holds of its faults.
pub(super) struct ZoneNetwork {
    net: ZoneNet,
    /// The worker containers' IPv4 addresses, read at the first fault.
    addresses: Option<BTreeMap<String, Vec<Ipv4Addr>>>,
}

/// The refusal of `zoneNetwork` in a cluster the harness did not create.
pub fn existing_cluster_refusal(scenario: &Scenario) -> Option<String> {
    scenario.has_zone_faults().then(|| {
        "zoneNetwork with --allow-existing-cluster: on kind the faults are tc netem rules \
         written into the node containers (docker exec NODE tc ...), and the harness does not \
         change the node networking of a cluster it did not create; run the scenario in a \
         cluster the harness creates (leave out --context and --allow-existing-cluster) or \
         reuses (--cluster NAME)"
            .to_owned()
    })
}

/// What the kind target refuses of `zoneNetwork` in any cluster.
pub fn refusals(scenario: &Scenario) -> Vec<String> {
    if !scenario.has_zone_faults() {
        return Vec::new();
    }
    let zones = &scenario.cluster.zones;
    let mut out = Vec::new();
    if Layout::new(zones).is_none() {
        out.push(format!(
            "zoneNetwork with {} zones: on kind each zone's destinations get a band of the \
             nodes' tc prio qdisc, which has at most {} bands, 3 of them the default's: at most \
             {} zones",
            zones.len(),
            netem::MAX_BANDS,
            netem::MAX_ZONES
        ));
    }
    let mut active: BTreeSet<Link> = BTreeSet::new();
    for event in &scenario.timeline {
        match &event.action {
            Action::ZoneNetwork(change) => {
                let links = change.links(zones);
                if change.fault == ZoneFault::Clear {
                    active.retain(|l| !links.contains(l));
                } else {
                    active.extend(links);
                }
            }
            Action::AddNode { .. } | Action::RelabelNode { .. } if !active.is_empty() => {
                let links: Vec<String> = active.iter().map(|(a, b)| format!("{a}–{b}")).collect();
                out.push(format!(
                    "`{event}` at {} while a zoneNetwork fault is active ({}): on kind a \
                     fault's tc rules are written into the node containers when it starts, for \
                     the Nodes, zones and pod CIDRs of that moment, so a node added or moved to \
                     another zone later would be outside them; clear the fault before it, or \
                     start the fault after it",
                    format_duration(event.at),
                    links.join(", ")
                ));
            }
            _ => {}
        }
    }
    out
}

/// Runs a blocking step off the async threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, KindError> + Send + 'static,
) -> Result<T, KindError> {
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| {
        Err(KindError::Io {
            context: "docker exec in the kind nodes".into(),
            source: std::io::Error::other(e.to_string()),
        })
    })
}

/// The worker nodes taking part now: registered Nodes of the plan's workers, each with its
/// zone label, its container's addresses and its pod CIDRs, in name order.
async fn members(
    run: &mut Running,
    api: &KubeApi,
    cluster: &Cluster,
) -> Result<Vec<Member>, KindError> {
    let workers: BTreeMap<String, Option<String>> = run
        .plan
        .nodes
        .iter()
        .filter(|n| n.role == KindRole::Worker)
        .map(|n| (n.kind_name.clone(), n.zone.clone()))
        .collect();
    let nodes = api.list_nodes().await?;
    let state = run
        .zone_net
        .as_mut()
        .ok_or_else(|| KindError::Unsupported("zoneNetwork before its layout".into()))?;
    if state.addresses.is_none() {
        let (inspect, names) = (cluster.clone(), workers.keys().cloned().collect::<Vec<_>>());
        let addresses = blocking(move || Ok(inspect.node_addresses(&names)?)).await?;
        state.addresses = Some(addresses);
    }
    let addresses = state.addresses.as_ref().cloned().unwrap_or_default();
    let mut out: Vec<Member> = nodes
        .iter()
        .filter_map(|node| {
            let name = node.metadata.name.as_deref()?;
            let planned_zone = workers.get(name)?;
            let zone = node
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(ZONE_LABEL))
                .or(planned_zone.as_ref())?;
            let spec = node.spec.as_ref();
            let pod_cidrs: Vec<String> = spec
                .and_then(|s| s.pod_cidrs.clone())
                .filter(|c| !c.is_empty())
                .or_else(|| spec.and_then(|s| s.pod_cidr.clone()).map(|c| vec![c]))
                .unwrap_or_default();
            let own = addresses.get(name).map(Vec::as_slice).unwrap_or_default();
            Some(Member::new(name, zone, own, &pod_cidrs))
        })
        .collect();
    out.sort_by(|a, b| a.node.cmp(&b.node));
    Ok(out)
}

/// Whether `tc` failed because the kernel has no such qdisc (`prio`, `netem`).
fn no_qdisc(e: &LifecycleError) -> bool {
    matches!(e, LifecycleError::Exec(ExecError::Failed { stderr, .. })
        if stderr.contains("Specified qdisc kind is unknown"))
}

/// Runs `work` in each node at once (each node's commands in order); the nodes that failed,
/// with why.
async fn in_nodes<F>(
    cluster: Cluster,
    nodes: Vec<NodeCommands>,
    work: F,
) -> Vec<(String, KindError)>
where
    F: Fn(&Cluster, &NodeCommands) -> Result<(), LifecycleError> + Send + Sync + 'static,
{
    let ran = tokio::task::spawn_blocking(move || {
        std::thread::scope(|scope| {
            let handles: Vec<_> = nodes
                .iter()
                .map(|node| {
                    let (cluster, work) = (&cluster, &work);
                    scope.spawn(move || work(cluster, node))
                })
                .collect();
            handles
                .into_iter()
                .zip(&nodes)
                .filter_map(|(handle, node)| match handle.join() {
                    Ok(Ok(())) => None,
                    Ok(Err(e)) if no_qdisc(&e) => Some((node.node.clone(), KindError::NoNetem(e))),
                    Ok(Err(e)) => Some((node.node.clone(), KindError::from(e))),
                    Err(_) => Some((
                        node.node.clone(),
                        KindError::Io {
                            context: format!("tc in {}", node.node),
                            source: std::io::Error::other("the command's thread panicked"),
                        },
                    )),
                })
                .collect()
        })
    })
    .await;
    ran.unwrap_or_else(|e| {
        vec![(
            String::new(),
            KindError::Io {
                context: "tc in the kind nodes".into(),
                source: std::io::Error::other(e.to_string()),
            },
        )]
    })
}

/// Carries out `change` ([`crate::netem::ZoneNet::apply`]), with a note on the timeline
/// naming the node containers changed.
pub(super) async fn act(
    run: &mut Running,
    event: &TimelineEvent,
    change: &ZoneNetworkChange,
) -> Result<(), KindError> {
    let Some(cluster) = run.cluster.clone() else {
        return Err(KindError::Unsupported(format!(
            "{event} in a cluster the harness did not create"
        )));
    };
    let api = run.api.clone().ok_or(KindError::NotDeployed)?;
    if run.zone_net.is_none() {
        let layout = Layout::new(&run.scenario.cluster.zones).ok_or_else(|| {
            KindError::Unsupported(format!("{event} with more than {} zones", netem::MAX_ZONES))
        })?;
        run.zone_net = Some(ZoneNetwork {
            net: ZoneNet::new(layout),
            addresses: None,
        });
    }
    let members = match change.fault {
        ZoneFault::Clear => Vec::new(),
        _ => members(run, &api, &cluster).await?,
    };
    let Some(state) = run.zone_net.as_mut() else {
        return Err(KindError::NotDeployed);
    };
    let commands = state.net.apply(change, &members);
    let nodes: Vec<&str> = commands.iter().map(|c| c.node.as_str()).collect();
    let message = if nodes.is_empty() {
        format!(
            "{change}: no tc command in any node (no registered worker Node on one side, or \
             nothing in place to clear)"
        )
    } else {
        format!("{change}: tc in {}", nodes.join(", "))
    };
    run.recorder.record(vec![EventKind::Note { message }]);
    let failed = in_nodes(cluster, commands, |cluster, node| {
        node.commands
            .iter()
            .try_for_each(|args| cluster.tc(&node.node, args))
    })
    .await;
    for (node, _) in &failed {
        state.net.failed(node);
    }
    match failed.into_iter().next() {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
}

/// Removes the root qdisc from every node where the harness may have left one (all at once),
/// "nothing there" being success; a node cleaned is forgotten, so a second call does nothing.
pub(super) async fn cleanup(run: &mut Running) -> Result<(), KindError> {
    let (Some(state), Some(cluster)) = (run.zone_net.as_mut(), run.cluster.clone()) else {
        return Ok(());
    };
    let nodes: Vec<String> = state.net.rooted().cloned().collect();
    if nodes.is_empty() {
        return Ok(());
    }
    let commands = nodes
        .iter()
        .map(|node| NodeCommands {
            node: node.clone(),
            commands: vec![netem::del_root()],
        })
        .collect();
    let failed = in_nodes(cluster, commands, |cluster, node| {
        cluster.tc_clean(&node.node)
    })
    .await;
    for node in &nodes {
        if !failed.iter().any(|(n, _)| n == node) {
            state.net.cleaned(node);
        }
    }
    match failed.into_iter().next() {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness_core::scenario::load_scenario_str;

    fn scenario(timeline: &str) -> Scenario {
        let yaml = format!(
            r#"
apiVersion: harness/v1alpha1
kind: Scenario
metadata: {{ name: t }}
cluster:
  zones:
    - {{ name: a, nodes: [{{ name: a-1, allocatableCpu: "4" }}] }}
    - {{ name: b, nodes: [{{ name: b-1, allocatableCpu: "4" }}] }}
service:
  name: s
  replicas: 2
  serviceTime: {{ fixed: 5ms }}
load:
  duration: 1m
  generators: [{{ name: g, zone: a, rate: 10 }}]
timeline:
{timeline}"#
        );
        load_scenario_str(&yaml, "t.yaml", None).unwrap()
    }

    #[test]
    fn nodes_may_not_join_or_move_while_a_fault_is_active() {
        let ok = scenario(
            "  - { at: 5s, addNode: { zone: a, name: a-2, allocatableCpu: \"4\" } }
  - { at: 10s, zoneNetwork: { from: a, to: b, delay: 20ms } }
  - { at: 20s, zoneNetwork: { from: a, to: all, clear: true } }
  - { at: 30s, relabelNode: { node: a-2, zone: b } }
",
        );
        assert!(refusals(&ok).is_empty(), "{:?}", refusals(&ok));
        assert!(
            existing_cluster_refusal(&ok)
                .unwrap()
                .contains("--allow-existing-cluster")
        );
        let bad = scenario(
            "  - { at: 10s, zoneNetwork: { from: a, to: b, partition: true } }
  - { at: 15s, name: late, addNode: { zone: a, name: a-2, allocatableCpu: \"4\" } }
",
        );
        let refused = refusals(&bad);
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert!(
            refused[0].starts_with("`late: ")
                && refused[0].contains("at 15s while a zoneNetwork fault is active (a–b)"),
            "{refused:?}"
        );
        let none = scenario("  - { at: 10s, scale: { replicas: 3 } }\n");
        assert!(refusals(&none).is_empty());
        assert!(existing_cluster_refusal(&none).is_none());
    }
}

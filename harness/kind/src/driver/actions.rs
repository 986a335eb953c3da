//! Timeline actions on kind:
//!
//! | action | what the harness does |
//! |---|---|
//! | `setNodeReady: false` / `true` | `docker exec NODE systemctl stop` / `start kubelet`: the node controller marks it NotReady after `node-monitor-grace-period` |
//! | `addNode` | starts the spare's kubelet: it registers its Node (with its zone label) |
//! | `removeNode` | deletes the Node, then stops the kubelet so it does not register again |
//! | `relabelNode` | merge-patches the Node's `topology.kubernetes.io/zone`, and in a kind node the kubelet's `--node-labels` too |
//! | `setAllocatableCpu` | rewrites the kubelet's `--kube-reserved=cpu=` (scaled as the plan scales every node) and restarts it |
//! | `scale` | the Deployment's scale subresource |
//! | `killPod` / `killPickedPod` | deletes the pod (its grace period is the Deployment's) |
//! | `rollout` | a strategic merge patch of the Deployment's pod template ([`super::rollout`]) |
//! | `reloadIngress: {}` | the controller's ConfigMap applied at the next rewrite generation: every replica reloads ([`super::ingress`]) |
//! | `restartIngress` | deletes the replica's pod (or every replica's): the StatefulSet recreates it, a fresh HAProxy |
//! | `zoneNetwork` | `docker exec NODE tc ...` in the worker nodes of both zones: netem for the other zone's node and pod addresses ([`super::zone_network`], [`crate::netem`]) |
//!
//! `killPod: {pod: N}` means the N-th service pod of the run in creation order (the local
//! target names that pod `pod-N`). In an existing cluster node actions need
//! `--may-touch-nodes`.

use harness_core::scenario::model::{Action, PodPick, TimelineEvent};

use super::{KindError, Running};
use crate::cluster::PlannedNode;
use crate::labels::ZONE_LABEL;
use crate::lifecycle::Cluster;

fn kind_node<'a>(run: &'a Running, name: &str) -> Result<&'a PlannedNode, KindError> {
    run.plan
        .node(name)
        .ok_or_else(|| KindError::NoNode(name.to_owned()))
}

fn cluster(run: &Running, what: &str) -> Result<Cluster, KindError> {
    run.cluster
        .clone()
        .ok_or_else(|| KindError::NodesUntouchable(what.to_owned()))
}

/// Runs `work` (`docker exec` in a kind node) off the async runtime.
async fn in_node<E>(work: impl FnOnce() -> Result<(), E> + Send + 'static) -> Result<(), KindError>
where
    E: Send + 'static,
    KindError: From<E>,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| KindError::Io {
            context: "docker exec".into(),
            source: std::io::Error::other(e.to_string()),
        })?
        .map_err(KindError::from)
}

async fn kubelet(cluster: Cluster, node: String, start: bool) -> Result<(), KindError> {
    in_node(move || {
        if start {
            cluster.start_kubelet(&node)
        } else {
            cluster.stop_kubelet(&node)
        }
    })
    .await
}

/// The name of the pod `killPod`/`killPickedPod` means now.
pub(super) fn pick_pod(run: &Running, action: &Action) -> Result<String, KindError> {
    let recorded = run.recorder.lock();
    let pods = recorded.observer.pods();
    match action {
        Action::KillPod { pod } => pods
            .iter()
            .find(|p| p.index == *pod)
            .map(|p| p.name.clone())
            .ok_or(KindError::NoPodIndex {
                index: *pod,
                count: pods.len(),
            }),
        Action::KillPickedPod { pick, zone } => {
            let mut candidates: Vec<_> = pods
                .iter()
                .filter(|p| !p.gone && !p.deleting)
                .filter(|p| zone.is_none() || p.zone == *zone)
                .collect();
            candidates.sort_by_key(|p| p.index);
            let chosen = match pick {
                PodPick::Oldest => candidates.first(),
                PodPick::Newest => candidates.last(),
            };
            chosen
                .map(|p| p.name.clone())
                .ok_or(KindError::NoPodToPick { zone: zone.clone() })
        }
        _ => Err(KindError::Unsupported(format!("{action:?} as a pod pick"))),
    }
}

pub(super) async fn act(
    run: &mut Running,
    event: &TimelineEvent,
    may_touch_nodes: bool,
) -> Result<(), KindError> {
    let node_action = matches!(
        event.action,
        Action::SetNodeReady { .. }
            | Action::AddNode { .. }
            | Action::RemoveNode { .. }
            | Action::RelabelNode { .. }
            | Action::SetAllocatableCpu { .. }
    );
    if node_action && !may_touch_nodes {
        return Err(KindError::NodesUntouchable(event.to_string()));
    }
    let api = run.api.clone().ok_or(KindError::NotDeployed)?;
    let ns = run.namespace.clone().ok_or(KindError::NotDeployed)?;
    match &event.action {
        Action::SetNodeReady { node, ready } => {
            let kind_name = kind_node(run, node)?.kind_name.clone();
            kubelet(cluster(run, &event.to_string())?, kind_name, *ready).await
        }
        Action::AddNode { .. } => {
            let node = run
                .plan
                .node_added_at(event.at)
                .ok_or_else(|| KindError::NoNode(format!("added at {:?}", event.at)))?
                .kind_name
                .clone();
            kubelet(cluster(run, &event.to_string())?, node, true).await
        }
        Action::RemoveNode { node } => {
            let kind_name = kind_node(run, node)?.kind_name.clone();
            let cluster = cluster(run, &event.to_string())?;
            api.delete_node(&kind_name).await?;
            kubelet(cluster, kind_name, false).await
        }
        Action::RelabelNode { node, zone } => {
            let kind_name = kind_node(run, node)?.kind_name.clone();
            api.label_node(&kind_name, ZONE_LABEL, zone).await?;
            // In a kind cluster, also the kubelet's flags, so that a restart keeps the zone.
            let Some(cluster) = run.cluster.clone() else {
                return Ok(());
            };
            let zone = zone.clone();
            in_node(move || cluster.set_node_label_zone(&kind_name, &zone)).await
        }
        Action::Scale { replicas } => Ok(api
            .scale(&ns, &run.scenario.service.name, *replicas)
            .await?),
        Action::KillPod { .. } | Action::KillPickedPod { .. } => {
            let pod = pick_pod(run, &event.action)?;
            Ok(api.delete_pod(&ns, &pod).await?)
        }
        Action::SetAllocatableCpu {
            node,
            allocatable_millicpu,
        } => {
            let kind_name = kind_node(run, node)?.kind_name.clone();
            let reserved = run.plan.cpu_scale.reserved(*allocatable_millicpu);
            let cluster = cluster(run, &event.to_string())?;
            in_node(move || cluster.set_kube_reserved_cpu(&kind_name, reserved)).await
        }
        Action::Rollout(change) => super::rollout::rollout(run, change).await,
        Action::ReloadIngress(_) | Action::RestartIngress(_) => match &run.ingress {
            Some(ingress) => ingress.act(&api, &event.action).await,
            None => Err(KindError::Unsupported(format!(
                "{event} without an ingress controller in the run"
            ))),
        },
        Action::ZoneNetwork(change) => super::zone_network::act(run, event, change).await,
    }
}

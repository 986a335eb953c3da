//! The `timeline` section as written: when, an optional name, and one action per entry.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::lifecycle::{PreStopChangeSpec, present};
use super::scalars::{CpuText, DurationText, EventName, NodeName, PodRefText, ZoneName};

/// One change during the load. Exactly one of the action keys (`setNodeReady`, `addNode`,
/// `removeNode`, `relabelNode`, `setAllocatableCpu`, `scale`, `killPod`, `rollout`,
/// `reloadIngress`, `restartIngress`, `zoneNetwork`) must be set.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TimelineEntrySpec {
    /// When the action happens, measured from load start (after the warmup). Entries must be
    /// in time order and within the load duration.
    pub at: DurationText,
    /// A name for this entry, unique in the timeline, that expectation windows can refer to
    /// (`node-change+5s`). `start` and `end` are reserved.
    #[serde(default)]
    pub name: Option<EventName>,
    /// Mark a node Ready or NotReady.
    #[serde(default)]
    pub set_node_ready: Option<SetNodeReadySpec>,
    /// Add a worker node to a zone.
    #[serde(default)]
    pub add_node: Option<AddNodeSpec>,
    /// Remove a node (its pods are evicted).
    #[serde(default)]
    pub remove_node: Option<NodeRefSpec>,
    /// Move a node to another zone (change its `topology.kubernetes.io/zone` label).
    #[serde(default)]
    pub relabel_node: Option<RelabelNodeSpec>,
    /// Change a node's allocatable CPU.
    #[serde(default)]
    pub set_allocatable_cpu: Option<SetAllocatableCpuSpec>,
    /// Change the number of replicas (pods are added or removed from the highest index).
    #[serde(default)]
    pub scale: Option<ScaleSpec>,
    /// Delete a pod (as `kubectl delete pod`); the ReplicaSet creates a replacement, which gets
    /// a new name.
    #[serde(default)]
    pub kill_pod: Option<KillPodSpec>,
    /// Roll out a new revision of the Deployment (a rolling update under
    /// `service.rollout`).
    #[serde(default)]
    pub rollout: Option<RolloutActionSpec>,
    /// Reload the ingress replicas' HAProxy (a hitless master-worker reload with a freshly
    /// rendered configuration). Needs the top-level `ingress`.
    #[serde(default)]
    pub reload_ingress: Option<IngressReplicaSpec>,
    /// Restart the ingress replicas' HAProxy (stop and start, what the controller does when a
    /// reload fails): connections drop and round-robin starts at the first server. Needs the
    /// top-level `ingress`.
    #[serde(default)]
    pub restart_ingress: Option<IngressReplicaSpec>,
    /// Degrade or cut the network between two zones (or one zone and all others), or end
    /// that: added delay with jitter and loss, a partition, or `clear`. Symmetric: traffic in
    /// both directions between the zones is affected.
    #[serde(default)]
    pub zone_network: Option<ZoneNetworkSpec>,
}

/// `zoneNetwork`: between `from` and `to`, exactly one of a degradation (`delay`, with
/// optional `jitter` and `loss`; or `loss` alone), `partition: true`, or `clear: true`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ZoneNetworkSpec {
    /// One end: a cluster zone.
    pub from: ZoneName,
    /// The other end: another cluster zone, or `all` (every zone but `from`).
    pub to: ZoneName,
    /// Added to every packet between the zones, each way (a request's round trip gains twice
    /// this), as `tc netem delay` on both ends does.
    #[serde(default)]
    pub delay: Option<DurationText>,
    /// Each packet's delay varies uniformly by up to this much either side of `delay`; at most
    /// `delay`.
    #[serde(default)]
    pub jitter: Option<DurationText>,
    /// The share of packets lost each way, in [0, 1): TCP retransmits them, so a loss costs
    /// the affected segment a retransmission timeout (200 ms, Linux's minimum).
    #[serde(default)]
    pub loss: Option<f64>,
    /// `true`: nothing passes between the zones. New connections time out (their SYNs are
    /// dropped); established ones stall until the caller's timeout. Not a refusal.
    #[serde(default)]
    pub partition: Option<bool>,
    /// `true`: end the faults active between these zones.
    #[serde(default)]
    pub clear: Option<bool>,
}

/// `reloadIngress` / `restartIngress`: every replica, or one.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IngressReplicaSpec {
    /// The replica's index (`0` is `ingress-0`), below `ingress.replicas`. Omit it for every
    /// replica.
    #[serde(default)]
    pub replica: Option<u32>,
}

/// `setNodeReady`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SetNodeReadySpec {
    /// The node; it must exist at that point of the timeline.
    pub node: NodeName,
    /// The new Ready condition.
    pub ready: bool,
}

/// `addNode`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AddNodeSpec {
    /// The zone to add the node to; must be one of `cluster.zones`.
    pub zone: ZoneName,
    /// The new node's name; no node of that name may exist at that point.
    pub name: NodeName,
    /// The new node's allocatable CPU.
    pub allocatable_cpu: CpuText,
    /// Whether the new node is Ready.
    #[serde(default = "super::yes")]
    pub ready: bool,
}

/// A reference to one node (`removeNode`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeRefSpec {
    /// The node; it must exist at that point of the timeline.
    pub node: NodeName,
}

/// `relabelNode`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RelabelNodeSpec {
    /// The node; it must exist at that point of the timeline.
    pub node: NodeName,
    /// The node's new zone; must be one of `cluster.zones`.
    pub zone: ZoneName,
}

/// `setAllocatableCpu`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SetAllocatableCpuSpec {
    /// The node; it must exist at that point of the timeline.
    pub node: NodeName,
    /// The node's new allocatable CPU.
    pub allocatable_cpu: CpuText,
}

/// `scale`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScaleSpec {
    /// The new number of replicas (`0` stops every pod).
    pub replicas: u32,
}

/// `killPod`: name the pod (`pod`), or let the harness pick one of the pods running at that
/// moment (`pick`, `zone`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KillPodSpec {
    /// The pod: its index (`3`) or name (`"pod-3"`); it must exist at that point. Pods get new
    /// names when they are replaced, so after a rollout, a `removeNode` of a node with pods, a
    /// scale-down, or with an autoscaler, use `pick` instead.
    #[serde(default)]
    pub pod: Option<PodRefText>,
    /// Without `pod`: kill the `oldest` (the default) or the `newest` of the pods running then.
    #[serde(default)]
    pub pick: Option<PodPick>,
    /// Without `pod`: pick among the pods running in this zone only.
    #[serde(default)]
    pub zone: Option<ZoneName>,
}

/// Which running pod `killPod` picks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum PodPick {
    /// The pod created first (of pods created together, the lowest index).
    Oldest,
    /// The pod created last (of pods created together, the highest index).
    Newest,
}

/// `rollout`: exactly one of `restart` or `set`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RolloutActionSpec {
    /// `true`: `kubectl rollout restart`, a new revision with the same settings.
    #[serde(default)]
    pub restart: Option<bool>,
    /// A new revision with these settings changed (at least one); the others stay as they are.
    #[serde(default)]
    pub set: Option<RolloutSetSpec>,
}

/// The settings a new revision changes.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RolloutSetSpec {
    /// The new `service.app.drainDelay`.
    #[serde(default)]
    pub drain_delay: Option<DurationText>,
    /// The new `service.termination.preStop` hook, or `null` to remove it.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "PreStopChangeSpec")]
    pub pre_stop: Option<PreStopChangeSpec>,
    /// The new `service.termination.gracePeriod`.
    #[serde(default)]
    pub grace_period: Option<DurationText>,
}

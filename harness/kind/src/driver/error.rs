//! Why the kind target failed, one variant per cause, each saying what to do.

use std::path::PathBuf;
use std::time::Duration;

use crate::api::ApiError;
use crate::cluster::PlanError;
use crate::lifecycle::LifecycleError;
use crate::manifests::ManifestError;
use crate::pinned::ThirdPartyError;
use crate::tools::ToolError;

#[derive(Debug, thiserror::Error)]
pub enum KindError {
    #[error(transparent)]
    Tools(#[from] ToolError),
    #[error("no kind cluster for this scenario: {0}")]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error(transparent)]
    Lifecycle(#[from] LifecycleError),
    #[error(transparent)]
    Api(#[from] ApiError),
    #[error(transparent)]
    ThirdParty(#[from] ThirdPartyError),
    #[error(
        "cannot read the image list {path}: {reason}; run `make images` (or `harness images`) first"
    )]
    Images { path: PathBuf, reason: String },
    #[error("cannot use kubeconfig context `{context}`: {reason}")]
    Kubeconfig { context: String, reason: String },
    #[error(
        "kind cluster `{0}` exists already; reuse it with --cluster {0}, or delete it (`kind delete cluster --name {0}`)"
    )]
    ClusterExists(String),
    #[error(
        "kind cluster `{0}` does not exist (`kind get clusters`); drop --cluster to let the run create it"
    )]
    ClusterMissing(String),
    #[error(
        "{ready} of {total} pods of the Deployment were ready after {}s; not ready: {}",
        waited.as_secs(),
        pods.join("; ")
    )]
    NotReady {
        ready: u32,
        total: u32,
        waited: Duration,
        pods: Vec<String>,
    },
    #[error("the Service has no ClusterIP yet")]
    NoClusterIp,
    #[error("the scenario's node `{0}` has no kind node in the cluster plan")]
    NoNode(String),
    #[error(
        "no service pod has index {index} (pods are numbered in creation order; {count} were created so far)"
    )]
    NoPodIndex { index: u32, count: usize },
    #[error("no running service pod{}", zone.as_ref().map(|z| format!(" in zone {z}")).unwrap_or_default())]
    NoPodToPick { zone: Option<String> },
    #[error(
        "{0} would change Nodes of an existing cluster; pass --may-touch-nodes if that cluster is yours to change"
    )]
    NodesUntouchable(String),
    #[error("{0} is not supported on the kind target")]
    Unsupported(String),
    #[error("generator `{generator}`: {reason}")]
    Generator { generator: String, reason: String },
    #[error(
        "the load balancer's accounting from pod {pod} (GET /stats through the pod proxy) is not its JSON: {reason}"
    )]
    LbStats { pod: String, reason: String },
    #[error(
        "the load balancer's pod was not ready after {}s: {}; see `kubectl -n NAMESPACE logs deploy/loadbalancer`",
        waited.as_secs(),
        pods.join("; ")
    )]
    LbNotReady { waited: Duration, pods: Vec<String> },
    #[error(
        "{ready} of {total} ingress controller pods (StatefulSet haproxy-ingress) were ready after {}s; not ready: {}; see `kubectl -n NAMESPACE logs statefulset/haproxy-ingress`",
        waited.as_secs(),
        pods.join("; ")
    )]
    IngressNotReady {
        ready: u32,
        total: u32,
        waited: Duration,
        pods: Vec<String>,
    },
    #[error("no ingress replica {replica}: the scenario runs {count} (0 to {})", count.saturating_sub(1))]
    NoIngressReplica { replica: u32, count: u32 },
    #[error(
        "zoneNetwork needs the `prio` and `netem` qdiscs of the Docker host's kernel (kind nodes share it), and it has not got them: load them on the host (`modprobe sch_prio sch_netem`) or use a kernel built with CONFIG_NET_SCH_PRIO and CONFIG_NET_SCH_NETEM"
    )]
    NoNetem(#[source] LifecycleError),
    #[error("the kind target was used before deploy")]
    NotDeployed,
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

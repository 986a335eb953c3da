//! How the kind target is asked to run: which cluster (create one, reuse one the harness
//! created, or an existing cluster by context), the kubeconfig, the host's CPUs, the image list,
//! and the context rule: the harness talks only to `kind-harness-*` contexts unless
//! `--allow-existing-cluster` says otherwise; for a cluster it creates, the node image and the
//! name's suffix ([`CreateOptions`]).

use std::path::PathBuf;

use crate::cluster::{ClusterPlan, PlanError, names};
use crate::exec::Toolbox;
use crate::node_image::NodeImage;

/// Which cluster a run uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClusterMode {
    /// Create `harness-<scenario>`; delete it at the end (unless `--keep`).
    Create,
    /// Reuse this cluster, created by the harness earlier (`--cluster NAME`); never deleted.
    Reuse(String),
    /// An existing cluster reached through this kubeconfig context
    /// (`--allow-existing-cluster`): never created or deleted; only the run's namespace is.
    Existing { context: String },
}

/// The kind target's settings.
#[derive(Debug, Clone)]
pub struct KindOptions {
    pub mode: ClusterMode,
    /// `--kubeconfig`: where kind writes the context and the harness reads it (kube-rs'
    /// default, `$KUBECONFIG` or `~/.kube/config`, when `None`).
    pub kubeconfig: Option<PathBuf>,
    /// The host's CPUs as kind nodes report them (`--host-cpus`).
    pub host_cpus: u32,
    /// `target/harness-images.json` (written by `make images`).
    pub images: PathBuf,
    /// Runs `kind` and `docker`.
    pub tools: Toolbox,
    /// With an existing cluster: the scenario may relabel its Nodes (`--may-touch-nodes`); the
    /// other node actions need kind's node containers. Not read for clusters the harness made.
    pub may_touch_nodes: bool,
    /// With an existing cluster: ask the API server about every permission the run needs
    /// before anything is created (`--check-access`, [`crate::access`]).
    pub check_access: bool,
}

/// How a cluster the harness creates is made ([`ClusterMode::Create`] only): the node image
/// (`--node-image`, a `kind.nodeImage` matrix cell) and a suffix of the cluster's name, so
/// that the cells of a matrix each get their own cluster (`harness-<scenario>-<suffix>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateOptions {
    pub node_image: NodeImage,
    pub cluster_suffix: Option<String>,
}

impl Default for CreateOptions {
    fn default() -> Self {
        CreateOptions {
            node_image: NodeImage::pinned(),
            cluster_suffix: None,
        }
    }
}

impl CreateOptions {
    /// `plan` as this cluster is created: renamed with the suffix (kind names the nodes after
    /// the cluster) and with the chosen node image on every node.
    pub fn apply(&self, plan: &ClusterPlan) -> Result<ClusterPlan, PlanError> {
        let mut out = match &self.cluster_suffix {
            Some(suffix) => plan.renamed(&format!("{}-{suffix}", plan.cluster_name))?,
            None => plan.clone(),
        };
        out.node_image = self.node_image.reference().to_owned();
        Ok(out)
    }
}

/// A context the harness must not use without the flag that allows it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContextError {
    #[error(
        "--context {context}: the kind target only talks to clusters it created (contexts named `kind-{prefix}*`); to run in this existing cluster (only the run's namespace is created and deleted, never the cluster), add --allow-existing-cluster",
        prefix = names::CLUSTER_PREFIX
    )]
    NotHarness { context: String },
    #[error(
        "--cluster {cluster}: the harness only reuses clusters it created (named `{prefix}*`); for another cluster use --context NAME --allow-existing-cluster",
        prefix = names::CLUSTER_PREFIX
    )]
    NotHarnessCluster { cluster: String },
    #[error(
        "--allow-existing-cluster needs --context NAME: the kubeconfig context of the cluster to run in"
    )]
    ExistingWithoutContext,
    #[error(
        "--cluster and --allow-existing-cluster exclude each other: --cluster reuses a kind cluster the harness created, --allow-existing-cluster runs in any cluster by --context"
    )]
    ClusterAndExisting,
}

/// The cluster mode for the CLI's flags, refusing contexts and clusters that are not the
/// harness's unless `allow_existing`.
pub fn choose_mode(
    cluster: Option<&str>,
    context: Option<&str>,
    allow_existing: bool,
) -> Result<ClusterMode, ContextError> {
    if allow_existing {
        if cluster.is_some() {
            return Err(ContextError::ClusterAndExisting);
        }
        return match context {
            Some(context) => Ok(ClusterMode::Existing {
                context: context.to_owned(),
            }),
            None => Err(ContextError::ExistingWithoutContext),
        };
    }
    if let Some(context) = context {
        let cluster_of_context = context.strip_prefix("kind-").unwrap_or("");
        if !is_harness_cluster(cluster_of_context) {
            return Err(ContextError::NotHarness {
                context: context.to_owned(),
            });
        }
        if let Some(cluster) = cluster.filter(|c| *c != cluster_of_context) {
            return Err(ContextError::NotHarness {
                context: format!("{context} (with --cluster {cluster})"),
            });
        }
        return Ok(ClusterMode::Reuse(cluster_of_context.to_owned()));
    }
    match cluster {
        Some(cluster) if is_harness_cluster(cluster) => Ok(ClusterMode::Reuse(cluster.to_owned())),
        Some(cluster) => Err(ContextError::NotHarnessCluster {
            cluster: cluster.to_owned(),
        }),
        None => Ok(ClusterMode::Create),
    }
}

pub fn is_harness_cluster(name: &str) -> bool {
    name.len() > names::CLUSTER_PREFIX.len() && name.starts_with(names::CLUSTER_PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_created_cluster_takes_the_suffix_and_the_image_on_every_node() {
        let scenario = harness_core::scenario::load_scenario(
            std::path::Path::new(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../scenarios/topology-skew.yaml"
            )),
            None,
        )
        .unwrap();
        let plan = ClusterPlan::new(&scenario, 8).unwrap();
        assert_eq!(CreateOptions::default().apply(&plan).unwrap(), plan);
        let create = CreateOptions {
            node_image: NodeImage::parse("kindest/node:v1.33.1").unwrap(),
            cluster_suffix: Some("m2-v1-33-1".into()),
        };
        let made = create.apply(&plan).unwrap();
        assert_eq!(made.cluster_name, "harness-topology-skew-m2-v1-33-1");
        assert_eq!(made.node_image, "kindest/node:v1.33.1");
        assert_eq!(
            made.nodes[0].kind_name,
            "harness-topology-skew-m2-v1-33-1-control-plane"
        );
        assert!(made.nodes[1..].iter().all(|n| {
            n.kind_name
                .starts_with("harness-topology-skew-m2-v1-33-1-worker")
        }));
        let long = CreateOptions {
            cluster_suffix: Some("x".repeat(40)),
            ..CreateOptions::default()
        };
        assert!(matches!(
            long.apply(&plan),
            Err(PlanError::ClusterName(
                names::ClusterNameError::TooLong { .. }
            ))
        ));
    }

    #[test]
    fn only_harness_contexts_without_the_flag() {
        assert_eq!(choose_mode(None, None, false), Ok(ClusterMode::Create));
        assert_eq!(
            choose_mode(None, Some("kind-harness-topology-skew"), false),
            Ok(ClusterMode::Reuse("harness-topology-skew".into()))
        );
        assert_eq!(
            choose_mode(Some("harness-x"), None, false),
            Ok(ClusterMode::Reuse("harness-x".into()))
        );
        for context in ["prod-eks", "kind-kind", "kind-harness-", "harness-x"] {
            let err = choose_mode(None, Some(context), false).unwrap_err();
            assert!(
                err.to_string().contains(context)
                    && err.to_string().contains("--allow-existing-cluster"),
                "{err}"
            );
        }
        assert!(matches!(
            choose_mode(Some("kind"), None, false),
            Err(ContextError::NotHarnessCluster { .. })
        ));
        assert_eq!(
            choose_mode(None, Some("prod-eks"), true),
            Ok(ClusterMode::Existing {
                context: "prod-eks".into()
            })
        );
        assert_eq!(
            choose_mode(None, None, true),
            Err(ContextError::ExistingWithoutContext)
        );
        assert_eq!(
            choose_mode(Some("harness-x"), Some("c"), true),
            Err(ContextError::ClusterAndExisting)
        );
    }
}

//! The kind cluster lifecycle as commands: create, list, load images, stop and start a node's
//! kubelet, delete. Each is a pure function returning the [`Cmd`] (tested for its exact
//! arguments), and [`Cluster`] runs them through a [`Toolbox`]. The harness only ever creates,
//! touches or deletes clusters named `harness-*` ([`names::CLUSTER_PREFIX`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::cluster::names;
use crate::exec::{Cmd, ExecError, Toolbox};

/// `kind create cluster` may pull the node image and boots every node: minutes.
pub const CREATE_TIMEOUT: Duration = Duration::from_secs(15 * 60);
/// `kind load docker-image` copies each image into every node.
pub const LOAD_TIMEOUT: Duration = Duration::from_secs(10 * 60);
/// `docker exec NODE systemctl ...` and other short commands.
pub const SHORT_TIMEOUT: Duration = Duration::from_secs(60);

/// Why a cluster command was not run or failed.
#[derive(Debug, thiserror::Error)]
pub enum LifecycleError {
    #[error(
        "refusing to touch kind cluster `{0}`: the harness only manages clusters named `{prefix}*` that it created",
        prefix = names::CLUSTER_PREFIX
    )]
    NotOurs(String),
    #[error(transparent)]
    Exec(#[from] ExecError),
}

fn ours(cluster: &str) -> Result<(), LifecycleError> {
    if cluster.starts_with(names::CLUSTER_PREFIX) && cluster.len() > names::CLUSTER_PREFIX.len() {
        Ok(())
    } else {
        Err(LifecycleError::NotOurs(cluster.to_owned()))
    }
}

/// `kind create cluster --name NAME --config PATH --image IMAGE [--kubeconfig PATH]`.
pub fn create_cluster(
    cluster: &str,
    config: &Path,
    image: &str,
    kubeconfig: Option<&Path>,
) -> Result<Cmd, LifecycleError> {
    ours(cluster)?;
    let mut cmd = Cmd::new("kind").args([
        "create",
        "cluster",
        "--name",
        cluster,
        "--config",
        &config.display().to_string(),
        "--image",
        image,
    ]);
    if let Some(path) = kubeconfig {
        cmd = cmd.args(["--kubeconfig", &path.display().to_string()]);
    }
    Ok(cmd.timeout(CREATE_TIMEOUT))
}

/// `kind get clusters`: one name per line.
pub fn get_clusters() -> Cmd {
    Cmd::new("kind")
        .args(["get", "clusters"])
        .timeout(SHORT_TIMEOUT)
}

/// The cluster names in `kind get clusters` output (which says "No kind clusters found." on
/// stderr when there are none).
pub fn parse_clusters(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// `kind load docker-image IMAGE... --name NAME`.
pub fn load_images(cluster: &str, images: &[String]) -> Result<Cmd, LifecycleError> {
    ours(cluster)?;
    Ok(Cmd::new("kind")
        .args(["load", "docker-image"])
        .args(images.iter().cloned())
        .args(["--name", cluster])
        .timeout(LOAD_TIMEOUT))
}

/// `docker exec NODE systemctl stop kubelet`: the node stops heartbeating (NotReady after the
/// node-monitor grace period) and stops running probes; its pods' containers keep running.
pub fn stop_kubelet(cluster: &str, node: &str) -> Result<Cmd, LifecycleError> {
    node_command(cluster, node, &["systemctl", "stop", "kubelet"])
}

/// `docker exec NODE systemctl start kubelet`: the kubelet registers (again) and reports Ready.
pub fn start_kubelet(cluster: &str, node: &str) -> Result<Cmd, LifecycleError> {
    node_command(cluster, node, &["systemctl", "start", "kubelet"])
}

fn node_command(cluster: &str, node: &str, command: &[&str]) -> Result<Cmd, LifecycleError> {
    ours(cluster)?;
    if !node.starts_with(&format!("{cluster}-")) {
        return Err(LifecycleError::NotOurs(node.to_owned()));
    }
    Ok(Cmd::new("docker")
        .args(["exec", node])
        .args(command.iter().copied())
        .timeout(SHORT_TIMEOUT))
}

/// `kind delete cluster --name NAME [--kubeconfig PATH]`.
pub fn delete_cluster(cluster: &str, kubeconfig: Option<&Path>) -> Result<Cmd, LifecycleError> {
    ours(cluster)?;
    let mut cmd = Cmd::new("kind").args(["delete", "cluster", "--name", cluster]);
    if let Some(path) = kubeconfig {
        cmd = cmd.args(["--kubeconfig", &path.display().to_string()]);
    }
    Ok(cmd.timeout(CREATE_TIMEOUT))
}

/// A kind cluster the harness manages, driven through one [`Toolbox`].
#[derive(Debug, Clone)]
pub struct Cluster {
    name: String,
    kubeconfig: Option<PathBuf>,
    tools: Toolbox,
}

impl Cluster {
    /// A handle on cluster `name` (`harness-*`); `kubeconfig`: where kind writes its context
    /// (kind's default, `$KUBECONFIG` or `~/.kube/config`, when `None`).
    pub fn new(
        name: &str,
        kubeconfig: Option<PathBuf>,
        tools: Toolbox,
    ) -> Result<Self, LifecycleError> {
        ours(name)?;
        Ok(Self {
            name: name.to_owned(),
            kubeconfig,
            tools,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether kind knows a cluster of this name.
    pub fn exists(&self) -> Result<bool, LifecycleError> {
        let out = self.tools.output(&get_clusters())?;
        Ok(parse_clusters(&out.stdout).contains(&self.name))
    }

    /// Creates the cluster from a kind config file.
    pub fn create(&self, config: &Path, image: &str) -> Result<(), LifecycleError> {
        let cmd = create_cluster(&self.name, config, image, self.kubeconfig.as_deref())?;
        self.tools.output(&cmd)?;
        Ok(())
    }

    /// Copies local Docker images into every node.
    pub fn load_images(&self, images: &[String]) -> Result<(), LifecycleError> {
        self.tools.output(&load_images(&self.name, images)?)?;
        Ok(())
    }

    pub fn stop_kubelet(&self, node: &str) -> Result<(), LifecycleError> {
        self.tools.output(&stop_kubelet(&self.name, node)?)?;
        Ok(())
    }

    pub fn start_kubelet(&self, node: &str) -> Result<(), LifecycleError> {
        self.tools.output(&start_kubelet(&self.name, node)?)?;
        Ok(())
    }

    /// Deletes the cluster (kind deletes a missing cluster without error).
    pub fn delete(&self) -> Result<(), LifecycleError> {
        let cmd = delete_cluster(&self.name, self.kubeconfig.as_deref())?;
        self.tools.output(&cmd)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_have_the_exact_arguments() {
        let create = create_cluster(
            "harness-topology-skew",
            Path::new("/run/kind config.yaml"),
            "kindest/node:v1.34.11@sha256:44e2",
            Some(Path::new("/run/kubeconfig")),
        )
        .unwrap();
        assert_eq!(
            create.command_line(),
            "kind create cluster --name harness-topology-skew --config '/run/kind config.yaml' \
             --image kindest/node:v1.34.11@sha256:44e2 --kubeconfig /run/kubeconfig"
        );
        let load = load_images(
            "harness-x",
            &[
                "harness/flagsvc:sha256-1".to_owned(),
                "harness/loadgen:sha256-2".to_owned(),
            ],
        )
        .unwrap();
        assert_eq!(
            load.command_line(),
            "kind load docker-image harness/flagsvc:sha256-1 harness/loadgen:sha256-2 --name harness-x"
        );
        assert_eq!(
            stop_kubelet("harness-x", "harness-x-worker2")
                .unwrap()
                .command_line(),
            "docker exec harness-x-worker2 systemctl stop kubelet"
        );
        assert_eq!(
            start_kubelet("harness-x", "harness-x-worker2")
                .unwrap()
                .command_line(),
            "docker exec harness-x-worker2 systemctl start kubelet"
        );
        assert_eq!(
            delete_cluster("harness-x", None).unwrap().command_line(),
            "kind delete cluster --name harness-x"
        );
    }

    #[test]
    fn only_harness_clusters_and_their_nodes_are_touched() {
        for name in ["kind", "prod", "harness-", "kind-harness-x"] {
            assert!(matches!(
                delete_cluster(name, None),
                Err(LifecycleError::NotOurs(_))
            ));
        }
        assert!(matches!(
            stop_kubelet("harness-x", "other-worker"),
            Err(LifecycleError::NotOurs(_))
        ));
        assert_eq!(
            parse_clusters("harness-a\nkind\n\n"),
            ["harness-a".to_owned(), "kind".to_owned()]
        );
    }
}

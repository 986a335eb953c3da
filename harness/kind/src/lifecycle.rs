//! The kind cluster lifecycle as commands: create, list, load images, stop and start a node's
//! kubelet, `tc` in a node and the nodes' addresses (`zoneNetwork`), delete. Each is a pure function returning the [`Cmd`] (tested for its exact
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

/// Where kubeadm wrote the kubelet's flags in a kind node (`KUBELET_KUBEADM_ARGS`, from the
/// node's `kubeletExtraArgs`; kubeadm `WriteKubeletDynamicEnvFile`).
pub const KUBEADM_FLAGS_ENV: &str = "/var/lib/kubelet/kubeadm-flags.env";

/// `setAllocatableCpu`: rewrites the node kubelet's `--kube-reserved=cpu=...m` (which the
/// harness's kind config always sets on shaped nodes) to `reserved_millicpu` and restarts the
/// kubelet, which then reports the new allocatable CPU. Fails, saying so, when the flag is not
/// in the file (a node the harness did not shape).
pub fn set_kube_reserved_cpu(
    cluster: &str,
    node: &str,
    reserved_millicpu: u64,
) -> Result<Cmd, LifecycleError> {
    let flag = format!("--kube-reserved=cpu={reserved_millicpu}m");
    let script = format!(
        "grep -q -- '--kube-reserved=cpu=' {KUBEADM_FLAGS_ENV} || {{ echo 'no --kube-reserved=cpu= in {KUBEADM_FLAGS_ENV}: not a node the harness shaped' >&2; exit 1; }}; \
         sed -i -E 's/--kube-reserved=cpu=[0-9]+m/{flag}/' {KUBEADM_FLAGS_ENV} && systemctl restart kubelet"
    );
    node_command(cluster, node, &["sh", "-c", &script])
}

/// `relabelNode`, made to last: rewrites the zone in the kubelet's `--node-labels`, which the
/// kubelet puts back on its Node at every start (`updateDefaultLabels` in
/// `pkg/kubelet/kubelet_node_status.go`), so a later restart (`setNodeReady: true`,
/// `setAllocatableCpu`) keeps the new zone. No restart here: the Node itself is patched.
pub fn set_node_label_zone(cluster: &str, node: &str, zone: &str) -> Result<Cmd, LifecycleError> {
    let label = crate::labels::ZONE_LABEL;
    let script = format!(
        "grep -q -- '--node-labels=' {KUBEADM_FLAGS_ENV} || {{ echo 'no --node-labels= in {KUBEADM_FLAGS_ENV}' >&2; exit 1; }}; \
         sed -i -E 's#(--node-labels=[^ \"]*){label}=[^, \"]*#\\1{label}={zone}#' {KUBEADM_FLAGS_ENV}"
    );
    node_command(cluster, node, &["sh", "-c", &script])
}

/// `docker exec NODE tc ARGS...`: one `zoneNetwork` command in a kind node
/// ([`crate::netem`] builds the arguments).
pub fn tc(cluster: &str, node: &str, args: &[String]) -> Result<Cmd, LifecycleError> {
    let mut command = vec!["tc"];
    command.extend(args.iter().map(String::as_str));
    node_command(cluster, node, &command)
}

/// `docker inspect --format '{{.Name}}{{range .NetworkSettings.Networks}} {{.IPAddress}}{{end}}'
/// NODE...`: each node container's addresses on its Docker networks
/// ([`crate::netem::parse_addresses`]).
pub fn node_addresses(cluster: &str, nodes: &[String]) -> Result<Cmd, LifecycleError> {
    ours(cluster)?;
    if let Some(other) = nodes
        .iter()
        .find(|n| !n.starts_with(&format!("{cluster}-")))
    {
        return Err(LifecycleError::NotOurs(other.clone()));
    }
    Ok(Cmd::new("docker")
        .args(["inspect", "--format", crate::netem::INSPECT_FORMAT])
        .args(nodes.iter().cloned())
        .timeout(SHORT_TIMEOUT))
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

    /// See [`set_node_label_zone`].
    pub fn set_node_label_zone(&self, node: &str, zone: &str) -> Result<(), LifecycleError> {
        self.tools
            .output(&set_node_label_zone(&self.name, node, zone)?)?;
        Ok(())
    }

    /// See [`set_kube_reserved_cpu`].
    pub fn set_kube_reserved_cpu(
        &self,
        node: &str,
        reserved_millicpu: u64,
    ) -> Result<(), LifecycleError> {
        self.tools
            .output(&set_kube_reserved_cpu(&self.name, node, reserved_millicpu)?)?;
        Ok(())
    }

    /// Runs `tc ARGS` in `node` (`docker exec`).
    pub fn tc(&self, node: &str, args: &[String]) -> Result<(), LifecycleError> {
        self.tools.output(&tc(&self.name, node, args)?)?;
        Ok(())
    }

    /// `tc qdisc del dev eth0 root` in `node`, where finding nothing to remove (no root qdisc,
    /// no running container: [`crate::netem::already_clean`]) is success: teardown's undoing
    /// of `zoneNetwork`, safe to repeat.
    pub fn tc_clean(&self, node: &str) -> Result<(), LifecycleError> {
        match self
            .tools
            .output(&tc(&self.name, node, &crate::netem::del_root())?)
        {
            Ok(_) => Ok(()),
            Err(ExecError::Failed { stderr, .. }) if crate::netem::already_clean(&stderr) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Each of `nodes`' IPv4 addresses (`docker inspect`).
    pub fn node_addresses(
        &self,
        nodes: &[String],
    ) -> Result<std::collections::BTreeMap<String, Vec<std::net::Ipv4Addr>>, LifecycleError> {
        let out = self.tools.output(&node_addresses(&self.name, nodes)?)?;
        Ok(crate::netem::parse_addresses(&out.stdout))
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
        assert_eq!(
            tc("harness-x", "harness-x-worker2", &crate::netem::del_root())
                .unwrap()
                .command_line(),
            "docker exec harness-x-worker2 tc qdisc del dev eth0 root"
        );
        assert_eq!(
            node_addresses(
                "harness-x",
                &[
                    "harness-x-worker".to_owned(),
                    "harness-x-worker2".to_owned()
                ]
            )
            .unwrap()
            .command_line(),
            "docker inspect --format '{{.Name}}{{range .NetworkSettings.Networks}} {{.IPAddress}}{{end}}' harness-x-worker harness-x-worker2"
        );
        let reserve = set_kube_reserved_cpu("harness-x", "harness-x-worker", 2500).unwrap();
        let args = reserve.get_args();
        assert_eq!(&args[..4], ["exec", "harness-x-worker", "sh", "-c"]);
        assert!(
            args[4].contains(
                "sed -i -E 's/--kube-reserved=cpu=[0-9]+m/--kube-reserved=cpu=2500m/' /var/lib/kubelet/kubeadm-flags.env && systemctl restart kubelet"
            ),
            "{}",
            args[4]
        );
    }

    /// The script really rewrites a kubeadm-flags.env as kubeadm writes it (with `systemctl`
    /// replaced by `true`), and refuses a file without the flag.
    #[test]
    fn the_reservation_script_rewrites_the_flag() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("kubeadm-flags.env");
        std::fs::write(
            &file,
            "KUBELET_KUBEADM_ARGS=\"--container-runtime-endpoint=unix:///run/containerd/containerd.sock --kube-reserved=cpu=4000m --node-ip=172.18.0.3 --node-labels=topology.kubernetes.io/zone=a\"\n",
        )
        .unwrap();
        let cmd = set_kube_reserved_cpu("harness-x", "harness-x-worker", 6000).unwrap();
        let script = cmd.get_args()[4]
            .replace(KUBEADM_FLAGS_ENV, &file.display().to_string())
            .replace("systemctl restart kubelet", "true");
        let tools = Toolbox::new();
        tools.output(&Cmd::new("sh").args(["-c", &script])).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text.contains(" --kube-reserved=cpu=6000m --node-ip"),
            "{text}"
        );
        assert!(!text.contains("4000m"));
        std::fs::write(&file, "KUBELET_KUBEADM_ARGS=\"--node-ip=172.18.0.3\"\n").unwrap();
        let err = tools
            .output(&Cmd::new("sh").args(["-c", &script]))
            .unwrap_err();
        assert!(
            err.to_string().contains("not a node the harness shaped"),
            "{err}"
        );
    }

    #[test]
    fn the_zone_script_rewrites_the_node_label_only() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("kubeadm-flags.env");
        std::fs::write(
            &file,
            "KUBELET_KUBEADM_ARGS=\"--kube-reserved=cpu=4000m --node-labels=harness/node=a-1,topology.kubernetes.io/zone=ap-northeast-2a --provider-id=kind://docker/x/y\"\n",
        )
        .unwrap();
        let cmd = set_node_label_zone("harness-x", "harness-x-worker", "ap-northeast-2c").unwrap();
        assert_eq!(
            &cmd.get_args()[..4],
            ["exec", "harness-x-worker", "sh", "-c"]
        );
        let script = cmd.get_args()[4].replace(KUBEADM_FLAGS_ENV, &file.display().to_string());
        Toolbox::new()
            .output(&Cmd::new("sh").args(["-c", &script]))
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "KUBELET_KUBEADM_ARGS=\"--kube-reserved=cpu=4000m --node-labels=harness/node=a-1,topology.kubernetes.io/zone=ap-northeast-2c --provider-id=kind://docker/x/y\"\n"
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
        assert!(matches!(
            tc("harness-x", "other-worker", &crate::netem::del_root()),
            Err(LifecycleError::NotOurs(_))
        ));
        assert!(matches!(
            node_addresses("harness-x", &["other-worker".to_owned()]),
            Err(LifecycleError::NotOurs(_))
        ));
        assert_eq!(
            parse_clusters("harness-a\nkind\n\n"),
            ["harness-a".to_owned(), "kind".to_owned()]
        );
    }
}

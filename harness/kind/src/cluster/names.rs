//! Names kind gives: the cluster (`harness-<scenario>`), its kubeconfig context
//! (`kind-<cluster>`, kind `pkg/cluster/internal/kubeconfig`, `KINDClusterKey`) and its node
//! containers, which are also the Kubernetes Node names: `<cluster>-<role>` for the first node of
//! a role and `<cluster>-<role>N` (N = 2, 3, ...) for the next, in config order (kind
//! `pkg/cluster/internal/providers/common/namer.go`, cases from its `namer_test.go`).

/// The prefix of every cluster the harness creates.
pub const CLUSTER_PREFIX: &str = "harness-";

/// Linux limits host names (and so kind node names) to 64 bytes; kind sets each node container's
/// hostname to its name.
const MAX_NODE_NAME: usize = 63;

/// The cluster name for a scenario.
pub fn cluster_name(scenario: &str) -> String {
    format!("{CLUSTER_PREFIX}{scenario}")
}

/// The kubeconfig context kind writes for a cluster.
pub fn context_name(cluster: &str) -> String {
    format!("kind-{cluster}")
}

/// Why a name cannot be a kind cluster name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClusterNameError {
    #[error(
        "`{0}` is not a valid kind cluster name: kind cluster names must match `^[a-z0-9.-]+$`"
    )]
    Characters(String),
    #[error(
        "kind cluster name `{name}` is too long: its node `{longest}` has {len} characters, more than the {MAX_NODE_NAME} a host name may have; use a shorter scenario name"
    )]
    TooLong {
        name: String,
        longest: String,
        len: usize,
    },
}

/// Checks a cluster name as kind does (`validNameRE`, kind
/// `pkg/internal/apis/config/validate.go`) and that its longest node name fits a host name.
pub fn check_cluster_name(name: &str, longest_node: &str) -> Result<(), ClusterNameError> {
    let valid = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-');
    if !valid {
        return Err(ClusterNameError::Characters(name.to_owned()));
    }
    if longest_node.len() > MAX_NODE_NAME {
        return Err(ClusterNameError::TooLong {
            name: name.to_owned(),
            longest: longest_node.to_owned(),
            len: longest_node.len(),
        });
    }
    Ok(())
}

/// Hands out kind node names in config order (upstream `MakeNodeNamer`).
#[derive(Debug)]
pub struct NodeNamer {
    cluster: String,
    counts: Vec<(String, usize)>,
}

impl NodeNamer {
    pub fn new(cluster: &str) -> Self {
        Self {
            cluster: cluster.to_owned(),
            counts: Vec::new(),
        }
    }

    /// The name of the next node with `role` (`control-plane`, `worker`).
    pub fn next(&mut self, role: &str) -> String {
        let count = match self.counts.iter_mut().find(|(r, _)| r == role) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                self.counts.push((role.to_owned(), 1));
                1
            }
        };
        if count == 1 {
            format!("{}-{role}", self.cluster)
        } else {
            format!("{}-{role}{count}", self.cluster)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(cluster: &str, roles: &[&str]) -> Vec<String> {
        let mut namer = NodeNamer::new(cluster);
        roles.iter().map(|r| namer.next(r)).collect()
    }

    // The cases of kind's namer_test.go.
    #[test]
    fn node_names_follow_kinds_namer() {
        assert_eq!(names("kind", &["control-plane"]), ["kind-control-plane"]);
        assert_eq!(
            names("kind-test", &["control-plane", "worker", "worker"]),
            [
                "kind-test-control-plane",
                "kind-test-worker",
                "kind-test-worker2"
            ]
        );
        assert_eq!(
            names(
                "ab1",
                &[
                    "control-plane",
                    "control-plane",
                    "control-plane",
                    "external-load-balancer",
                    "worker",
                    "worker",
                    "worker"
                ]
            ),
            [
                "ab1-control-plane",
                "ab1-control-plane2",
                "ab1-control-plane3",
                "ab1-external-load-balancer",
                "ab1-worker",
                "ab1-worker2",
                "ab1-worker3"
            ]
        );
    }

    #[test]
    fn cluster_names_are_checked() {
        assert_eq!(
            check_cluster_name("harness-topology-skew", "harness-topology-skew-worker5"),
            Ok(())
        );
        assert!(matches!(
            check_cluster_name("Harness_X", "x"),
            Err(ClusterNameError::Characters(_))
        ));
        let long = "harness-".to_owned() + &"a".repeat(50);
        let node = format!("{long}-control-plane");
        assert!(matches!(
            check_cluster_name(&long, &node),
            Err(ClusterNameError::TooLong { .. })
        ));
        assert_eq!(context_name("harness-x"), "kind-harness-x");
    }
}

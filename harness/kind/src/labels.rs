//! Node labels a kubelet may set on itself. kind passes a node's `labels` to the kubelet as
//! `--node-labels` (the `node-labels` kubelet extra argument of its kubeadm config,
//! kind `pkg/cluster/internal/kubeadm/config.go`), and the kubelet refuses to start when one of
//! them is in the `kubernetes.io` or `k8s.io` namespace without being on its allowed list
//! (`ValidateKubeletFlags`, kubernetes `cmd/kubelet/app/options/options.go`; the list is
//! `staging/src/k8s.io/kubelet/pkg/apis/well_known_labels.go`, `IsKubeletLabel`). So
//! `topology.kubernetes.io/zone` may be self-set and `node-role.kubernetes.io/worker` may not.
//! Also checked: the key is a qualified name and the value a valid label value
//! (apimachinery `IsQualifiedName`, `IsValidLabelValue`).

/// Label keys the kubelet may set on its own Node (upstream `kubeletLabels`).
const KUBELET_LABELS: &[&str] = &[
    "kubernetes.io/hostname",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "beta.kubernetes.io/instance-type",
    "node.kubernetes.io/instance-type",
    "kubernetes.io/os",
    "kubernetes.io/arch",
    "beta.kubernetes.io/os",
    "beta.kubernetes.io/arch",
];

/// Label namespaces (and their subdomains) the kubelet may set (upstream
/// `kubeletLabelNamespaces`).
const KUBELET_LABEL_NAMESPACES: &[&str] = &["kubelet.kubernetes.io", "node.kubernetes.io"];

/// The zone label the EndpointSlice controller and kube-proxy read.
pub const ZONE_LABEL: &str = "topology.kubernetes.io/zone";

/// The label naming the scenario node a kind node stands for (`a-1`), so the Node can be found
/// by its scenario name whatever kind named the container.
pub const SCENARIO_NODE_LABEL: &str = "harness/node";

/// The label on nodes provisioned for a timeline `addNode` (value `"true"`).
pub const SPARE_NODE_LABEL: &str = "harness/spare";

/// Why a label cannot be given to a kind node.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LabelError {
    #[error(
        "label `{0}` is in the kubernetes.io/k8s.io namespace and not one a kubelet may set on itself \
         (allowed: the {ns} prefixes and {list}); the kubelet would refuse to start",
        ns = KUBELET_LABEL_NAMESPACES.join(", "),
        list = KUBELET_LABELS.join(", ")
    )]
    NotSelfSettable(String),
    #[error(
        "label key `{0}` is not a qualified name (an optional DNS-subdomain prefix and '/', then up to 63 of [A-Za-z0-9-_.], starting and ending alphanumeric)"
    )]
    BadKey(String),
    #[error(
        "label `{key}`: value `{value}` is not a label value (up to 63 of [A-Za-z0-9-_.], starting and ending alphanumeric)"
    )]
    BadValue { key: String, value: String },
}

/// Checks that a kubelet started with `--node-labels key=value` accepts this label.
pub fn check_self_label(key: &str, value: &str) -> Result<(), LabelError> {
    if !is_qualified_name(key) {
        return Err(LabelError::BadKey(key.to_owned()));
    }
    if !is_label_value(value) {
        return Err(LabelError::BadValue {
            key: key.to_owned(),
            value: value.to_owned(),
        });
    }
    if is_kubernetes_label(key) && !is_kubelet_label(key) {
        return Err(LabelError::NotSelfSettable(key.to_owned()));
    }
    Ok(())
}

/// Upstream `IsKubeletLabel`.
pub fn is_kubelet_label(key: &str) -> bool {
    if KUBELET_LABELS.contains(&key) {
        return true;
    }
    let namespace = label_namespace(key);
    KUBELET_LABEL_NAMESPACES
        .iter()
        .any(|allowed| namespace == *allowed || namespace.ends_with(&format!(".{allowed}")))
}

/// Upstream `isKubernetesLabel` (cmd/kubelet/app/options/options.go).
fn is_kubernetes_label(key: &str) -> bool {
    let namespace = label_namespace(key);
    ["kubernetes.io", "k8s.io"]
        .iter()
        .any(|domain| namespace == *domain || namespace.ends_with(&format!(".{domain}")))
}

fn label_namespace(key: &str) -> &str {
    key.split_once('/').map_or("", |(prefix, _)| prefix)
}

fn is_qualified_name(key: &str) -> bool {
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    let prefix_ok = prefix.is_none_or(|p| !p.is_empty() && p.len() <= 253 && is_dns_subdomain(p));
    prefix_ok && !name.is_empty() && is_label_value(name)
}

/// `(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?`, at most 63 characters.
fn is_label_value(value: &str) -> bool {
    let bytes = value.as_bytes();
    if value.is_empty() {
        return true;
    }
    value.len() <= 63
        && bytes[0].is_ascii_alphanumeric()
        && bytes[bytes.len() - 1].is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

fn is_dns_subdomain(s: &str) -> bool {
    s.split('.').all(|label| {
        let b = label.as_bytes();
        !b.is_empty()
            && b.len() <= 63
            && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
            && (b[b.len() - 1].is_ascii_lowercase() || b[b.len() - 1].is_ascii_digit())
            && b.iter()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zone_and_allowed_namespaces_may_be_self_set() {
        assert_eq!(check_self_label(ZONE_LABEL, "ap-northeast-2a"), Ok(()));
        assert_eq!(check_self_label("kubelet.kubernetes.io/x", "1"), Ok(()));
        assert_eq!(check_self_label("foo.node.kubernetes.io/pool", "a"), Ok(()));
        assert_eq!(check_self_label(SCENARIO_NODE_LABEL, "a-1"), Ok(()));
        assert_eq!(check_self_label("example.com/team", "x"), Ok(()));
    }

    #[test]
    fn node_role_and_other_kubernetes_labels_are_refused() {
        // The kubelet's own example of a refused label (upstream options.go error message).
        for key in [
            "node-role.kubernetes.io/worker",
            "node-role.kubernetes.io/control-plane",
            "app.kubernetes.io/name",
            "k8s.io/x",
            "node-restriction.kubernetes.io/x",
        ] {
            assert!(
                matches!(
                    check_self_label(key, ""),
                    Err(LabelError::NotSelfSettable(_))
                ),
                "{key}"
            );
        }
    }

    #[test]
    fn syntax_is_checked() {
        assert!(matches!(
            check_self_label("a/b/c", "x"),
            Err(LabelError::BadKey(_))
        ));
        assert!(matches!(
            check_self_label("harness/node", &"x".repeat(64)),
            Err(LabelError::BadValue { .. })
        ));
        assert!(matches!(
            check_self_label("harness/node", "-a"),
            Err(LabelError::BadValue { .. })
        ));
    }
}

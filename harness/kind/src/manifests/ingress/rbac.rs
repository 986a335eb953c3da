//! The controller's ServiceAccount and RBAC, after the haproxy-ingress chart
//! (haproxy-ingress/charts `haproxy-ingress/templates/clusterrole.yaml` and `role.yaml`):
//! - ClusterRole: EndpointSlices list/watch; ConfigMaps, Endpoints, Nodes, Secrets list/watch;
//!   Namespaces and Nodes get, Namespaces also list/watch (chart PR #101, "add list and watch
//!   permission to namespace and node apis", v0.16.0-beta.2); Pods and Services
//!   get/list/watch; Ingresses and IngressClasses get/list/watch; Events create/patch;
//!   `ingresses/status` update. The chart's Gateway API rule is left out: the controller runs
//!   with `--watch-gateway=false` and never reads those resources. So is the v0.16 chart's
//!   ReplicaSets/DaemonSets read (PR #94): the controller reads its pod's owner only when it is
//!   a ReplicaSet or a DaemonSet (`pkg/controller/config/config.go`,
//!   `getControllerPodSelector`), and these pods' owner is a StatefulSet. IngressClasses, Nodes
//!   and Namespaces are cluster-scoped, so the grant is a ClusterRole even though the
//!   controller watches one namespace (`--watch-namespace`). Its name and its binding's carry
//!   the namespace, so two runs in a cluster cannot clash.
//! - Role in the run's namespace: Leases get/create/update; Pods, Secrets, Namespaces get;
//!   ConfigMaps and Endpoints get/create/update (leader election and status; with
//!   `--update-status=false` there is no election, the grant is the chart's as is).
//!
//! What was read: the chart copies `036b776d…` (`clusterrole.yaml`) and `3fef028b…`
//! (`role.yaml`) in the index, older than v0.16, which have every rule above except the
//! EndpointSlices, Namespaces list/watch and Leases ones; those three follow the CHANGELOG's
//! chart notes and v0.16's code (EndpointSlices are the only endpoint API v0.16 reads,
//! CHANGELOG-v0.16 "v0.16.0-alpha.1") and are not checked against the v0.16 chart itself.

use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};

use super::{CONTROLLER, IngressPlan, meta};

/// The controller's RBAC objects, in apply order.
pub struct RbacObjects {
    pub service_account: ServiceAccount,
    pub cluster_role: ClusterRole,
    pub cluster_role_binding: ClusterRoleBinding,
    pub role: Role,
    pub role_binding: RoleBinding,
}

fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> PolicyRule {
    let strings = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    PolicyRule {
        api_groups: Some(strings(groups)),
        resources: Some(strings(resources)),
        verbs: strings(verbs),
        ..Default::default()
    }
}

/// The ClusterRole's rules.
pub fn cluster_rules() -> Vec<PolicyRule> {
    let read = ["get", "list", "watch"];
    vec![
        rule(
            &["discovery.k8s.io"],
            &["endpointslices"],
            &["list", "watch"],
        ),
        rule(
            &[""],
            &["configmaps", "endpoints", "nodes", "secrets"],
            &["list", "watch"],
        ),
        rule(&[""], &["namespaces", "nodes"], &["get"]),
        rule(&[""], &["namespaces"], &["list", "watch"]),
        rule(&[""], &["pods", "services"], &read),
        rule(
            &["extensions", "networking.k8s.io"],
            &["ingresses", "ingressclasses"],
            &read,
        ),
        rule(&[""], &["events"], &["create", "patch"]),
        rule(
            &["extensions", "networking.k8s.io"],
            &["ingresses/status"],
            &["update"],
        ),
    ]
}

/// The Role's rules (the run's namespace).
pub fn namespace_rules() -> Vec<PolicyRule> {
    vec![
        rule(
            &["coordination.k8s.io"],
            &["leases"],
            &["get", "create", "update"],
        ),
        rule(&[""], &["pods", "secrets", "namespaces"], &["get"]),
        rule(
            &[""],
            &["configmaps", "endpoints"],
            &["get", "create", "update"],
        ),
    ]
}

/// The ClusterRole's and ClusterRoleBinding's name: `haproxy-ingress-<namespace>`.
pub fn cluster_role_name(namespace: &str) -> String {
    format!("{CONTROLLER}-{namespace}")
}

pub fn objects(plan: &IngressPlan<'_>) -> RbacObjects {
    let subject = Subject {
        kind: "ServiceAccount".to_owned(),
        name: CONTROLLER.to_owned(),
        namespace: Some(plan.namespace.clone()),
        ..Default::default()
    };
    let cluster_name = cluster_role_name(&plan.namespace);
    RbacObjects {
        service_account: ServiceAccount {
            metadata: meta(plan, CONTROLLER, true),
            ..Default::default()
        },
        cluster_role: ClusterRole {
            metadata: meta(plan, &cluster_name, false),
            rules: Some(cluster_rules()),
            ..Default::default()
        },
        cluster_role_binding: ClusterRoleBinding {
            metadata: meta(plan, &cluster_name, false),
            role_ref: RoleRef {
                api_group: Some("rbac.authorization.k8s.io".to_owned()),
                kind: "ClusterRole".to_owned(),
                name: cluster_name.clone(),
            },
            subjects: Some(vec![subject.clone()]),
        },
        role: Role {
            metadata: meta(plan, CONTROLLER, true),
            rules: Some(namespace_rules()),
        },
        role_binding: RoleBinding {
            metadata: meta(plan, CONTROLLER, true),
            role_ref: RoleRef {
                api_group: Some("rbac.authorization.k8s.io".to_owned()),
                kind: "Role".to_owned(),
                name: CONTROLLER.to_owned(),
            },
            subjects: Some(vec![subject]),
        },
    }
}

//! `--check-access`: before a run in a cluster the harness did not create, every permission
//! the run needs (docs/kind-target.md#rbac-for-a-shared-cluster) is asked of the API server
//! with a SelfSubjectAccessReview (`authorization.k8s.io/v1`), in the namespace the run will
//! create; each one denied is named with its verb, resource and namespace, so a user with
//! narrower rights learns all of them at once instead of one 403 per try.

use harness_core::scenario::model::{Action, Scenario};
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use kube::api::{Api, PostParams};

use crate::api::ApiError;

/// One permission: `verb` on `resource` (`group` "" is the core group), in the run's
/// namespace when `namespaced`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Permission {
    pub verb: &'static str,
    pub group: &'static str,
    pub resource: &'static str,
    pub subresource: &'static str,
    pub namespaced: bool,
    /// What the run does with it.
    pub why: &'static str,
}

const fn p(
    verb: &'static str,
    group: &'static str,
    resource: &'static str,
    subresource: &'static str,
    namespaced: bool,
    why: &'static str,
) -> Permission {
    Permission {
        verb,
        group,
        resource,
        subresource,
        namespaced,
        why,
    }
}

/// What every run in an existing cluster needs.
const ALWAYS: &[Permission] = &[
    p("get", "", "namespaces", "", false, "the run's namespace"),
    p("list", "", "namespaces", "", false, "the run's namespace"),
    p(
        "patch",
        "",
        "namespaces",
        "",
        false,
        "creating the run's namespace (server-side apply)",
    ),
    p(
        "delete",
        "",
        "namespaces",
        "",
        false,
        "deleting the run's namespace at the end",
    ),
    p("get", "", "nodes", "", false, "zones and CPU for placement"),
    p("list", "", "nodes", "", false, "the Node watcher"),
    p("watch", "", "nodes", "", false, "the Node watcher"),
    p(
        "get",
        "apps",
        "deployments",
        "",
        true,
        "the service's Deployment",
    ),
    p(
        "patch",
        "apps",
        "deployments",
        "",
        true,
        "applying the service's Deployment",
    ),
    p(
        "list",
        "apps",
        "deployments",
        "",
        true,
        "rollout completion",
    ),
    p(
        "watch",
        "apps",
        "deployments",
        "",
        true,
        "rollout completion",
    ),
    p(
        "get",
        "",
        "services",
        "",
        true,
        "the Service and its ClusterIP",
    ),
    p("patch", "", "services", "", true, "applying the Service"),
    p("get", "", "pods", "", true, "the generators"),
    p("list", "", "pods", "", true, "the pod watcher"),
    p("watch", "", "pods", "", true, "the pod watcher"),
    p("patch", "", "pods", "", true, "applying the generator pods"),
    p(
        "delete",
        "",
        "pods",
        "",
        true,
        "killPod, stopping the generators",
    ),
    p("get", "", "pods", "log", true, "the generators' reports"),
    p("get", "", "pods", "proxy", true, "the sidecars' metrics"),
    p(
        "list",
        "discovery.k8s.io",
        "endpointslices",
        "",
        true,
        "hints and endpoints",
    ),
    p(
        "watch",
        "discovery.k8s.io",
        "endpointslices",
        "",
        true,
        "hints and endpoints",
    ),
    p("list", "", "events", "", true, "the controllers' events"),
    p("watch", "", "events", "", true, "the controllers' events"),
];

/// The load balancer's identity and the Role it is granted (escalation prevention: the
/// harness must hold what it grants).
const LOAD_BALANCER: &[Permission] = &[
    p(
        "patch",
        "",
        "serviceaccounts",
        "",
        true,
        "the load balancer's ServiceAccount",
    ),
    p(
        "patch",
        "rbac.authorization.k8s.io",
        "roles",
        "",
        true,
        "the load balancer's Role",
    ),
    p(
        "patch",
        "rbac.authorization.k8s.io",
        "rolebindings",
        "",
        true,
        "the load balancer's RoleBinding",
    ),
    p(
        "patch",
        "",
        "pods",
        "status",
        true,
        "granted to the load balancer (readiness gate)",
    ),
];

/// `scale` actions.
const SCALE: &[Permission] = &[p(
    "patch",
    "apps",
    "deployments",
    "scale",
    true,
    "the `scale` action",
)];

/// `relabelNode` with `--may-touch-nodes`.
const RELABEL: &[Permission] = &[p(
    "patch",
    "",
    "nodes",
    "",
    false,
    "the `relabelNode` action",
)];

/// Every permission a run of `scenario` needs.
pub fn required(scenario: &Scenario) -> Vec<Permission> {
    let mut out: Vec<Permission> = ALWAYS.to_vec();
    if scenario.load_balancer.is_some() {
        out.extend_from_slice(LOAD_BALANCER);
    }
    let has = |f: fn(&Action) -> bool| scenario.timeline.iter().any(|e| f(&e.action));
    if has(|a| matches!(a, Action::Scale { .. })) {
        out.extend_from_slice(SCALE);
    }
    if has(|a| matches!(a, Action::RelabelNode { .. })) {
        out.extend_from_slice(RELABEL);
    }
    out
}

/// A permission the server denied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denied {
    pub permission: Permission,
    /// The authorizer's reason, when it gave one.
    pub reason: String,
}

impl std::fmt::Display for Denied {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let p = &self.permission;
        let resource = match (p.group, p.subresource) {
            ("", "") => p.resource.to_owned(),
            ("", sub) => format!("{}/{sub}", p.resource),
            (group, "") => format!("{}.{group}", p.resource),
            (group, sub) => format!("{}.{group}/{sub}", p.resource),
        };
        write!(f, "`{}` on {resource}", p.verb)?;
        if p.namespaced {
            write!(f, " in the run's namespace")?;
        } else {
            write!(f, " (cluster-wide)")?;
        }
        write!(f, ", for {}", p.why)?;
        if !self.reason.is_empty() {
            write!(f, " ({})", self.reason)?;
        }
        Ok(())
    }
}

/// Asks the server about each of `permissions` in `namespace`; the denied ones.
pub async fn check(
    client: &kube::Client,
    namespace: &str,
    permissions: &[Permission],
) -> Result<Vec<Denied>, ApiError> {
    let api: Api<SelfSubjectAccessReview> = Api::all(client.clone());
    let mut denied = Vec::new();
    for permission in permissions {
        let review = SelfSubjectAccessReview {
            spec: SelfSubjectAccessReviewSpec {
                resource_attributes: Some(ResourceAttributes {
                    verb: Some(permission.verb.to_owned()),
                    group: Some(permission.group.to_owned()),
                    resource: Some(permission.resource.to_owned()),
                    subresource: (!permission.subresource.is_empty())
                        .then(|| permission.subresource.to_owned()),
                    namespace: permission.namespaced.then(|| namespace.to_owned()),
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        let answer = api
            .create(&PostParams::default(), &review)
            .await
            .map_err(|e| {
                ApiError::new(
                    "asking the API server what this user may do (SelfSubjectAccessReview)",
                    e,
                )
            })?;
        let status = answer.status.unwrap_or_default();
        if !status.allowed {
            denied.push(Denied {
                permission: permission.clone(),
                reason: status.reason.unwrap_or_default(),
            });
        }
    }
    Ok(denied)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_run_needs_follows_the_scenario() {
        let plain = harness_core::testing::one_node_scenario(
            &["replicas: 1", "serviceTime: { fixed: 1ms }"],
            "load:\n  duration: 10s\n  generators: [{ name: g, zone: z, rate: 1 }]\n",
        );
        let base = required(&plain);
        assert_eq!(base.len(), ALWAYS.len());
        let scaled = harness_core::testing::one_node_scenario(
            &["replicas: 1", "serviceTime: { fixed: 1ms }"],
            "load:\n  duration: 10s\n  generators: [{ name: g, zone: z, rate: 1 }]\ntimeline:\n  - { at: 1s, scale: { replicas: 2 } }\n",
        );
        let needs = required(&scaled);
        assert!(
            needs
                .iter()
                .any(|p| p.resource == "deployments" && p.subresource == "scale")
        );
        let denied = Denied {
            permission: SCALE[0].clone(),
            reason: "RBAC: no rule".into(),
        };
        assert_eq!(
            denied.to_string(),
            "`patch` on deployments.apps/scale in the run's namespace, for the `scale` action (RBAC: no rule)"
        );
    }
}

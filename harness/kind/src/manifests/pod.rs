//! What the pods of the run's own workloads (the service's, the load balancer's, the
//! generators') are built from: a container with the run's image pull policy, requests,
//! security context and `/tmp` mount ([`base_container`]), the Downward API identity
//! ([`identity_env`], [`field_env`]), required node affinity ([`node_affinity`]), the pod spec
//! they start from ([`spec`]), and a workload's pod selector ([`selector`]) and template
//! ([`template`]). The ingress controller's pod is the chart's and takes only [`field_env`],
//! [`selector`] and [`template`] from here.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, Container, ContainerPort, EnvVar, EnvVarSource, NodeAffinity, NodeSelector,
    NodeSelectorRequirement, NodeSelectorTerm, ObjectFieldSelector, PodSpec, PodTemplateSpec,
    PreferredSchedulingTerm, ResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use workload_contract::identity;

use super::security;

/// CPU each container asks the scheduler for: small, so the service's pods fit beside kind's
/// system pods on nodes whose allocatable was shaped down (docs/kind-target.md). No limit: a
/// CPU limit would throttle the service and change its latency.
const CPU_REQUEST: &str = "10m";
const MEMORY_REQUEST: &str = "16Mi";

/// The environment variable `name` from the Downward API field `path` (`metadata.name`).
pub(crate) fn field_env(name: &str, path: &str) -> EnvVar {
    EnvVar {
        name: name.to_owned(),
        value_from: Some(EnvVarSource {
            field_ref: Some(ObjectFieldSelector {
                field_path: path.to_owned(),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// `POD_NAME`, `NODE_NAME` from the Downward API; `ZONE` when the placement allows one zone
/// only (the Downward API cannot read node labels; the harness reads each pod's zone from its
/// node).
pub(crate) fn identity_env(zone: Option<&str>) -> Vec<EnvVar> {
    let mut env = vec![
        field_env(identity::POD_NAME, "metadata.name"),
        field_env(identity::NODE_NAME, "spec.nodeName"),
    ];
    if let Some(zone) = zone {
        env.push(EnvVar {
            name: identity::ZONE.to_owned(),
            value: Some(zone.to_owned()),
            ..Default::default()
        });
    }
    env
}

fn resources() -> ResourceRequirements {
    ResourceRequirements {
        requests: Some(BTreeMap::from([
            ("cpu".to_owned(), Quantity(CPU_REQUEST.to_owned())),
            ("memory".to_owned(), Quantity(MEMORY_REQUEST.to_owned())),
        ])),
        ..Default::default()
    }
}

/// The container port `port`, named.
pub(crate) fn port(name: &str, port: u16) -> ContainerPort {
    ContainerPort {
        name: Some(name.to_owned()),
        container_port: i32::from(port),
        ..Default::default()
    }
}

pub(crate) fn base_container(name: &str, image: String, args: Vec<String>) -> Container {
    Container {
        name: name.to_owned(),
        image: Some(image),
        image_pull_policy: Some("Never".to_owned()),
        args: Some(args),
        resources: Some(resources()),
        security_context: Some(security::container()),
        volume_mounts: Some(vec![security::tmp_mount()]),
        ..Default::default()
    }
}

/// Required node affinity: `In` on each label with values, all in one term (ANDed).
pub(crate) fn node_affinity(requirements: Vec<(&str, Vec<String>)>) -> Option<Affinity> {
    let expressions: Vec<_> = requirements
        .into_iter()
        .filter(|(_, values)| !values.is_empty())
        .map(|(key, values)| NodeSelectorRequirement {
            key: key.to_owned(),
            operator: "In".to_owned(),
            values: Some(values),
        })
        .collect();
    if expressions.is_empty() {
        return None;
    }
    Some(Affinity {
        node_affinity: Some(NodeAffinity {
            required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                node_selector_terms: vec![NodeSelectorTerm {
                    match_expressions: Some(expressions),
                    ..Default::default()
                }],
            }),
            ..Default::default()
        }),
        ..Default::default()
    })
}

/// Preferred node affinity (weight 100) on `topology.kubernetes.io/zone` `In` `zone`: the
/// scheduler places the pod there when a node of the zone can take it, elsewhere otherwise.
pub(crate) fn preferred_zone(zone: &str) -> Affinity {
    Affinity {
        node_affinity: Some(NodeAffinity {
            preferred_during_scheduling_ignored_during_execution: Some(vec![
                PreferredSchedulingTerm {
                    weight: 100,
                    preference: NodeSelectorTerm {
                        match_expressions: Some(vec![NodeSelectorRequirement {
                            key: crate::labels::ZONE_LABEL.to_owned(),
                            operator: "In".to_owned(),
                            values: Some(vec![zone.to_owned()]),
                        }]),
                        ..Default::default()
                    },
                },
            ]),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The pod spec a workload's pod starts from: Pod Security "restricted", the `/tmp` volume, no
/// ServiceAccount token and no service links (each workload adds its containers and the rest).
pub(crate) fn spec() -> PodSpec {
    PodSpec {
        security_context: Some(security::pod()),
        volumes: Some(vec![security::tmp_volume()]),
        automount_service_account_token: Some(false),
        enable_service_links: Some(false),
        ..Default::default()
    }
}

/// The selector of the pods carrying `labels`.
pub(crate) fn selector(labels: BTreeMap<String, String>) -> LabelSelector {
    LabelSelector {
        match_labels: Some(labels),
        ..Default::default()
    }
}

/// A workload's pod template: its pods' `labels` and `spec`.
pub(crate) fn template(labels: BTreeMap<String, String>, spec: PodSpec) -> PodTemplateSpec {
    PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(labels),
            ..Default::default()
        }),
        spec: Some(spec),
    }
}

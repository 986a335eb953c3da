//! Which of the objects belong to the Service being imported: the Service itself (by name, and
//! namespace when given), the Deployment whose pod template its selector matches, the
//! HorizontalPodAutoscaler that scales that Deployment, the PodDisruptionBudgets that select its
//! pods, and the Service's EndpointSlices (label `kubernetes.io/service-name`). Every refusal
//! says what is missing or ambiguous and how to give it.

use std::collections::BTreeMap;

use anyhow::{anyhow, bail};
use harness_kind::import::ClusterObjects;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::core::v1::{Node, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kube_model::openapi::LABEL_SERVICE_NAME;

/// The objects of one Service.
#[derive(Debug)]
pub struct Selected {
    pub namespace: String,
    pub nodes: Vec<Node>,
    pub service: Service,
    pub deployment: Deployment,
    pub autoscaler: Option<HorizontalPodAutoscaler>,
    pub disruption_budgets: Vec<PodDisruptionBudget>,
    pub endpoint_slices: Vec<EndpointSlice>,
}

fn namespace_of(meta: &ObjectMeta) -> &str {
    meta.namespace.as_deref().unwrap_or("default")
}

fn name_of(meta: &ObjectMeta) -> &str {
    meta.name.as_deref().unwrap_or("?")
}

/// The Service `name` (in `namespace`, when given) and what belongs to it.
pub fn select(
    objects: ClusterObjects,
    name: &str,
    namespace: Option<&str>,
) -> anyhow::Result<Selected> {
    let candidates: Vec<&Service> = objects
        .services
        .iter()
        .filter(|s| s.metadata.name.as_deref() == Some(name))
        .filter(|s| namespace.is_none_or(|ns| namespace_of(&s.metadata) == ns))
        .collect();
    let service = match candidates.as_slice() {
        [one] => (*one).clone(),
        [] => {
            let known: Vec<String> = objects
                .services
                .iter()
                .map(|s| format!("{}/{}", namespace_of(&s.metadata), name_of(&s.metadata)))
                .collect();
            bail!(
                "no Service {name}{} in the objects (Services found: {}); add it (`kubectl get service {name} -n NAMESPACE -o yaml`) or name another with --service",
                namespace
                    .map(|ns| format!(" in namespace {ns}"))
                    .unwrap_or_default(),
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            )
        }
        several => bail!(
            "Service {name} is in several namespaces ({}): choose one with --namespace",
            several
                .iter()
                .map(|s| namespace_of(&s.metadata))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let ns = namespace_of(&service.metadata).to_owned();
    let selector = service
        .spec
        .as_ref()
        .and_then(|s| s.selector.clone())
        .unwrap_or_default();
    if selector.is_empty() {
        bail!(
            "Service {ns}/{name} has no selector: its endpoints are managed by hand, so no Deployment's pods can be said to back it; the import needs a Service that selects its pods"
        );
    }
    let in_ns = |meta: &ObjectMeta| namespace_of(meta) == ns;
    let backing: Vec<&Deployment> = objects
        .deployments
        .iter()
        .filter(|d| in_ns(&d.metadata))
        .filter(|d| labels_include(&template_labels(d), &selector))
        .collect();
    let deployment = match backing.as_slice() {
        [one] => (*one).clone(),
        [] => bail!(
            "no Deployment in namespace {ns} has pods that Service {name}'s selector {} matches; add the Deployment (`kubectl get deployments -n {ns} -o yaml`)",
            show_labels(&selector)
        ),
        several => bail!(
            "Service {name}'s selector {} matches the pods of several Deployments ({}): the import reproduces one Deployment; give only its objects",
            show_labels(&selector),
            several
                .iter()
                .map(|d| name_of(&d.metadata))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let dep_name = name_of(&deployment.metadata).to_owned();
    let pod_labels = template_labels(&deployment);
    let autoscalers: Vec<HorizontalPodAutoscaler> = objects
        .autoscalers
        .into_iter()
        .filter(|h| in_ns(&h.metadata))
        .filter(|h| {
            h.spec.scale_target_ref.kind == "Deployment" && h.spec.scale_target_ref.name == dep_name
        })
        .collect();
    if autoscalers.len() > 1 {
        bail!(
            "several HorizontalPodAutoscalers scale Deployment {ns}/{dep_name} ({}): Kubernetes lets them fight; keep one",
            autoscalers
                .iter()
                .map(|h| name_of(&h.metadata))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let disruption_budgets = objects
        .disruption_budgets
        .into_iter()
        .filter(|p| in_ns(&p.metadata))
        .filter(|p| {
            p.spec
                .as_ref()
                .and_then(|s| s.selector.as_ref())
                .is_some_and(|sel| selector_matches(sel, &pod_labels))
        })
        .collect();
    let endpoint_slices = objects
        .endpoint_slices
        .into_iter()
        .filter(|s| in_ns(&s.metadata))
        .filter(|s| {
            s.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(LABEL_SERVICE_NAME))
                .is_some_and(|n| n == name)
        })
        .collect();
    if objects.nodes.is_empty() {
        return Err(anyhow!(
            "no Nodes in the objects: the zones and their CPU come from them; add `kubectl get nodes -o yaml`"
        ));
    }
    Ok(Selected {
        namespace: ns,
        nodes: objects.nodes,
        service,
        deployment,
        autoscaler: autoscalers.into_iter().next(),
        disruption_budgets,
        endpoint_slices,
    })
}

/// The labels of the Deployment's pod template.
pub fn template_labels(d: &Deployment) -> BTreeMap<String, String> {
    d.spec
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.clone())
        .unwrap_or_default()
}

fn labels_include(labels: &BTreeMap<String, String>, wanted: &BTreeMap<String, String>) -> bool {
    wanted.iter().all(|(k, v)| labels.get(k) == Some(v))
}

fn show_labels(labels: &BTreeMap<String, String>) -> String {
    let pairs: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{{{}}}", pairs.join(","))
}

/// Whether a `LabelSelector` selects `labels` (matchLabels and matchExpressions, ANDed; an
/// empty selector selects everything, as for a PodDisruptionBudget in `policy/v1`).
pub fn selector_matches(selector: &LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    let plain = selector
        .match_labels
        .as_ref()
        .is_none_or(|m| labels_include(labels, m));
    plain
        && selector
            .match_expressions
            .iter()
            .flatten()
            .all(|e| requirement_matches(&e.key, &e.operator, e.values.as_deref(), labels))
}

/// One `key operator values` requirement (label selectors and node selectors share the
/// operators; `Gt`/`Lt` compare whole numbers, as node selectors do).
pub fn requirement_matches(
    key: &str,
    operator: &str,
    values: Option<&[String]>,
    labels: &BTreeMap<String, String>,
) -> bool {
    let values = values.unwrap_or_default();
    let value = labels.get(key);
    let number = |s: &str| s.parse::<i64>().ok();
    match operator {
        "In" => value.is_some_and(|v| values.contains(v)),
        "NotIn" => value.is_none_or(|v| !values.contains(v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        "Gt" => {
            matches!((value.and_then(|v| number(v)), values.first().and_then(|v| number(v))), (Some(a), Some(b)) if a > b)
        }
        "Lt" => {
            matches!((value.and_then(|v| number(v)), values.first().and_then(|v| number(v))), (Some(a), Some(b)) if a < b)
        }
        _ => false,
    }
}

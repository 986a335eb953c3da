//! Turns `k8s-openapi` objects (Node, EndpointSlice, Service) into the model types of
//! `kube_model`, reading exactly the fields the controller and kube-proxy read, and
//! rejecting values Kubernetes would not hold (unparseable CPU, endpoints without addresses).

use std::collections::BTreeMap;

use anyhow::{anyhow, bail};
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::discovery::v1 as discovery;
use kube_model::types::{LABEL_CONTROL_PLANE, LABEL_MASTER, LABEL_TOPOLOGY_ZONE};
use kube_model::{
    AddressType, Endpoint, EndpointConditions, EndpointSlice, Hints, Node, ServicePolicy,
    ServiceTopology, parse_cpu_millis,
};

use super::load::{Located, Source};

/// `kubernetes.io/service-name`: the Service an EndpointSlice belongs to.
pub const LABEL_SERVICE_NAME: &str = "kubernetes.io/service-name";

/// A node from `src`.
pub fn node(src: &Source, n: &Located<core::Node>) -> anyhow::Result<Node> {
    let file = &src.name;
    let meta = &n.value.metadata;
    let Some(name) = meta.name.clone() else {
        bail!("{file}:{}: a Node without metadata.name", n.line);
    };
    let labels = meta.labels.clone().unwrap_or_default();
    let status = n.value.status.clone().unwrap_or_default();
    let ready = status
        .conditions
        .unwrap_or_default()
        .iter()
        .find(|c| c.type_ == "Ready")
        .is_some_and(|c| c.status == "True");
    let cpu = match status.allocatable.as_ref().and_then(|a| a.get("cpu")) {
        None => None,
        Some(q) => {
            let at = || src.locate(n.line, "cpu", &q.0);
            let millis = parse_cpu_millis(&q.0)
                .map_err(|e| anyhow!("{}: node {name}: status.allocatable.cpu: {e}", at()))?;
            let millis = u64::try_from(millis).map_err(|_| {
                anyhow!(
                    "{}: node {name}: status.allocatable.cpu {:?} is negative",
                    at(),
                    q.0
                )
            })?;
            Some(millis)
        }
    };
    Ok(Node {
        name,
        zone: labels.get(LABEL_TOPOLOGY_ZONE).cloned(),
        allocatable_cpu_millis: cpu,
        ready,
        control_plane: labels.contains_key(LABEL_CONTROL_PLANE)
            || labels.contains_key(LABEL_MASTER),
    })
}

/// An EndpointSlice with the Service it belongs to (`namespace`, `service-name` label).
#[derive(Debug, Clone)]
pub struct OwnedSlice {
    pub namespace: Option<String>,
    pub service: Option<String>,
    pub address_type: AddressType,
    pub slice: EndpointSlice,
}

/// A slice from `file`; `index` names slices that have no name.
pub fn slice(
    file: &str,
    index: usize,
    s: &Located<discovery::EndpointSlice>,
) -> anyhow::Result<OwnedSlice> {
    let meta = &s.value.metadata;
    let name = meta
        .name
        .clone()
        .unwrap_or_else(|| format!("<unnamed slice {}>", index + 1));
    let address_type = match s.value.address_type.as_str() {
        "IPv4" => AddressType::IPv4,
        "IPv6" => AddressType::IPv6,
        "FQDN" => AddressType::Fqdn,
        other => bail!(
            "{file}:{}: EndpointSlice {name}: addressType {other:?} is not IPv4, IPv6 or FQDN",
            s.line
        ),
    };
    let mut endpoints = Vec::new();
    for (i, e) in s.value.endpoints.iter().flatten().enumerate() {
        let Some(address) = e.addresses.first() else {
            bail!(
                "{file}:{}: EndpointSlice {name}: endpoints[{i}] has no addresses",
                s.line
            );
        };
        let conditions = e.conditions.clone().unwrap_or_default();
        let hints = e.hints.as_ref().map(|h| Hints {
            for_zones: h
                .for_zones
                .iter()
                .flatten()
                .map(|z| z.name.clone())
                .collect(),
            for_nodes: h
                .for_nodes
                .iter()
                .flatten()
                .map(|n| n.name.clone())
                .collect(),
        });
        endpoints.push(Endpoint {
            address: address.clone(),
            zone: e.zone.clone(),
            node_name: e.node_name.clone(),
            conditions: EndpointConditions {
                ready: conditions.ready,
                serving: conditions.serving,
                terminating: conditions.terminating,
            },
            hints,
        });
    }
    Ok(OwnedSlice {
        namespace: meta.namespace.clone(),
        service: meta
            .labels
            .as_ref()
            .and_then(|l| l.get(LABEL_SERVICE_NAME))
            .cloned(),
        address_type,
        slice: EndpointSlice { name, endpoints },
    })
}

/// What the hints model needs from a Service.
#[derive(Debug, Clone)]
pub struct ServiceInfo {
    pub namespace: String,
    pub name: String,
    pub topology: ServiceTopology,
    pub policy: ServicePolicy,
}

/// The Service from `file` (exactly one object expected).
pub fn service(file: &str, objects: &[Located<core::Service>]) -> anyhow::Result<ServiceInfo> {
    let [svc] = objects else {
        bail!(
            "{file}: expected exactly one Service, found {}",
            objects.len()
        );
    };
    let meta = &svc.value.metadata;
    let Some(name) = meta.name.clone() else {
        bail!("{file}:{}: a Service without metadata.name", svc.line);
    };
    let spec = svc.value.spec.clone().unwrap_or_default();
    let annotations: BTreeMap<String, String> = meta.annotations.clone().unwrap_or_default();
    let lb_ingress = svc
        .value
        .status
        .as_ref()
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|lb| lb.ingress.as_ref());
    let externally_accessible = spec
        .ports
        .iter()
        .flatten()
        .any(|p| p.node_port.is_some_and(|n| n != 0))
        || lb_ingress.is_some_and(|i| !i.is_empty())
        || spec
            .external_ips
            .as_ref()
            .is_some_and(|ips| !ips.is_empty());
    Ok(ServiceInfo {
        namespace: meta
            .namespace
            .clone()
            .unwrap_or_else(|| "default".to_owned()),
        name,
        topology: ServiceTopology {
            annotations,
            traffic_distribution: spec.traffic_distribution.clone(),
        },
        policy: ServicePolicy {
            internal_local: spec.internal_traffic_policy.as_deref() == Some("Local"),
            external_local: spec.external_traffic_policy.as_deref() == Some("Local"),
            externally_accessible,
        },
    })
}

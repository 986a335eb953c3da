//! Turns `k8s-openapi` objects (Node, EndpointSlice, Service) into this crate's model inputs,
//! reading exactly the fields the EndpointSlice controller and kube-proxy read, and rejecting
//! values Kubernetes would not hold (unparseable CPU, endpoints without addresses). Used by
//! `harness hints` (objects from files) and by a cluster target (objects from a watch); the
//! errors name the object and field, the caller adds where the object came from.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::discovery::v1 as discovery;

use crate::quantity::{QuantityError, parse_cpu_millis};
use crate::types::{LABEL_CONTROL_PLANE, LABEL_MASTER, LABEL_TOPOLOGY_ZONE};
use crate::{
    AddressType, Endpoint, EndpointConditions, EndpointSlice, Hints, Node, ServicePolicy,
    ServiceTopology,
};

/// `kubernetes.io/service-name`: the Service an EndpointSlice belongs to.
pub const LABEL_SERVICE_NAME: &str = "kubernetes.io/service-name";

/// An object that cannot be a model input.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    #[error("a Node without metadata.name")]
    NodeWithoutName,
    #[error("node {node}: status.allocatable.cpu")]
    NodeCpu {
        node: String,
        /// The quantity as written.
        value: String,
        #[source]
        source: QuantityError,
    },
    #[error("node {node}: status.allocatable.cpu {value:?} is negative")]
    NegativeCpu { node: String, value: String },
    #[error("EndpointSlice {slice}: addressType {address_type:?} is not IPv4, IPv6 or FQDN")]
    AddressType { slice: String, address_type: String },
    #[error("EndpointSlice {slice}: endpoints[{index}] has no addresses")]
    EndpointWithoutAddress { slice: String, index: usize },
    #[error("a Service without metadata.name")]
    ServiceWithoutName,
}

/// The node as the topology cache sees it.
pub fn node(n: &core::Node) -> Result<Node, ConvertError> {
    let meta = &n.metadata;
    let Some(name) = meta.name.clone() else {
        return Err(ConvertError::NodeWithoutName);
    };
    let labels = meta.labels.clone().unwrap_or_default();
    let status = n.status.clone().unwrap_or_default();
    let ready = status
        .conditions
        .unwrap_or_default()
        .iter()
        .find(|c| c.type_ == "Ready")
        .is_some_and(|c| c.status == "True");
    let cpu = match status.allocatable.as_ref().and_then(|a| a.get("cpu")) {
        None => None,
        Some(q) => {
            let millis = parse_cpu_millis(&q.0).map_err(|source| ConvertError::NodeCpu {
                node: name.clone(),
                value: q.0.clone(),
                source,
            })?;
            let millis = u64::try_from(millis).map_err(|_| ConvertError::NegativeCpu {
                node: name.clone(),
                value: q.0.clone(),
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

/// The slice as the controller and kube-proxy see it; `index` names a slice that has no name
/// (its position among the caller's slices, from 0).
pub fn slice(s: &discovery::EndpointSlice, index: usize) -> Result<OwnedSlice, ConvertError> {
    let meta = &s.metadata;
    let name = meta
        .name
        .clone()
        .unwrap_or_else(|| format!("<unnamed slice {}>", index + 1));
    let address_type = match s.address_type.as_str() {
        "IPv4" => AddressType::IPv4,
        "IPv6" => AddressType::IPv6,
        "FQDN" => AddressType::Fqdn,
        other => {
            return Err(ConvertError::AddressType {
                slice: name,
                address_type: other.to_owned(),
            });
        }
    };
    let mut endpoints = Vec::new();
    for (i, e) in s.endpoints.iter().flatten().enumerate() {
        let Some(address) = e.addresses.first() else {
            return Err(ConvertError::EndpointWithoutAddress {
                slice: name,
                index: i,
            });
        };
        endpoints.push(endpoint(e, address.clone()));
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

/// What the hints model and kube-proxy need from a Service.
#[derive(Debug, Clone)]
pub struct ServiceInfo {
    pub namespace: String,
    pub name: String,
    pub topology: ServiceTopology,
    pub policy: ServicePolicy,
}

/// How the Service routes (its topology settings and traffic policies), or without a Service
/// what `harness hints` assumes: `service.kubernetes.io/topology-mode: Auto` and the default
/// policies.
pub fn service_routing(service: Option<&ServiceInfo>) -> (ServiceTopology, ServicePolicy) {
    match service {
        Some(s) => (s.topology.clone(), s.policy),
        None => (ServiceTopology::topology_auto(), ServicePolicy::default()),
    }
}

/// The Service's routing settings (namespace `default` when unset).
pub fn service(svc: &core::Service) -> Result<ServiceInfo, ConvertError> {
    let meta = &svc.metadata;
    let Some(name) = meta.name.clone() else {
        return Err(ConvertError::ServiceWithoutName);
    };
    let spec = svc.spec.clone().unwrap_or_default();
    let annotations: BTreeMap<String, String> = meta.annotations.clone().unwrap_or_default();
    let lb_ingress = svc
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

/// One endpoint of a slice in the model's form, under `address` (its first address when read
/// from a file; the pod's name where a target names endpoints by pod).
pub fn endpoint(e: &discovery::Endpoint, address: String) -> Endpoint {
    let conditions = e.conditions.clone().unwrap_or_default();
    Endpoint {
        address,
        zone: e.zone.clone(),
        node_name: e.node_name.clone(),
        conditions: EndpointConditions {
            ready: conditions.ready,
            serving: conditions.serving,
            terminating: conditions.terminating,
        },
        hints: e.hints.as_ref().map(|h| Hints {
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
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn node_with_cpu(cpu: &str) -> core::Node {
        core::Node {
            metadata: ObjectMeta {
                name: Some("n-1".into()),
                labels: Some(BTreeMap::from([(
                    LABEL_TOPOLOGY_ZONE.to_owned(),
                    "2a".to_owned(),
                )])),
                ..ObjectMeta::default()
            },
            status: Some(core::NodeStatus {
                allocatable: Some(BTreeMap::from([("cpu".to_owned(), Quantity(cpu.into()))])),
                conditions: Some(vec![core::NodeCondition {
                    type_: "Ready".into(),
                    status: "True".into(),
                    ..core::NodeCondition::default()
                }]),
                ..core::NodeStatus::default()
            }),
            ..core::Node::default()
        }
    }

    #[test]
    fn nodes_carry_zone_cpu_and_readiness() {
        let n = node(&node_with_cpu("3500m")).unwrap();
        assert_eq!(n.name, "n-1");
        assert_eq!(n.zone.as_deref(), Some("2a"));
        assert_eq!(n.allocatable_cpu_millis, Some(3500));
        assert!(n.ready && !n.control_plane);
    }

    #[test]
    fn bad_cpu_keeps_the_value_and_the_quantity_error() {
        let err = node(&node_with_cpu("4 cores")).unwrap_err();
        assert!(matches!(&err, ConvertError::NodeCpu { value, .. } if value == "4 cores"));
        assert_eq!(err.to_string(), "node n-1: status.allocatable.cpu");
        let source = std::error::Error::source(&err).expect("the quantity error is the source");
        assert!(source.to_string().contains("\"4 cores\""), "{source}");
    }

    #[test]
    fn endpoints_need_an_address() {
        let s = discovery::EndpointSlice {
            address_type: "IPv4".into(),
            endpoints: Some(vec![discovery::Endpoint::default()]),
            metadata: ObjectMeta::default(),
            ports: None,
        };
        let err = slice(&s, 2).unwrap_err();
        assert_eq!(
            err.to_string(),
            "EndpointSlice <unnamed slice 3>: endpoints[0] has no addresses"
        );
    }
}

//! The Service in front of the Deployment: a ClusterIP Service whose routing is the
//! scenario's — the `service.kubernetes.io/topology-mode: Auto` annotation (Topology Aware
//! Routing) or `spec.trafficDistribution` — targeting the sidecar's port when there is one.

use std::collections::BTreeMap;

use harness_core::scenario::model::{Routing, Scenario, TrafficDistribution};
use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube_model::reconcile::ANNOTATION_TOPOLOGY_MODE;

use super::deployment::selector_labels;
use super::{FLAGSVC_PORT, SERVICE_PORT, SIDECAR_PORT, namespace_name, run_labels};

/// The value `spec.trafficDistribution` takes for the scenario's choice.
pub fn traffic_distribution_value(d: TrafficDistribution) -> &'static str {
    match d {
        TrafficDistribution::PreferClose => "PreferClose",
        TrafficDistribution::PreferSameZone => "PreferSameZone",
        TrafficDistribution::PreferSameNode => "PreferSameNode",
    }
}

/// The Service.
pub fn service(scenario: &Scenario, run_id: &str) -> Service {
    let svc = &scenario.service;
    let (annotations, traffic_distribution) = match svc.routing {
        Routing::None => (None, None),
        Routing::TopologyModeAuto => (
            Some(BTreeMap::from([(
                ANNOTATION_TOPOLOGY_MODE.to_owned(),
                "Auto".to_owned(),
            )])),
            None,
        ),
        Routing::TrafficDistribution(d) => (None, Some(traffic_distribution_value(d).to_owned())),
    };
    let target = if svc.sidecar.is_some() {
        SIDECAR_PORT
    } else {
        FLAGSVC_PORT
    };
    Service {
        metadata: ObjectMeta {
            name: Some(svc.name.clone()),
            namespace: Some(namespace_name(run_id)),
            labels: Some(run_labels(scenario, run_id)),
            annotations,
            ..Default::default()
        },
        spec: Some(ServiceSpec {
            traffic_distribution,
            ..http_cluster_ip(selector_labels(scenario), SERVICE_PORT, target)
        }),
        ..Default::default()
    }
}

/// A ClusterIP Service's spec with one TCP port `http`, `port` → `target_port`, for the pods
/// `selector` picks: the service's, the load balancer's and the ingress controller's.
pub(crate) fn http_cluster_ip(
    selector: BTreeMap<String, String>,
    port: u16,
    target_port: u16,
) -> ServiceSpec {
    ServiceSpec {
        type_: Some("ClusterIP".to_owned()),
        selector: Some(selector),
        ports: Some(vec![ServicePort {
            name: Some("http".to_owned()),
            port: i32::from(port),
            target_port: Some(IntOrString::Int(i32::from(target_port))),
            protocol: Some("TCP".to_owned()),
            ..Default::default()
        }]),
        ..Default::default()
    }
}

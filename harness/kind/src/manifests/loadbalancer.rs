//! The scenario's load balancer in the cluster (docs/kind-target.md, CONTRACT-LB): the
//! `loadbalancer` workload as a one-replica Deployment with its own ServiceAccount, a Role
//! (EndpointSlices list+watch, Services get, Pods get+list+watch, `pods/status` patch) and its
//! RoleBinding, and a ClusterIP Service `loadbalancer` (port 80 → 8080) that generators
//! `via: loadBalancer` send to. Its flags are the local target's
//! ([`harness_core::workload_args::loadbalancer_args`], lags at the run's time scale) plus the
//! in-cluster ones. The pod prefers the load balancer's zone (`loadBalancer.zone`, default the
//! first zone with a worker: `harness_core::scenario::model::hops`), where the local target runs
//! it. The in-cluster flags: `--watch-service` (it feeds itself from the Service's EndpointSlices, as the
//! AWS Load Balancer Controller does), `--target-port`, and `--readiness-gate
//! target-health.harness.io/<service>` when the scenario sets `readinessGate` (the service's
//! pods then carry that gate). `POD_NAMESPACE` comes from the Downward API.

use std::collections::BTreeMap;

use harness_core::scenario::model::{LoadBalancer, Scenario, hops};
use harness_core::workload_args::loadbalancer_args;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{PodSpec, Service, ServiceAccount};
use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::pod::{self, base_container, field_env, identity_env, port};
pub use super::readiness_gate::{GATE_PREFIX, gate_condition};
use super::service::http_cluster_ip;
use super::{
    APP_LABEL, FLAGSVC_PORT, ManifestError, ROLE_LABEL, RenderInput, SERVICE_PORT, SIDECAR_PORT,
    any_addr, image_of, namespace_name, run_labels,
};

/// The name of every load-balancer object (Deployment, Service, ServiceAccount, Role, binding).
pub const LB_NAME: &str = "loadbalancer";
/// The value of [`ROLE_LABEL`] on the load balancer's pod.
pub const LB_ROLE: &str = "loadbalancer";
/// Where it takes traffic in its pod (the Service's target port).
pub const LB_PORT: u16 = 8080;
/// Its admin port: `/stats`, `/targets`, read through the API server's pod proxy.
pub const LB_ADMIN_PORT: u16 = 9901;
/// The load balancer's objects, in apply order.
#[derive(Debug, Clone, PartialEq)]
pub struct LbObjects {
    pub service_account: ServiceAccount,
    pub role: Role,
    pub role_binding: RoleBinding,
    pub service: Service,
    pub deployment: Deployment,
}

fn meta(scenario: &Scenario, run_id: &str, labels: BTreeMap<String, String>) -> ObjectMeta {
    let mut all = run_labels(scenario, run_id);
    all.extend(labels);
    ObjectMeta {
        name: Some(LB_NAME.to_owned()),
        namespace: Some(namespace_name(run_id)),
        labels: Some(all),
        ..Default::default()
    }
}

fn selector() -> BTreeMap<String, String> {
    BTreeMap::from([
        (APP_LABEL.to_owned(), LB_NAME.to_owned()),
        (ROLE_LABEL.to_owned(), LB_ROLE.to_owned()),
    ])
}

fn rule(group: &str, resources: &[&str], verbs: &[&str]) -> PolicyRule {
    PolicyRule {
        api_groups: Some(vec![group.to_owned()]),
        resources: Some(resources.iter().map(|r| (*r).to_owned()).collect()),
        verbs: verbs.iter().map(|v| (*v).to_owned()).collect(),
        ..Default::default()
    }
}

/// The Role's rules (CONTRACT-LB.md): what its EndpointSlice watch and readiness gate need.
pub fn rules() -> Vec<PolicyRule> {
    vec![
        rule("discovery.k8s.io", &["endpointslices"], &["list", "watch"]),
        rule("", &["services"], &["get"]),
        rule("", &["pods"], &["get", "list", "watch"]),
        rule("", &["pods/status"], &["patch"]),
    ]
}

/// The pod port the load balancer sends to: the sidecar's when there is one.
fn target_port(scenario: &Scenario) -> u16 {
    if scenario.service.sidecar.is_some() {
        SIDECAR_PORT
    } else {
        FLAGSVC_PORT
    }
}

/// The load balancer's command line.
pub fn lb_args(scenario: &Scenario, spec: &LoadBalancer, input: &RenderInput<'_>) -> Vec<String> {
    let mut args = loadbalancer_args(
        spec,
        input.time_scale,
        any_addr(LB_PORT),
        any_addr(LB_ADMIN_PORT),
    )
    .to_args();
    args.extend([
        "--watch-service".to_owned(),
        scenario.service.name.clone(),
        "--target-port".to_owned(),
        target_port(scenario).to_string(),
    ]);
    if spec.readiness_gate {
        args.extend(["--readiness-gate".to_owned(), gate_condition(scenario)]);
    }
    args
}

/// The load balancer's objects, when the scenario has one.
pub fn objects(
    scenario: &Scenario,
    input: &RenderInput<'_>,
) -> Result<Option<LbObjects>, ManifestError> {
    let Some(spec) = &scenario.load_balancer else {
        return Ok(None);
    };
    let run_id = input.run_id;
    let role_labels = BTreeMap::from([(ROLE_LABEL.to_owned(), LB_ROLE.to_owned())]);
    let ns = namespace_name(run_id);
    let mut container = base_container(
        LB_NAME,
        image_of(input.images, "loadbalancer")?,
        lb_args(scenario, spec, input),
    );
    let mut env = identity_env(None);
    env.push(field_env("POD_NAMESPACE", "metadata.namespace"));
    container.env = Some(env);
    container.ports = Some(vec![port("http", LB_PORT), port("admin", LB_ADMIN_PORT)]);
    let mut pod_labels = selector();
    pod_labels.extend(run_labels(scenario, run_id));
    let deployment = Deployment {
        metadata: meta(scenario, run_id, role_labels.clone()),
        spec: DeploymentSpec {
            replicas: Some(1),
            selector: pod::selector(selector()),
            template: pod::template(
                pod_labels,
                PodSpec {
                    containers: vec![container],
                    // In its zone, as the local target runs it (hops::load_balancer_zone).
                    affinity: hops::load_balancer_zone(scenario).map(|z| pod::preferred_zone(&z)),
                    service_account_name: Some(LB_NAME.to_owned()),
                    // Its watch and status patches need the ServiceAccount's token.
                    automount_service_account_token: Some(true),
                    ..pod::spec()
                },
            ),
            ..Default::default()
        },
        ..Default::default()
    };
    let service = Service {
        metadata: meta(scenario, run_id, role_labels.clone()),
        spec: Some(http_cluster_ip(selector(), SERVICE_PORT, LB_PORT)),
        ..Default::default()
    };
    Ok(Some(LbObjects {
        service_account: ServiceAccount {
            metadata: meta(scenario, run_id, role_labels.clone()),
            ..Default::default()
        },
        role: Role {
            metadata: meta(scenario, run_id, role_labels.clone()),
            rules: Some(rules()),
        },
        role_binding: RoleBinding {
            metadata: meta(scenario, run_id, role_labels),
            role_ref: RoleRef {
                api_group: Some("rbac.authorization.k8s.io".to_owned()),
                kind: "Role".to_owned(),
                name: LB_NAME.to_owned(),
            },
            subjects: Some(vec![Subject {
                kind: "ServiceAccount".to_owned(),
                name: LB_NAME.to_owned(),
                namespace: Some(ns),
                ..Default::default()
            }]),
        },
        service,
        deployment,
    }))
}

//! The real ingress controller of an `ingress` scenario on the kind target: haproxy-ingress
//! from its pinned image (`harness/kind/third-party.yaml`, `images:`), configured by the
//! scenario, in the run's namespace. This module owns which controller versions can run on kind
//! ([`kind_support`]), the controller's objects ([`objects`], in apply order, server-side-apply
//! ready), the ConfigMap whose rewrites are the scenario's churn ([`config_map`]), and the
//! names the runtime reads back from HAProxy ([`backend_name`], [`pod_name`],
//! [`empty_slot_name`]). Deploying, churning and observing is the kind target's runtime.
//!
//! Upstream facts (jcmoraisjr/haproxy-ingress, v0.16 branch, and haproxy-ingress/charts):
//! - Image and tag: `quay.io/jcmoraisjr/haproxy-ingress:v0.16.1`, the latest v0.16 patch
//!   (`CHANGELOG/CHANGELOG-v0.16.md`, "v0.16.1", 2026-05-04); its image starts as the numeric
//!   user `99` (same file: "changing from the `haproxy` name to its UID `99`", PR #1431).
//! - Ingress API: up to v0.12 the controller reads `extensions/v1beta1` /
//!   `networking.k8s.io/v1beta1` Ingress; v0.13 moved to `networking.k8s.io/v1`
//!   (`CHANGELOG/CHANGELOG-v0.13.md`, "Major improvements"). Kubernetes stopped serving both
//!   beta APIs in v1.22 (Kubernetes deprecated API migration guide, "v1.22"), so v0.6–v0.11
//!   cannot run on the kind cluster's v1.34.
//! - IngressClass: `spec.controller` is `haproxy-ingress.github.io/controller`, with
//!   `--controller-class=X` appending `/X` (`pkg/controller/config/config.go`,
//!   `controllerName`; `docs/content/en/docs/configuration/command-line.md`, "Ingress Class").
//! - The rest is cited where it is used: flags in [`workload`], ConfigMap keys in [`config`],
//!   RBAC in [`rbac`], backend and server names below.

mod config;
mod rbac;
mod workload;

use std::fmt::Display;
use std::sync::OnceLock;

use harness_core::clock::TimeScale;
use harness_core::ingress::{ControllerSettings, ControllerVersion};
use harness_core::scenario::model::{Ingress, Scenario};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::networking::v1::{
    HTTPIngressPath, HTTPIngressRuleValue, Ingress as IngressObject, IngressBackend, IngressClass,
    IngressClassSpec, IngressRule, IngressServiceBackend, IngressSpec, ServiceBackendPort,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::{FLAGSVC_PORT, SIDECAR_PORT, namespace_name, run_labels};
use crate::pinned::{ImagePin, PIN_FILE, PinTable};
use crate::pins::KUBERNETES_VERSION;

pub use config::{config_data, rewrite_comment};
pub use workload::{controller_args, rate_limit_update};

/// The name of the controller's StatefulSet, Service, ConfigMap and ServiceAccount; also the
/// image pin's name.
pub const CONTROLLER: &str = "haproxy-ingress";
/// The IngressClass of the run (per run: see [`ingress_class_name`]) starts with this.
pub const INGRESS_CLASS: &str = "harness-haproxy";
/// HAProxy's HTTP listener in the pod (`http-port`): above 1023, so a non-root HAProxy binds it
/// without `NET_BIND_SERVICE` (Pod Security "restricted" drops every capability).
pub const HTTP_PORT: u16 = 8080;
/// HAProxy's HTTPS listener (`https-port`), unused (no TLS host) but moved off 443 likewise.
pub const HTTPS_PORT: u16 = 8443;
/// The port of the ClusterIP Service `haproxy-ingress` that generators `via: ingress` send to.
pub const SERVICE_PORT: u16 = 80;
/// HAProxy's statistics listener (`stats-port`, the upstream default; keys.md v0.16).
pub const STATS_PORT: u16 = 1936;
/// The statistics as CSV: the template's `listen stats` binds `<bind-ip-addr-stats>:<stats-port>`
/// (empty address by default: every IPv4 address, so the pod proxy reaches it on the pod IP),
/// has `stats uri /` and `stats show-legends` (without which HAProxy leaves the CSV's `addr`
/// empty), and asks for a password only when `stats-auth` is set (default: no auth)
/// (`rootfs/etc/templates/haproxy/haproxy.tmpl`, "Stats"; `buildGlobalStats` in
/// `pkg/converters/ingress/annotations/global.go`). HAProxy serves the CSV form of a stats page
/// at its URI followed by `;csv`. Unverified at v0.16 itself: the index holds the template only
/// at older commits (`009c1139…`, `d2c86bb8…`); the section is the same in both and the v0.16
/// converter still fills the same `Stats` fields.
pub const STATS_CSV_PATH: &str = "/;csv";
/// The controller's own `/healthz` (and `/metrics`) listener, `--healthz-addr` default `:10254`
/// (every address; `command-line.md` v0.16, "Stats"; no authentication on it:
/// `pkg/controller/services/svchealthz.go`).
pub const HEALTHZ_PORT: u16 = 10254;
/// HAProxy's `/healthz` monitor listener (`healthz-port`, the upstream default `10253`), what
/// the chart's liveness and readiness probes ask.
pub const HAPROXY_HEALTHZ_PORT: u16 = 10253;
/// The ConfigMap key whose rewrite reloads HAProxy and changes nothing else: `config-global`
/// becomes the global's `CustomConfig` lines (`pkg/converters/ingress/annotations/global.go`,
/// `buildGlobalCustomConfig`), copied to the end of HAProxy's `global` section (keys.md,
/// "Configuration snippet"; `haproxy.tmpl`, `range $global.CustomConfig`), so a changed `#`
/// comment line makes a new `haproxy.cfg`; a global that differs from the last one cannot be
/// applied through the runtime API, so the controller reloads HAProxy and counts a `full`
/// update (`pkg/haproxy/dynupdate.go`, `checkConfigChange`: "diff outside backends:
/// [global]"; `pkg/haproxy/instance.go`, `IncUpdateFull`).
pub const REWRITE_KEY: &str = "config-global";
/// The IngressClass controller name haproxy-ingress watches without `--controller-class`.
pub const CONTROLLER_NAME: &str = "haproxy-ingress.github.io/controller";
/// The value of [`super::ROLE_LABEL`] on the controller's pods.
pub const INGRESS_ROLE: &str = "ingress";
/// The disabled placeholder address of an empty slot (`pkg/haproxy/types/backend.go`,
/// `AddEmptyEndpoint`: `127.0.0.1:1023`, not enabled).
pub const EMPTY_SLOT_ADDR: &str = "127.0.0.1:1023";

fn builtin_pins() -> &'static Result<PinTable, String> {
    static TABLE: OnceLock<Result<PinTable, String>> = OnceLock::new();
    TABLE.get_or_init(|| PinTable::builtin().map_err(|e| e.to_string()))
}

/// Which controller a scenario's ingress version is on kind, or why it is refused: v0.16 runs
/// (its image pin; the digest may still be missing, [`ImagePin::require_digest`] says so);
/// v0.6 to v0.11 need an Ingress API Kubernetes no longer serves.
pub fn kind_support(settings: &ControllerSettings) -> Result<&'static ImagePin, String> {
    use ControllerVersion::*;
    match settings.version {
        V0_16 => {
            let table = builtin_pins().as_ref().map_err(Clone::clone)?;
            table.image(CONTROLLER, PIN_FILE).map_err(|e| e.to_string())
        }
        v @ (V0_6 | V0_7 | V0_8 | V0_11) => Err(format!(
            "ingress.version {v}: haproxy-ingress {v} reads Ingress objects from extensions/v1beta1 or networking.k8s.io/v1beta1 (it moved to networking.k8s.io/v1 in v0.13), and Kubernetes stopped serving both in v1.22; the kind nodes run Kubernetes {KUBERNETES_VERSION}. Run {v} on the local target (`--target local`), or on kind use `ingress.version: v0.16` with `balanceAlgorithm: roundrobin` and `sortEndpointsBy: ip` (the list sorted as in the incident) or `sortEndpointsBy: random` (shuffled on every reload: the fix) — the variants `v0-16-roundrobin-ip` and `v0-16-roundrobin-random` of scenarios/ingress-hot-podding.yaml"
        )),
    }
}

/// What the controller's objects are rendered from.
#[derive(Debug, Clone)]
pub struct IngressPlan<'a> {
    /// The run id (labels).
    pub run_id: &'a str,
    /// The run's namespace, where everything namespaced goes.
    pub namespace: String,
    pub scenario: &'a Scenario,
    /// The scenario's `ingress`.
    pub ingress: &'a Ingress,
    /// `repo:tag@digest` ([`ImagePin::require_digest`]).
    pub image: String,
    /// The churn's rewrite count, written into [`REWRITE_KEY`] (0 at deploy).
    pub rewrite_generation: u64,
    /// The run's time scale (the update rate limit follows it).
    pub time_scale: TimeScale,
}

impl<'a> IngressPlan<'a> {
    /// The plan of a scenario with `ingress`; `None` without.
    pub fn new(
        scenario: &'a Scenario,
        run_id: &'a str,
        image: String,
        time_scale: TimeScale,
    ) -> Option<IngressPlan<'a>> {
        Some(IngressPlan {
            run_id,
            namespace: namespace_name(run_id),
            scenario,
            ingress: scenario.ingress.as_ref()?,
            image,
            rewrite_generation: 0,
            time_scale,
        })
    }

    /// The same plan at another rewrite generation.
    pub fn at_generation(&self, generation: u64) -> IngressPlan<'a> {
        IngressPlan {
            rewrite_generation: generation,
            ..self.clone()
        }
    }
}

/// The run's IngressClass: one per run (`harness-haproxy-<namespace>`), claimed by this run's
/// controller only (`--controller-class=<namespace>`), so two runs in one cluster neither share
/// nor delete each other's cluster-scoped class.
pub fn ingress_class_name(namespace: &str) -> String {
    format!("{INGRESS_CLASS}-{namespace}")
}

/// The IngressClass `spec.controller` of the run's controller.
pub fn controller_name(namespace: &str) -> String {
    format!("{CONTROLLER_NAME}/{namespace}")
}

/// The HAProxy backend haproxy-ingress renders for a Service port: `<namespace>_<service>_<port>`
/// where `port` is the Service port's `targetPort` as written (number or name)
/// (`pkg/haproxy/types/backends.go`, `buildID`; `pkg/converters/ingress/ingress.go`,
/// `addBackend`: `AcquireBackend(namespace, svcName, port.TargetPort.String())`).
pub fn backend_name(namespace: &str, service: &str, target_port: impl Display) -> String {
    format!("{namespace}_{service}_{target_port}")
}

/// The backend of the scenario's Service in this run (its target port: the sidecar's when
/// there is one).
pub fn service_backend(plan: &IngressPlan<'_>) -> String {
    backend_name(
        &plan.namespace,
        &plan.scenario.service.name,
        target_port(plan.scenario),
    )
}

fn target_port(scenario: &Scenario) -> u16 {
    if scenario.service.sidecar.is_some() {
        SIDECAR_PORT
    } else {
        FLAGSVC_PORT
    }
}

/// The controller pod of ingress replica `replica` (the StatefulSet's ordinal).
pub fn pod_name(replica: u32) -> String {
    format!("{CONTROLLER}-{replica}")
}

/// The HAProxy server name of an empty slot (0-based `slot`): with `backend-server-naming:
/// pod`, filled slots carry the pod's name, empty ones keep the sequence name `srvNNN` of their
/// position (`pkg/haproxy/types/backend.go`, `AddEmptyEndpoint` → `AddEndpoint` with no
/// target ref → `sanitizeName`: `fmt.Sprintf("srv%03d", len(b.Endpoints)+1)`; keys.md,
/// "Backend server naming": "empty slots would still be named as sequences").
pub fn empty_slot_name(slot: usize) -> String {
    format!("srv{:03}", slot + 1)
}

fn meta(plan: &IngressPlan<'_>, name: &str, namespaced: bool) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        namespace: namespaced.then(|| plan.namespace.clone()),
        labels: Some(run_labels(plan.scenario, plan.run_id)),
        ..Default::default()
    }
}

/// The ConfigMap `--configmap` points at, rewritten by the churn (its [`REWRITE_KEY`] holds the
/// generation).
pub fn config_map(plan: &IngressPlan<'_>) -> ConfigMap {
    ConfigMap {
        metadata: meta(plan, CONTROLLER, true),
        data: Some(config_data(plan)),
        ..Default::default()
    }
}

/// `config_map` as rendered, at another rewrite `generation`: only [`REWRITE_KEY`] differs.
pub fn config_map_at(rendered: &ConfigMap, generation: u64) -> ConfigMap {
    let mut next = rendered.clone();
    next.data
        .get_or_insert_with(Default::default)
        .insert(REWRITE_KEY.to_owned(), config::rewrite_comment(generation));
    next
}

fn ingress_class(plan: &IngressPlan<'_>) -> IngressClass {
    IngressClass {
        metadata: meta(plan, &ingress_class_name(&plan.namespace), false),
        spec: Some(IngressClassSpec {
            controller: Some(controller_name(&plan.namespace)),
            ..Default::default()
        }),
    }
}

/// `/` (Prefix) on any host to the scenario's Service port.
fn ingress(plan: &IngressPlan<'_>) -> IngressObject {
    let service = &plan.scenario.service.name;
    IngressObject {
        metadata: meta(plan, service, true),
        spec: Some(IngressSpec {
            ingress_class_name: Some(ingress_class_name(&plan.namespace)),
            rules: Some(vec![IngressRule {
                http: Some(HTTPIngressRuleValue {
                    paths: vec![HTTPIngressPath {
                        path: Some("/".to_owned()),
                        path_type: "Prefix".to_owned(),
                        backend: IngressBackend {
                            service: Some(IngressServiceBackend {
                                name: service.clone(),
                                port: Some(ServiceBackendPort {
                                    number: Some(i32::from(super::SERVICE_PORT)),
                                    ..Default::default()
                                }),
                            }),
                            ..Default::default()
                        },
                    }],
                }),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn value<T: serde::Serialize>(object: &T) -> serde_json::Value {
    // Typed k8s-openapi objects are plain data with string keys: to JSON cannot fail.
    serde_json::to_value(object).expect("a k8s-openapi object serializes to JSON")
}

/// Every object of the controller, in apply order: ServiceAccount, ClusterRole,
/// ClusterRoleBinding, Role, RoleBinding, ConfigMap, IngressClass, Ingress, Service,
/// StatefulSet.
pub fn objects(plan: &IngressPlan<'_>) -> Vec<serde_json::Value> {
    let rbac = rbac::objects(plan);
    vec![
        value(&rbac.service_account),
        value(&rbac.cluster_role),
        value(&rbac.cluster_role_binding),
        value(&rbac.role),
        value(&rbac.role_binding),
        value(&config_map(plan)),
        value(&ingress_class(plan)),
        value(&ingress(plan)),
        value(&workload::service(plan)),
        value(&workload::stateful_set(plan)),
    ]
}

//! The controller's StatefulSet and Service. One controller pod per ingress replica
//! (`ingress.replicas`), each running its own embedded HAProxy, as the chart's Deployment or
//! DaemonSet does (haproxy-ingress/charts `templates/_podtemplate.yaml`); a StatefulSet with
//! `podManagementPolicy: Parallel` so replica `i` is pod `haproxy-ingress-<i>` and all start at
//! once. The ClusterIP Service `haproxy-ingress` (port [`super::SERVICE_PORT`] → HAProxy's
//! [`super::HTTP_PORT`]) is what generators `via: ingress` send to.
//!
//! The pod follows the chart's: `POD_NAME`/`POD_NAMESPACE` from the Downward API (v0.16.0-alpha.1
//! made them mandatory, PR #1287, and the same release made them optional again, PR #1290;
//! v0.16's `pkg/controller/config/config.go` reads them to find the controller's own pod and
//! its pod selector, which status updates and peers use). A StatefulSet owner is not one the
//! selector lookup knows (`getControllerPodSelector` reads ReplicaSets and DaemonSets): it logs
//! that and falls back to the pod's labels without `controller-revision-hash` and
//! `statefulset.kubernetes.io/pod-name`, i.e. every replica — nothing here uses it. The
//! controller's ServiceAccount; liveness and readiness `GET /healthz` on HAProxy's monitor port
//! [`super::HAPROXY_HEALTHZ_PORT`] (chart `values.yaml` `controller.livenessProbe` /
//! `readinessProbe`: path `/healthz`, port `10253`, liveness after 60 s, readiness after 10 s,
//! every 10 s, timeout 1 s, 3 failures — read from the chart copy `0098ab15…`, a v0.14 chart
//! line; the v0.16 chart's values are not in the index; these are the controller's own timings
//! and not scenario time, so they are not scaled), termination grace 60 s (same values file).
//!
//! Security for Pod Security "restricted": the image's user `99` (v0.16.1 names it
//! numerically, CHANGELOG-v0.16 "v0.16.1", PR #1431: "The UID continues the same"), non-root,
//! no privilege escalation, every capability dropped (HAProxy binds ports above 1023 only),
//! `RuntimeDefault` seccomp. The root filesystem stays writable and no volume is mounted: the
//! controller creates and writes `haproxy.cfg`, maps, certificates and sockets under
//! `/etc/haproxy`, `/var/lib/haproxy` and `/var/run/haproxy` (config.go, `defaultDir*` and
//! `os.MkdirAll`). That user 99 may write there is inferred, not read: the image has always
//! started as that user and the chart's default pod (before v0.16.1) mounts nothing over those
//! directories; the v0.16 Dockerfile itself is not in the index (its older copies chown `/run`,
//! `/var/lib/haproxy` and `/etc/haproxy` to the `haproxy` user). v0.16.1's chart mounts
//! emptyDirs on the writable folders (charts PR #106) for read-only root filesystems, which
//! this pod does not use.
//!
//! Flags (`docs/content/en/docs/configuration/command-line.md` of the v0.16 branch, the copy
//! that lists `--disable-ingress-class-api`; `pkg/controller/config/config.go`):
//! - `--configmap=<ns>/haproxy-ingress` (read once at start: a missing ConfigMap stops the
//!   controller), `--watch-namespace=<ns>` (only the run's Ingresses, Services and
//!   EndpointSlices; config.go lists the namespace's Ingresses at start; IngressClasses are
//!   cluster-scoped and still listed and watched, `--disable-ingress-class-api` being off),
//!   `--controller-class=<ns>` (the IngressClass `spec.controller`
//!   `haproxy-ingress.github.io/controller/<ns>`: config.go appends `/` and the suffix);
//! - `--update-status=false` and `--watch-gateway=false`: both default to `true` (the
//!   command-line table said `false` for `--watch-gateway` until v0.16.1 fixed the doc, PR
//!   #1457; its text and config.go say `true`) and each enforces a leader election
//!   (`election := opt.UpdateStatus || opt.AcmeServer || opt.WatchGateway`); with both off, no
//!   replica is a leader and none needs Leases;
//! - `--sort-endpoints-by=<x>` when the scenario sets it (config.go accepts
//!   `ep|endpoint|ip|name|random`), `--sort-backends` when it sets that (`name` when
//!   `--sort-endpoints-by` is not given);
//! - `--rate-limit-update=<r>` ([`rate_limit_update`]).

use std::collections::BTreeMap;

use harness_core::clock::TimeScale;
use harness_core::scenario::model::Ingress;
use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetSpec};
use k8s_openapi::api::core::v1::{
    Capabilities, Container, ContainerPort, HTTPGetAction, PodSecurityContext, PodSpec, Probe,
    SeccompProfile, SecurityContext, Service, TopologySpreadConstraint,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::super::pod::{self, field_env};
use super::super::service::http_cluster_ip;
use super::super::{APP_LABEL, ROLE_LABEL};
use super::{
    CONTROLLER, HAPROXY_HEALTHZ_PORT, HEALTHZ_PORT, HTTP_PORT, INGRESS_ROLE, IngressPlan,
    SERVICE_PORT, STATS_PORT, meta,
};

/// The image's numeric user (haproxy-ingress v0.16.1 `USER 99`).
pub const CONTROLLER_USER: i64 = 99;
/// `--rate-limit-update`'s accepted bounds, in updates per second
/// (`pkg/controller/config/config.go` refuses below 0.05, "Use at least 0.05", and above 10,
/// "max is 10").
pub const RATE_LIMIT_BOUNDS: (f64, f64) = (0.05, 10.0);
/// `--rate-limit-update`'s default: one update every two seconds (of Kubernetes time here).
pub const DEFAULT_RATE_LIMIT: f64 = 0.5;

/// `--rate-limit-update`: how many configuration updates per wall second the controller may
/// make. The upstream default (0.5/s) is Kubernetes time, so it speeds up with the run's time
/// scale; with churn it is at least two updates per (scaled) rewrite interval, so no rewrite
/// waits for the previous one. Rounded up to hundredths, within [`RATE_LIMIT_BOUNDS`] (a
/// rewrite every 0.2 s of wall time or faster is capped at 10/s).
pub fn rate_limit_update(ingress: &Ingress, scale: TimeScale) -> f64 {
    let base = DEFAULT_RATE_LIMIT / scale.factor();
    let churn = ingress
        .rewrite_interval
        .map(|i| scale.wall(i).as_secs_f64())
        .filter(|s| *s > 0.0)
        .map_or(0.0, |s| 2.0 / s);
    let rate = (base.max(churn) * 100.0).ceil() / 100.0;
    rate.clamp(RATE_LIMIT_BOUNDS.0, RATE_LIMIT_BOUNDS.1)
}

/// The controller's command line.
pub fn controller_args(plan: &IngressPlan<'_>) -> Vec<String> {
    let ns = &plan.namespace;
    let settings = &plan.ingress.controller;
    let mut args = vec![
        format!("--configmap={ns}/{CONTROLLER}"),
        format!("--watch-namespace={ns}"),
        format!("--controller-class={ns}"),
        "--update-status=false".to_owned(),
        "--watch-gateway=false".to_owned(),
        format!(
            "--rate-limit-update={}",
            rate_limit_update(plan.ingress, plan.time_scale)
        ),
    ];
    if let Some(by) = settings.sort_endpoints_by {
        args.push(format!("--sort-endpoints-by={}", by.as_str()));
    }
    if settings.sort_backends {
        args.push("--sort-backends".to_owned());
    }
    args
}

fn selector() -> BTreeMap<String, String> {
    BTreeMap::from([
        (APP_LABEL.to_owned(), CONTROLLER.to_owned()),
        (ROLE_LABEL.to_owned(), INGRESS_ROLE.to_owned()),
    ])
}

fn labelled(plan: &IngressPlan<'_>, name: &str) -> ObjectMeta {
    let mut m = meta(plan, name, true);
    m.labels.get_or_insert_default().extend(selector());
    m
}

/// The Service generators `via: ingress` send to.
pub fn service(plan: &IngressPlan<'_>) -> Service {
    Service {
        metadata: labelled(plan, CONTROLLER),
        spec: Some(http_cluster_ip(selector(), SERVICE_PORT, HTTP_PORT)),
        ..Default::default()
    }
}

fn port(name: &str, number: u16) -> ContainerPort {
    ContainerPort {
        name: Some(name.to_owned()),
        container_port: i32::from(number),
        protocol: Some("TCP".to_owned()),
        ..Default::default()
    }
}

fn probe(initial_delay: i32) -> Probe {
    Probe {
        http_get: Some(HTTPGetAction {
            path: Some("/healthz".to_owned()),
            port: IntOrString::Int(i32::from(HAPROXY_HEALTHZ_PORT)),
            scheme: Some("HTTP".to_owned()),
            ..Default::default()
        }),
        initial_delay_seconds: Some(initial_delay),
        period_seconds: Some(10),
        timeout_seconds: Some(1),
        success_threshold: Some(1),
        failure_threshold: Some(3),
        ..Default::default()
    }
}

fn seccomp() -> SeccompProfile {
    SeccompProfile {
        type_: "RuntimeDefault".to_owned(),
        ..Default::default()
    }
}

fn container(plan: &IngressPlan<'_>) -> Container {
    Container {
        name: CONTROLLER.to_owned(),
        image: Some(plan.image.clone()),
        image_pull_policy: Some("IfNotPresent".to_owned()),
        args: Some(controller_args(plan)),
        env: Some(vec![
            field_env("POD_NAME", "metadata.name"),
            field_env("POD_NAMESPACE", "metadata.namespace"),
        ]),
        ports: Some(vec![
            port("http", HTTP_PORT),
            port("stats", STATS_PORT),
            port("healthz", HEALTHZ_PORT),
            port("haproxy-healthz", HAPROXY_HEALTHZ_PORT),
        ]),
        liveness_probe: Some(probe(60)),
        readiness_probe: Some(probe(10)),
        security_context: Some(SecurityContext {
            allow_privilege_escalation: Some(false),
            capabilities: Some(Capabilities {
                drop: Some(vec!["ALL".to_owned()]),
                ..Default::default()
            }),
            run_as_non_root: Some(true),
            run_as_user: Some(CONTROLLER_USER),
            seccomp_profile: Some(seccomp()),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The replicas spread over the zones (`maxSkew: 1`, `ScheduleAnyway`, tainted nodes not
/// counted), as the local target places them (`harness_core::scenario::model::hops`): the
/// scheduler evens out the replicas per zone; which replica lands in which zone is its choice.
fn zone_spread() -> TopologySpreadConstraint {
    TopologySpreadConstraint {
        max_skew: 1,
        topology_key: crate::labels::ZONE_LABEL.to_owned(),
        when_unsatisfiable: "ScheduleAnyway".to_owned(),
        label_selector: Some(pod::selector(selector())),
        node_taints_policy: Some("Honor".to_owned()),
        ..Default::default()
    }
}

/// The StatefulSet: `ingress.replicas` controller pods.
pub fn stateful_set(plan: &IngressPlan<'_>) -> StatefulSet {
    let mut pod_labels = meta(plan, CONTROLLER, true).labels.unwrap_or_default();
    pod_labels.extend(selector());
    StatefulSet {
        metadata: labelled(plan, CONTROLLER),
        spec: StatefulSetSpec {
            replicas: Some(i32::try_from(plan.ingress.replicas).unwrap_or(i32::MAX)),
            pod_management_policy: Some("Parallel".to_owned()),
            service_name: Some(CONTROLLER.to_owned()),
            selector: pod::selector(selector()),
            template: pod::template(
                pod_labels,
                PodSpec {
                    topology_spread_constraints: Some(vec![zone_spread()]),
                    service_account_name: Some(CONTROLLER.to_owned()),
                    automount_service_account_token: Some(true),
                    containers: vec![container(plan)],
                    security_context: Some(PodSecurityContext {
                        run_as_non_root: Some(true),
                        run_as_user: Some(CONTROLLER_USER),
                        seccomp_profile: Some(seccomp()),
                        ..Default::default()
                    }),
                    termination_grace_period_seconds: Some(60),
                    ..Default::default()
                },
            ),
            ..Default::default()
        },
        ..Default::default()
    }
}

//! The service's Deployment: flagsvc and (when the scenario has one) its sidecar in each pod,
//! started with the local target's arguments ([`harness_core::workload_args`]), the scenario's
//! readiness probe on `/readyz` of the container the Service targets, its rolling-update
//! strategy, termination (grace period, preStop) and placement (zones and nodes as required
//! node affinity on the zone label and on `harness/node`, topology spread constraints), and
//! with `loadBalancer.readinessGate` the readiness gate `target-health.harness.io/<service>`
//! the load balancer sets. [`rollout_patch`] is the `rollout` action: a strategic merge patch
//! of the pod template, as `kubectl rollout restart` patches its annotation.
//!
//! Durations are at the run's time scale: the workloads' through `workload_args`, the
//! whole-second fields through [`super::durations`].

use std::collections::BTreeMap;

use harness_core::scenario::model::IntOrPercent;
use harness_core::scenario::model::{
    PreStop, RolloutChange, Scenario, TopologyKey, WhenUnsatisfiable,
};
use harness_core::workload_args::{flagsvc_args, sidecar_args};
use k8s_openapi::api::apps::v1::{
    Deployment, DeploymentSpec, DeploymentStrategy, RollingUpdateDeployment,
};
use k8s_openapi::api::core::v1::{
    ExecAction, HTTPGetAction, Lifecycle, LifecycleHandler, PodReadinessGate, PodSpec, Probe,
    SleepAction, Toleration, TopologySpreadConstraint,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use workload_contract::sidecar::SidecarArgs;

use super::durations::{ServiceSeconds, service_seconds};
use super::pod::{self, base_container, identity_env, node_affinity, port};
use super::readiness_gate::gate_condition;
use super::{
    APP_LABEL, FLAGSVC_PORT, ManifestError, ROLE_LABEL, RenderInput, SIDECAR_ADMIN_PORT,
    SIDECAR_PORT, any_addr, image_of, local_addr, namespace_name, run_labels,
};
use crate::labels::{SCENARIO_NODE_LABEL, ZONE_LABEL};

/// The containers' `terminationMessagePath` (Kubernetes' default).
const TERMINATION_MESSAGE_PATH: &str = "/dev/termination-log";

/// The labels of the service's pods (and the Service's selector).
pub fn pod_labels(scenario: &Scenario, run_id: &str) -> BTreeMap<String, String> {
    let mut labels = run_labels(scenario, run_id);
    labels.insert(APP_LABEL.to_owned(), scenario.service.name.clone());
    labels.insert(ROLE_LABEL.to_owned(), "service".to_owned());
    labels
}

/// The labels that select the service's pods.
pub fn selector_labels(scenario: &Scenario) -> BTreeMap<String, String> {
    BTreeMap::from([
        (APP_LABEL.to_owned(), scenario.service.name.clone()),
        (ROLE_LABEL.to_owned(), "service".to_owned()),
    ])
}

fn seconds(s: i64) -> i32 {
    i32::try_from(s).unwrap_or(i32::MAX)
}

fn int_or_percent(v: IntOrPercent) -> IntOrString {
    match v {
        IntOrPercent::Int(n) => IntOrString::Int(i32::try_from(n).unwrap_or(i32::MAX)),
        IntOrPercent::Percent(p) => IntOrString::String(format!("{p}%")),
    }
}

fn pre_stop(scenario: &Scenario, seconds: &ServiceSeconds) -> Option<Lifecycle> {
    let handler = match &scenario.service.termination.pre_stop {
        PreStop::None => return None,
        PreStop::Sleep(_) => LifecycleHandler {
            sleep: Some(SleepAction {
                seconds: seconds.pre_stop_sleep.unwrap_or_default(),
            }),
            ..Default::default()
        },
        PreStop::Exec(command) => LifecycleHandler {
            exec: Some(ExecAction {
                command: Some(command.clone()),
            }),
            ..Default::default()
        },
    };
    Some(Lifecycle {
        pre_stop: Some(handler),
        ..Default::default()
    })
}

fn spread_constraints(scenario: &Scenario) -> Option<Vec<TopologySpreadConstraint>> {
    let constraints: Vec<_> = scenario
        .service
        .placement
        .topology_spread_constraints
        .iter()
        .map(|c| TopologySpreadConstraint {
            max_skew: i32::try_from(c.max_skew).unwrap_or(i32::MAX),
            topology_key: match c.topology_key {
                TopologyKey::Zone => ZONE_LABEL.to_owned(),
                TopologyKey::Hostname => "kubernetes.io/hostname".to_owned(),
            },
            when_unsatisfiable: match c.when_unsatisfiable {
                WhenUnsatisfiable::DoNotSchedule => "DoNotSchedule".to_owned(),
                WhenUnsatisfiable::ScheduleAnyway => "ScheduleAnyway".to_owned(),
            },
            label_selector: Some(pod::selector(selector_labels(scenario))),
            ..Default::default()
        })
        .collect();
    (!constraints.is_empty()).then_some(constraints)
}

/// The Deployment.
pub fn deployment(
    scenario: &Scenario,
    input: &RenderInput<'_>,
) -> Result<Deployment, ManifestError> {
    let svc = &scenario.service;
    let scale = input.time_scale;
    let secs = service_seconds(scenario, scale)?;
    let zone = match svc.placement.zones.as_slice() {
        [only] => Some(only.as_str()),
        _ => None,
    };
    let flagsvc_listen = if svc.sidecar.is_some() {
        local_addr(FLAGSVC_PORT)
    } else {
        any_addr(FLAGSVC_PORT)
    };
    let mut app = base_container(
        "flagsvc",
        image_of(input.images, "flagsvc")?,
        flagsvc_args(svc.service_time, svc.sse, &svc.app, scale, flagsvc_listen).to_args(),
    );
    app.env = Some(identity_env(zone));
    app.lifecycle = pre_stop(scenario, &secs);
    let mut containers = vec![app];
    let probe_port = match &svc.sidecar {
        Some(limits) => {
            let mut sidecar = base_container(
                "sidecar",
                image_of(input.images, "sidecar")?,
                SidecarArgs {
                    // The kubelet copies what the sidecar writes here when it exits (its final
                    // counters) into the container's terminated state, where the watch reads it.
                    termination_log: Some(TERMINATION_MESSAGE_PATH.into()),
                    ..sidecar_args(
                        limits,
                        &svc.app,
                        scale,
                        any_addr(SIDECAR_PORT),
                        any_addr(SIDECAR_ADMIN_PORT),
                        local_addr(FLAGSVC_PORT),
                    )
                }
                .to_args(),
            );
            sidecar.env = Some(identity_env(zone));
            sidecar.ports = Some(vec![
                port("http", SIDECAR_PORT),
                port("admin", SIDECAR_ADMIN_PORT),
            ]);
            sidecar.lifecycle = pre_stop(scenario, &secs);
            containers.push(sidecar);
            SIDECAR_PORT
        }
        None => {
            containers[0].ports = Some(vec![port("http", FLAGSVC_PORT)]);
            FLAGSVC_PORT
        }
    };
    let probe = svc.readiness_probe;
    let readiness = Probe {
        http_get: Some(HTTPGetAction {
            path: Some("/readyz".to_owned()),
            port: IntOrString::Int(i32::from(probe_port)),
            ..Default::default()
        }),
        period_seconds: Some(seconds(secs.probe_period)),
        initial_delay_seconds: Some(seconds(secs.probe_initial_delay)),
        failure_threshold: Some(i32::try_from(probe.failure_threshold).unwrap_or(i32::MAX)),
        success_threshold: Some(i32::try_from(probe.success_threshold).unwrap_or(i32::MAX)),
        timeout_seconds: Some(1),
        ..Default::default()
    };
    // The container the Service sends to is the one probed (the sidecar when there is one).
    let probed = containers.len() - 1;
    containers[probed].readiness_probe = Some(readiness);

    let strategy = svc.rollout;
    let labels = pod_labels(scenario, input.run_id);
    Ok(Deployment {
        metadata: ObjectMeta {
            name: Some(svc.name.clone()),
            namespace: Some(namespace_name(input.run_id)),
            labels: Some(labels.clone()),
            ..Default::default()
        },
        spec: DeploymentSpec {
            replicas: Some(i32::try_from(svc.replicas).unwrap_or(i32::MAX)),
            selector: pod::selector(selector_labels(scenario)),
            min_ready_seconds: Some(seconds(secs.min_ready)),
            strategy: Some(DeploymentStrategy {
                type_: Some("RollingUpdate".to_owned()),
                rolling_update: Some(RollingUpdateDeployment {
                    max_surge: Some(int_or_percent(strategy.max_surge)),
                    max_unavailable: Some(int_or_percent(strategy.max_unavailable)),
                }),
            }),
            template: pod::template(
                labels,
                PodSpec {
                    containers,
                    affinity: node_affinity(vec![
                        (ZONE_LABEL, svc.placement.zones.clone()),
                        (SCENARIO_NODE_LABEL, svc.placement.nodes.clone()),
                    ]),
                    topology_spread_constraints: spread_constraints(scenario),
                    termination_grace_period_seconds: Some(secs.grace_period),
                    readiness_gates: readiness_gates(scenario),
                    tolerations: not_ready_tolerations(secs.not_ready_toleration),
                    ..pod::spec()
                },
            ),
            ..Default::default()
        },
        ..Default::default()
    })
}

/// What the DefaultTolerationSeconds admission plugin gives a pod without its own
/// (`plugin/pkg/admission/defaulttolerationseconds/admission.go`, v1.34).
const DEFAULT_TOLERATION_SECONDS: i64 = 300;

/// The `node.kubernetes.io/not-ready` and `unreachable` NoExecute tolerations for `seconds`
/// (the scenario's `notReadyToleration` at the run's time scale); none when the admission
/// plugin's default gives the same.
fn not_ready_tolerations(seconds: i64) -> Option<Vec<Toleration>> {
    (seconds != DEFAULT_TOLERATION_SECONDS).then(|| {
        [
            "node.kubernetes.io/not-ready",
            "node.kubernetes.io/unreachable",
        ]
        .into_iter()
        .map(|key| Toleration {
            key: Some(key.to_owned()),
            operator: Some("Exists".to_owned()),
            effect: Some("NoExecute".to_owned()),
            toleration_seconds: Some(seconds),
            ..Default::default()
        })
        .collect()
    })
}

/// The readiness gate the load balancer sets, when the scenario asks for one.
fn readiness_gates(scenario: &Scenario) -> Option<Vec<PodReadinessGate>> {
    scenario
        .load_balancer
        .as_ref()
        .filter(|lb| lb.readiness_gate)
        .map(|_| {
            vec![PodReadinessGate {
                condition_type: gate_condition(scenario),
            }]
        })
}

/// The pod-template annotation a `rollout` sets (after `kubectl rollout restart`'s
/// `kubectl.kubernetes.io/restartedAt`): a new value is a new template, so a new ReplicaSet.
pub const RESTARTED_AT: &str = "harness.io/restarted-at";

/// The scenario as the new revision of `change` runs it.
pub fn revised(scenario: &Scenario, change: &RolloutChange) -> Scenario {
    let mut next = scenario.clone();
    let svc = &mut next.service;
    if let Some(delay) = change.drain_delay {
        svc.app.drain_delay = delay;
    }
    if let Some(pre_stop) = &change.pre_stop {
        svc.termination.pre_stop = pre_stop.clone();
    }
    if let Some(grace) = change.grace_period {
        svc.termination.grace_period = grace;
    }
    next
}

/// The strategic merge patch of the `rollout` action: the pod template's [`RESTARTED_AT`]
/// annotation (`restarted_at`, RFC 3339) and, for a changed setting, the new revision's
/// containers (merged by name: their `args` and `lifecycle`, `null` removing a hook) and grace
/// period. `scenario` is the revision running now.
pub fn rollout_patch(
    scenario: &Scenario,
    change: &RolloutChange,
    input: &RenderInput<'_>,
    restarted_at: &str,
) -> Result<serde_json::Value, ManifestError> {
    let mut template = serde_json::json!({
        "metadata": { "annotations": { RESTARTED_AT: restarted_at } }
    });
    let changed =
        change.drain_delay.is_some() || change.pre_stop.is_some() || change.grace_period.is_some();
    if changed {
        let next = deployment(&revised(scenario, change), input)?;
        let spec = next.spec.template.spec.unwrap_or_default();
        let containers: Vec<serde_json::Value> = spec
            .containers
            .iter()
            .map(|c| {
                serde_json::json!({
                    "name": c.name,
                    "args": c.args,
                    "lifecycle": c.lifecycle,
                })
            })
            .collect();
        template["spec"] = serde_json::json!({
            "terminationGracePeriodSeconds": spec.termination_grace_period_seconds,
            "containers": containers,
        });
    }
    Ok(serde_json::json!({ "spec": { "template": template } }))
}

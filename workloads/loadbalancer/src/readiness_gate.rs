//! The pod readiness gate (`--readiness-gate TYPE`), as the AWS Load Balancer Controller runs
//! it: which pods have the gate and are `ContainersReady` (a pod watch, [`watch_pods`], over
//! the Service's `spec.selector`), and the gate's condition on each endpoint's pod, patched on
//! `pods/{name}/status` when its target's health in the target group changes ([`run_gate`]).
//!
//! Upstream (kubernetes-sigs/aws-load-balancer-controller, read at the commits named):
//! - `pkg/backend/endpoint_resolver.go` (043f39b9), `resolvePodEndpointsWithEndpointsData`: a
//!   ready endpoint is registered; a not-ready one only when its pod `IsContainersReady()` (and
//!   its node is Ready and the endpoint is not terminating); pods not ContainersReady but with
//!   the gate are retried later. The controller gates on any ContainersReady pod; here the pod
//!   must also list the gate (the pods this balancer serves always do) — see
//!   [`crate::endpoint_watch::endpoint_set`]. Nodes are not watched: a node's Ready condition
//!   is not checked.
//! - `pkg/targetgroupbinding/resource_manager.go` (01fac957), `updateTargetHealthPodCondition`
//!   and `updateTargetHealthPodConditionForPod`: only pods that have the gate are patched, and
//!   only the current endpoints' pods (matched targets, and endpoints still registering with
//!   state `initial`, reason `Elb.RegistrationInProgress`, "Target registration is in
//!   progress"); status `True` when the target is `healthy`, else `False`, reason and message
//!   from the target health (reason code and description); no patch when status, reason and
//!   message already match; `lastTransitionTime` now when the status changes, else kept (here:
//!   left out of the patch); a
//!   strategic-merge patch of `status.conditions` carrying `metadata.uid` as a precondition;
//!   a pod gone (404) is not an error. Upstream requeues on failure; here a patch is tried
//!   [`PATCH_ATTEMPTS`] times with backoff, logged, and tried again at the next change or
//!   [`RECHECK`].
//!
//! Target states map to the DescribeTargetHealth reason codes: not registered (or still
//! draining an older registration) → `Elb.RegistrationInProgress`; initial →
//! `Elb.InitialHealthChecking` "Initial health checks in progress"; unhealthy →
//! `Target.FailedHealthChecks` "Health checks failed"; healthy → `True` without reason.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Patch, PatchParams};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Api, Client, ResourceExt};
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use workload_contract::loadbalancer::EndpointSet;

use crate::controller::TargetHealth;
use crate::target_group::TargetState;

/// Patch tries per condition change.
pub const PATCH_ATTEMPTS: u32 = 3;
/// Conditions are compared with the wanted ones at least this often (failed patches retried).
pub const RECHECK: Duration = Duration::from_secs(5);
/// GETs of the Service (for its selector) before the gate gives up.
pub const SERVICE_ATTEMPTS: u32 = 10;

/// The gate's condition on a pod, as it is or as it should be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateCondition {
    /// `True`, `False` or `Unknown`.
    pub status: String,
    pub reason: String,
    pub message: String,
}

/// What the gate knows of a pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodInfo {
    pub uid: Option<String>,
    /// `spec.readinessGates` lists the gate's condition type.
    pub has_gate: bool,
    /// `status.conditions` has `ContainersReady=True`.
    pub containers_ready: bool,
    /// The gate's condition in `status.conditions`, if set.
    pub condition: Option<GateCondition>,
}

/// The Service's pods by name.
pub type PodIndex = BTreeMap<String, PodInfo>;

/// Why the gate cannot run.
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    #[error(
        "--readiness-gate: cannot read Service {service} for its pod selector after {attempts} tries: {source} (the Role needs `get` on services)"
    )]
    Service {
        service: String,
        attempts: u32,
        #[source]
        source: kube::Error,
    },
    #[error(
        "--readiness-gate: Service {0} has no spec.selector, so its pods cannot be found; give it a selector or drop --readiness-gate"
    )]
    NoSelector(String),
}

/// The gate-relevant part of a pod.
pub fn pod_info(pod: &Pod, gate: &str) -> PodInfo {
    let has_gate = pod
        .spec
        .as_ref()
        .and_then(|s| s.readiness_gates.as_ref())
        .is_some_and(|gates| gates.iter().any(|g| g.condition_type == gate));
    let conditions = pod
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    let containers_ready = conditions
        .iter()
        .any(|c| c.type_ == "ContainersReady" && c.status == "True");
    let condition = conditions
        .iter()
        .find(|c| c.type_ == gate)
        .map(|c| GateCondition {
            status: c.status.clone(),
            reason: c.reason.clone().unwrap_or_default(),
            message: c.message.clone().unwrap_or_default(),
        });
    PodInfo {
        uid: pod.metadata.uid.clone(),
        has_gate,
        containers_ready,
        condition,
    }
}

/// The condition for a target in this state.
pub fn condition_for(state: TargetState) -> GateCondition {
    let (status, reason, message) = match state {
        TargetState::Healthy => ("True", "", ""),
        TargetState::Initial => (
            "False",
            "Elb.InitialHealthChecking",
            "Initial health checks in progress",
        ),
        TargetState::Unhealthy => ("False", "Target.FailedHealthChecks", "Health checks failed"),
        TargetState::NotRegistered | TargetState::Draining | TargetState::Gone => (
            "False",
            "Elb.RegistrationInProgress",
            "Target registration is in progress",
        ),
    };
    GateCondition {
        status: status.into(),
        reason: reason.into(),
        message: message.into(),
    }
}

/// The condition each gated endpoint pod should have: (pod, uid, condition).
pub fn wanted(
    pods: &PodIndex,
    endpoints: &EndpointSet,
    health: &TargetHealth,
) -> Vec<(String, Option<String>, GateCondition)> {
    endpoints
        .endpoints
        .iter()
        .filter_map(|e| {
            let info = pods.get(&e.pod).filter(|p| p.has_gate)?;
            let state = health
                .get(&e.pod)
                .copied()
                .unwrap_or(TargetState::NotRegistered);
            Some((e.pod.clone(), info.uid.clone(), condition_for(state)))
        })
        .collect()
}

/// The strategic-merge patch of `pods/{name}/status` that sets the gate's condition (merged
/// by `type`). `last_transition`: only when the status changes; otherwise the pod's time is
/// kept, as the merge leaves fields the patch does not name.
pub fn patch_body(
    gate: &str,
    uid: Option<&str>,
    condition: &GateCondition,
    last_transition: Option<&Time>,
) -> Value {
    let mut cond = json!({ "type": gate, "status": condition.status });
    if let Some(at) = last_transition {
        cond["lastTransitionTime"] = json!(at);
    }
    if !condition.reason.is_empty() {
        cond["reason"] = json!(condition.reason);
    }
    if !condition.message.is_empty() {
        cond["message"] = json!(condition.message);
    }
    let mut body = json!({ "status": { "conditions": [cond] } });
    if let Some(uid) = uid {
        body["metadata"] = json!({ "uid": uid });
    }
    body
}

/// `k=v,k2=v2` of the Service's `spec.selector`.
async fn service_selector(
    services: &Api<Service>,
    namespace: &str,
    service: &str,
    stop: &CancellationToken,
) -> Result<Option<String>, GateError> {
    let mut delay = Duration::from_millis(500);
    let mut attempt = 1;
    loop {
        match services.get(service).await {
            Ok(svc) => {
                let selector = svc.spec.and_then(|s| s.selector).unwrap_or_default();
                if selector.is_empty() {
                    return Err(GateError::NoSelector(format!("{namespace}/{service}")));
                }
                let text = selector
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(",");
                return Ok(Some(text));
            }
            Err(source) if attempt >= SERVICE_ATTEMPTS => {
                return Err(GateError::Service {
                    service: format!("{namespace}/{service}"),
                    attempts: attempt,
                    source,
                });
            }
            Err(e) => tracing::warn!(
                "reading Service {namespace}/{service} for its selector (try {attempt}/{SERVICE_ATTEMPTS}): {e}"
            ),
        }
        tokio::select! {
            () = stop.cancelled() => return Ok(None),
            () = tokio::time::sleep(delay) => {}
        }
        delay = (delay * 2).min(Duration::from_secs(5));
        attempt += 1;
    }
}

/// Watches the Service's pods (its `spec.selector`, read again at every re-list; a changed
/// selector restarts the watch) and publishes what the gate knows of them, until `stop`.
pub async fn watch_pods(
    client: Client,
    namespace: String,
    service: String,
    gate: String,
    index: watch::Sender<PodIndex>,
    stop: CancellationToken,
) -> Result<(), GateError> {
    let services: Api<Service> = Api::namespaced(client.clone(), &namespace);
    let pods: Api<Pod> = Api::namespaced(client, &namespace);
    let Some(mut selector) = service_selector(&services, &namespace, &service, &stop).await? else {
        return Ok(());
    };
    // Each round is one watch with one selector; a round ends when the selector changed.
    loop {
        tracing::info!("readiness gate {gate}: watching pods {selector} in {namespace}");
        let config = watcher::Config::default().labels(&selector);
        let mut stream = watcher::watcher(pods.clone(), config)
            .default_backoff()
            .boxed();
        let mut relist: Option<PodIndex> = None;
        let mut listed = false;
        loop {
            let item = tokio::select! {
                () = stop.cancelled() => return Ok(()),
                item = stream.next() => item,
            };
            match item {
                None => {
                    tracing::error!("readiness gate {gate}: the pod watch ended");
                    return Ok(());
                }
                Some(Err(e)) => {
                    tracing::warn!(
                        "readiness gate {gate}: the pod watch failed, resuming with backoff: {e}"
                    );
                }
                Some(Ok(Event::Init)) => {
                    if listed {
                        match service_selector(&services, &namespace, &service, &stop).await {
                            Ok(Some(now)) if now != selector => {
                                tracing::info!(
                                    "Service {namespace}/{service}: selector {selector} is now {now}"
                                );
                                selector = now;
                                break;
                            }
                            Ok(None) => return Ok(()),
                            Ok(Some(_)) => {}
                            Err(e) => {
                                tracing::warn!("{e}; keeping the selector {selector}");
                            }
                        }
                    }
                    relist = Some(PodIndex::new());
                }
                Some(Ok(Event::InitApply(pod))) => {
                    relist
                        .get_or_insert_with(PodIndex::new)
                        .insert(pod.name_any(), pod_info(&pod, &gate));
                }
                Some(Ok(Event::InitDone)) => {
                    let listed_pods = relist.take().unwrap_or_default();
                    listed = true;
                    index.send_if_modified(|ix| {
                        let changed = *ix != listed_pods;
                        *ix = listed_pods;
                        changed
                    });
                }
                Some(Ok(Event::Apply(pod))) => {
                    let info = pod_info(&pod, &gate);
                    index.send_if_modified(|ix| {
                        ix.insert(pod.name_any(), info.clone()) != Some(info)
                    });
                }
                Some(Ok(Event::Delete(pod))) => {
                    index.send_if_modified(|ix| ix.remove(&pod.name_any()).is_some());
                }
            }
        }
    }
}

/// Waits for a change; `false` once the sender is gone.
async fn changed<T>(rx: &mut watch::Receiver<T>) -> bool {
    rx.changed().await.is_ok()
}

/// Keeps the gate's condition on every gated endpoint pod in line with its target's health,
/// until `stop` (or until its inputs are gone).
pub async fn run_gate(
    client: Client,
    namespace: String,
    gate: String,
    mut pods: watch::Receiver<PodIndex>,
    mut endpoints: watch::Receiver<EndpointSet>,
    mut health: watch::Receiver<TargetHealth>,
    stop: CancellationToken,
) {
    let api: Api<Pod> = Api::namespaced(client, &namespace);
    // What was last patched per (pod, uid): not patched again while the watch catches up.
    let mut sent: BTreeMap<(String, Option<String>), GateCondition> = BTreeMap::new();
    let mut recheck = tokio::time::interval(RECHECK);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            open = changed(&mut pods) => if !open { return },
            open = changed(&mut endpoints) => if !open { return },
            open = changed(&mut health) => if !open { return },
            _ = recheck.tick() => {}
        }
        let index = pods.borrow_and_update().clone();
        let set = endpoints.borrow_and_update().clone();
        let states = health.borrow_and_update().clone();
        let live: BTreeSet<(String, Option<String>)> = index
            .iter()
            .map(|(name, p)| (name.clone(), p.uid.clone()))
            .collect();
        sent.retain(|key, _| live.contains(key));
        for (pod, uid, want) in wanted(&index, &set, &states) {
            let key = (pod.clone(), uid.clone());
            let current = index.get(&pod).and_then(|p| p.condition.as_ref());
            if sent.get(&key) == Some(&want) || (current == Some(&want) && !sent.contains_key(&key))
            {
                continue;
            }
            let status_changed = current.is_none_or(|c| c.status != want.status);
            let at = status_changed.then(|| Time(k8s_openapi::jiff::Timestamp::now()));
            let body = patch_body(&gate, uid.as_deref(), &want, at.as_ref());
            if patch(&api, &pod, &gate, body, status_changed, &stop).await {
                sent.insert(key, want);
            }
        }
    }
}

/// One condition patch with bounded retries; `true` when done (or the pod is gone).
async fn patch(
    api: &Api<Pod>,
    pod: &str,
    gate: &str,
    body: Value,
    status_changed: bool,
    stop: &CancellationToken,
) -> bool {
    let mut delay = Duration::from_millis(200);
    for attempt in 1..=PATCH_ATTEMPTS {
        match api
            .patch_status(pod, &PatchParams::default(), &Patch::Strategic(&body))
            .await
        {
            Ok(_) => {
                tracing::info!(
                    "pod {pod}: condition {gate} set to {} (status changed: {status_changed})",
                    body["status"]["conditions"][0]["status"]
                );
                return true;
            }
            Err(kube::Error::Api(status)) if status.code == 404 || status.code == 409 => {
                // Gone, or replaced by a pod of the same name (the uid precondition).
                tracing::info!("pod {pod}: not patched, {}", status.message);
                return true;
            }
            Err(e) => tracing::warn!(
                "pod {pod}: patching condition {gate} failed (try {attempt}/{PATCH_ATTEMPTS}): {e}"
            ),
        }
        if attempt < PATCH_ATTEMPTS {
            tokio::select! {
                () = stop.cancelled() => return false,
                () = tokio::time::sleep(delay) => {}
            }
            delay *= 2;
        }
    }
    tracing::error!(
        "pod {pod}: condition {gate} not patched after {PATCH_ATTEMPTS} tries; trying again within {RECHECK:?}"
    );
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use workload_contract::loadbalancer::Endpoint;

    const GATE: &str = "target-health.harness.io/flagsvc";

    fn pod(gates: bool, containers_ready: bool) -> Pod {
        let mut pod = json!({
            "metadata": { "name": "pod-0", "uid": "u-0" },
            "spec": { "containers": [] },
            "status": { "conditions": [
                { "type": "ContainersReady", "status": if containers_ready { "True" } else { "False" } },
                { "type": GATE, "status": "False", "reason": "Elb.RegistrationInProgress" }
            ] }
        });
        if gates {
            pod["spec"]["readinessGates"] = json!([{ "conditionType": GATE }]);
        }
        serde_json::from_value(pod).unwrap()
    }

    #[test]
    fn pod_info_reads_gate_containers_ready_and_condition() {
        let info = pod_info(&pod(true, true), GATE);
        assert!(info.has_gate && info.containers_ready);
        assert_eq!(info.uid.as_deref(), Some("u-0"));
        assert_eq!(
            info.condition.map(|c| (c.status, c.reason)),
            Some(("False".into(), "Elb.RegistrationInProgress".into()))
        );
        let info = pod_info(&pod(false, false), GATE);
        assert!(!info.has_gate && !info.containers_ready);
        assert!(!pod_info(&pod(true, true), "other/gate").has_gate);
    }

    #[test]
    fn only_gated_endpoint_pods_get_a_condition_from_their_target_state() {
        let index = PodIndex::from([
            ("pod-0".to_owned(), pod_info(&pod(true, true), GATE)),
            ("pod-1".to_owned(), pod_info(&pod(false, true), GATE)),
            ("pod-2".to_owned(), pod_info(&pod(true, true), GATE)),
        ]);
        let set = EndpointSet {
            endpoints: ["pod-0", "pod-1", "pod-3"]
                .iter()
                .map(|p| Endpoint {
                    pod: (*p).into(),
                    addr: "10.0.0.1:80".parse().unwrap(),
                })
                .collect(),
        };
        let health = TargetHealth::from([("pod-0".to_owned(), TargetState::Healthy)]);
        let got = wanted(&index, &set, &health);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].0, "pod-0");
        assert_eq!(got[0].2.status, "True");
        let got = wanted(&index, &set, &TargetHealth::new());
        assert_eq!(got[0].2.reason, "Elb.RegistrationInProgress");
        assert_eq!(
            condition_for(TargetState::Unhealthy).reason,
            "Target.FailedHealthChecks"
        );
    }

    #[test]
    fn the_patch_sets_one_condition_with_the_uid_precondition() {
        let at = Time(k8s_openapi::jiff::Timestamp::from_second(1_700_000_000).unwrap());
        let body = patch_body(
            GATE,
            Some("u-0"),
            &condition_for(TargetState::Healthy),
            Some(&at),
        );
        assert_eq!(
            body,
            json!({
                "metadata": { "uid": "u-0" },
                "status": { "conditions": [
                    { "type": GATE, "status": "True", "lastTransitionTime": "2023-11-14T22:13:20Z" }
                ] }
            })
        );
        let body = patch_body(GATE, None, &condition_for(TargetState::Initial), None);
        let cond = &body["status"]["conditions"][0];
        assert_eq!(cond["reason"], "Elb.InitialHealthChecking");
        assert!(cond.get("lastTransitionTime").is_none());
        assert!(body.get("metadata").is_none());
    }
}

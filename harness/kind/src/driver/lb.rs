//! The load balancer of a kind run: its objects applied in order (ServiceAccount, Role,
//! RoleBinding, Service, Deployment), its pod found once it is ready, and its accounting
//! (`GET /stats` on its admin port through the API server's pod proxy) put on the run's clock
//! with the same conversion the local target uses ([`harness_core::measure::lb_buckets`]), so
//! `terminationErrorRate`, `requestsAfterRemoval` and `minRoutableTargets` evaluate alike.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use tokio::time::Instant;
use workload_contract::loadbalancer::{LbStats, STATS_PATH};

use super::KindError;
use crate::api::KubeApi;
use crate::manifests::loadbalancer::{LB_ADMIN_PORT, LB_ROLE};
use crate::manifests::{LbObjects, ROLE_LABEL};

/// How long the load balancer's pod may take to become ready.
const LB_READY_LIMIT: Duration = Duration::from_secs(120);

/// Applies the load balancer's objects in order.
pub(super) async fn apply(api: &KubeApi, lb: &LbObjects) -> Result<(), KindError> {
    api.apply_namespaced(&lb.service_account).await?;
    api.apply_namespaced(&lb.role).await?;
    api.apply_namespaced(&lb.role_binding).await?;
    api.apply_namespaced(&lb.service).await?;
    api.apply_namespaced(&lb.deployment).await?;
    Ok(())
}

/// The label selector of the load balancer's pod.
pub fn lb_pod_selector() -> String {
    format!("{ROLE_LABEL}={LB_ROLE}")
}

fn ready(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_none()
        && pod
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// The name of the load balancer's ready pod (polled once a second, bounded).
pub(super) async fn wait_pod(api: &KubeApi, ns: &str) -> Result<String, KindError> {
    let deadline = Instant::now() + LB_READY_LIMIT;
    loop {
        let pods = api.list_pods(ns, &lb_pod_selector()).await?;
        if let Some(name) = pods
            .iter()
            .find(|p| ready(p))
            .and_then(|p| p.metadata.name.clone())
        {
            return Ok(name);
        }
        if Instant::now() >= deadline {
            return Err(KindError::LbNotReady {
                waited: LB_READY_LIMIT,
                pods: pods.iter().map(super::deploy::describe_pod).collect(),
            });
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// The load balancer's accounting, read through the pod proxy.
pub(super) async fn stats(api: &KubeApi, ns: &str, pod: &str) -> Result<LbStats, KindError> {
    let text = api
        .pod_proxy_get(ns, pod, LB_ADMIN_PORT, STATS_PATH)
        .await?;
    serde_json::from_str(&text).map_err(|e| KindError::LbStats {
        pod: pod.to_owned(),
        reason: e.to_string(),
    })
}

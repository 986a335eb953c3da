//! Deploying the real controller: its objects ([`manifests::ingress::objects`]: RBAC,
//! ConfigMap, IngressClass, Ingress, StatefulSet, Service) server-side applied in order after
//! the scenario's Service, a bounded wait until the StatefulSet's replicas are ready, and the
//! [`IngressRuntime`] the observer, the churn and the actions use.

use std::time::Duration;

use harness_core::engine::RunContext;
use harness_core::scenario::model::Scenario;
use tokio::time::Instant;

use super::IngressRuntime;
use super::churn::ChurnSetup;
use super::intents::Intents;
use super::observe::ObserveSetup;
use crate::api::KubeApi;
use crate::driver::KindError;
use crate::manifests::ingress::{self, IngressPlan};
use crate::pinned::apply;

/// How long the controller's pods may take to become ready: the image is pulled from its
/// registry by the kind nodes on a first run.
pub const INGRESS_READY_LIMIT: Duration = Duration::from_secs(300);

/// How often each replica is polled (the sidecar sampler's period).
pub const OBSERVE_PERIOD: Duration = Duration::from_secs(1);

/// How long the observer may run past the load's planned end (the generators' reports are
/// collected then; collect stops it).
pub const OBSERVE_SLACK: Duration = Duration::from_secs(600);

/// Applies every object of the controller in order.
pub async fn apply_objects(client: &kube::Client, plan: &IngressPlan<'_>) -> Result<(), KindError> {
    for object in ingress::objects(plan) {
        apply::apply_value(client, &object)
            .await
            .map_err(|e| KindError::ThirdParty(e.into()))?;
    }
    Ok(())
}

/// Polls the StatefulSet until `replicas` are ready (once a second, bounded by `limit`).
pub async fn wait_ready(
    api: &KubeApi,
    namespace: &str,
    replicas: u32,
    limit: Duration,
) -> Result<(), KindError> {
    let deadline = Instant::now() + limit;
    loop {
        let set = api.get_stateful_set(namespace, ingress::CONTROLLER).await?;
        let ready = set
            .status
            .as_ref()
            .and_then(|s| s.ready_replicas)
            .and_then(|r| u32::try_from(r).ok())
            .unwrap_or(0);
        if ready >= replicas {
            return Ok(());
        }
        if Instant::now() >= deadline {
            let mut pods = Vec::new();
            for i in 0..replicas {
                if let Ok(pod) = api.get_pod(namespace, &ingress::pod_name(i)).await {
                    pods.push(crate::driver::deploy::describe_pod(&pod));
                }
            }
            return Err(KindError::IngressNotReady {
                ready,
                total: replicas,
                waited: limit,
                pods,
            });
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// The runtime of the deployed controller (`None` without `ingress`).
pub fn runtime(scenario: &Scenario, ctx: &RunContext, image: &str) -> Option<IngressRuntime> {
    let plan = IngressPlan::new(scenario, &ctx.run_id, image.to_owned(), ctx.time_scale)?;
    let spec = plan.ingress;
    let namespace = plan.namespace.clone();
    let pods: Vec<String> = (0..spec.replicas).map(ingress::pod_name).collect();
    let observe = ObserveSetup {
        namespace: namespace.clone(),
        pods: pods.clone(),
        backend: ingress::service_backend(&plan),
        stats_port: ingress::STATS_PORT,
        stats_path: ingress::STATS_CSV_PATH.to_owned(),
        metrics_port: ingress::HEALTHZ_PORT,
        period: OBSERVE_PERIOD,
    };
    let churn = spec.rewrite_interval.map(|every| ChurnSetup {
        namespace: namespace.clone(),
        pods,
        interval: ctx.time_scale.wall(every),
        reload_failure_rate: spec.reload_failure_rate,
        seed: ctx.seed,
    });
    Some(IngressRuntime {
        observe,
        churn,
        config_map: ingress::config_map(&plan),
        intents: Intents::default(),
    })
}

/// The controller's cluster-scoped objects (ClusterRole, ClusterRoleBinding, IngressClass:
/// their names carry the namespace), which deleting the namespace does not remove.
pub fn cluster_scoped(plan: &IngressPlan<'_>) -> Vec<apply::ObjectRef> {
    ingress::objects(plan)
        .iter()
        .filter_map(|v| apply::object_ref(v).ok())
        .filter(|r| r.namespace.is_none())
        .collect()
}

/// Deletes `objects` (cluster-scoped); one already gone is fine.
pub async fn delete_cluster_scoped(
    client: &kube::Client,
    objects: &[apply::ObjectRef],
) -> Result<(), KindError> {
    use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind};
    for r in objects {
        let (group, version) = match r.api_version.split_once('/') {
            Some((g, v)) => (g.to_owned(), v.to_owned()),
            None => (String::new(), r.api_version.clone()),
        };
        let resource = ApiResource::from_gvk(&GroupVersionKind {
            group,
            version,
            kind: r.kind.clone(),
        });
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
        match api.delete(&r.name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(e)) if e.code == 404 => {}
            Err(e) => {
                return Err(KindError::Api(crate::api::ApiError::new(
                    format!("deleting {r}"),
                    e,
                )));
            }
        }
    }
    Ok(())
}

//! `harness import --context`: the objects a scenario is imported from, read live and read-only
//! from one namespace of a cluster — its Nodes (cluster-wide), and the namespace's Deployments,
//! Services, EndpointSlices, HorizontalPodAutoscalers (`autoscaling/v2`) and
//! PodDisruptionBudgets. Only `list` calls are made; nothing is written. The CLI turns the
//! objects into a scenario exactly as it does with the same objects read from files.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::core::v1::{Node, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::api::{Api, ListParams};
use kube::{Client, Resource};
use serde::de::DeserializeOwned;

use crate::api::ApiError;

/// Everything `harness import` reads, in the API's order.
#[derive(Debug, Clone, Default)]
pub struct ClusterObjects {
    pub nodes: Vec<Node>,
    pub deployments: Vec<Deployment>,
    pub services: Vec<Service>,
    pub endpoint_slices: Vec<EndpointSlice>,
    pub autoscalers: Vec<HorizontalPodAutoscaler>,
    pub disruption_budgets: Vec<PodDisruptionBudget>,
}

/// Reads the Nodes and `namespace`'s objects through `client` (list calls only).
pub async fn read_namespace(client: &Client, namespace: &str) -> Result<ClusterObjects, ApiError> {
    Ok(ClusterObjects {
        nodes: list(Api::all(client.clone()), "Nodes").await?,
        deployments: list(Api::namespaced(client.clone(), namespace), namespace).await?,
        services: list(Api::namespaced(client.clone(), namespace), namespace).await?,
        endpoint_slices: list(Api::namespaced(client.clone(), namespace), namespace).await?,
        autoscalers: list(Api::namespaced(client.clone(), namespace), namespace).await?,
        disruption_budgets: list(Api::namespaced(client.clone(), namespace), namespace).await?,
    })
}

/// Every object of one kind (all pages).
async fn list<K>(api: Api<K>, scope: &str) -> Result<Vec<K>, ApiError>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug,
{
    let what = if scope == "Nodes" {
        "listing Nodes".to_owned()
    } else {
        format!("listing {}s in namespace {scope}", K::kind(&()))
    };
    let mut items = Vec::new();
    let mut params = ListParams::default().limit(500);
    // Bounded: 2,000 pages of 500 are a million objects.
    for _ in 0..MAX_PAGES {
        let page = api
            .list(&params)
            .await
            .map_err(|e| ApiError::new(what.clone(), e))?;
        items.extend(page.items);
        match page.metadata.continue_ {
            Some(token) if !token.is_empty() => params = params.continue_token(&token),
            _ => return Ok(items),
        }
    }
    Err(ApiError {
        operation: what,
        status: None,
        message: format!(
            "more than {} pages of 500 objects: not a namespace a scenario can be imported from",
            MAX_PAGES
        ),
        cause: None,
    })
}

const MAX_PAGES: usize = 2_000;

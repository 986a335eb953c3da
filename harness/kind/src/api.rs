//! The Kubernetes API as the kind target uses it, over one kube-rs [`Client`]: server-side apply
//! with field manager [`FIELD_MANAGER`], the run's namespace deleted by name, Node label
//! patches and deletions, the Deployment's scale subresource, pod deletion, a finished pod's log
//! and a GET through the API server's pod proxy (the sidecar metrics, without port-forward
//! processes). Every failure is an [`ApiError`] naming the operation and saying what the status
//! means for the run (403: the RBAC the harness needs, docs/kind-target.md#rbac-for-a-shared-cluster; 404, 409,
//! 422...).

use std::fmt;

use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use k8s_openapi::api::core::v1::{Namespace, Node, Pod, Service};
use kube::api::{Api, DeleteParams, ListParams, LogParams, Patch, PatchParams};
use kube::{Client, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::manifests::FIELD_MANAGER;

/// A failed API call.
#[derive(Debug, thiserror::Error)]
pub struct ApiError {
    /// What the harness was doing: "applying Deployment harness-x/flagsvc".
    pub operation: String,
    /// The HTTP status, when the API server answered.
    pub status: Option<u16>,
    /// The API server's message, or the client's error.
    pub message: String,
    /// The client's error, whole (not a `source`: [`ApiError`]'s message already says it).
    pub cause: Option<kube::Error>,
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let meaning = match self.status {
            Some(403) => {
                " — forbidden: the credentials of this kubeconfig context lack a permission the harness needs (docs/kind-target.md#rbac-for-a-shared-cluster lists what it reads and writes)"
            }
            Some(401) => " — unauthorized: the kubeconfig's credentials were refused",
            Some(404) => {
                " — not found: the object (or its namespace) does not exist, or was deleted meanwhile"
            }
            Some(409) => {
                " — conflict: another field manager owns these fields or the object changed meanwhile; delete the run's namespace (`harness-<run id>`) and run again"
            }
            Some(422) => {
                " — invalid: the API server rejected the object; check the scenario values it was rendered from (`harness plan FILE --target kind --output-dir DIR` shows it)"
            }
            Some(code) if code >= 500 => " — the API server failed; is the cluster healthy?",
            _ => "",
        };
        match self.status {
            Some(code) => write!(
                f,
                "{}: HTTP {code}: {}{meaning}",
                self.operation, self.message
            ),
            None => write!(f, "{}: {}", self.operation, self.message),
        }
    }
}

impl ApiError {
    /// `error` while doing `operation`.
    pub fn new(operation: impl Into<String>, error: kube::Error) -> Self {
        let (status, message) = match &error {
            kube::Error::Api(response) => (Some(response.code), response.message.clone()),
            // No answer: say what failed under kube-rs' "client error (Connect)" and what to do.
            other => {
                let (what, todo) = crate::preflight::classify(other);
                (None, format!("{what}; {todo}"))
            }
        };
        ApiError {
            operation: operation.into(),
            status,
            message,
            cause: Some(error),
        }
    }

    /// Whether the API server said 404.
    pub fn is_not_found(&self) -> bool {
        self.status == Some(404)
    }
}

fn describe<K: Resource<DynamicType = ()>>(object: &K) -> String {
    let meta = object.meta();
    let name = meta.name.as_deref().unwrap_or("?");
    match &meta.namespace {
        Some(ns) => format!("{} {ns}/{name}", K::kind(&())),
        None => format!("{} {name}", K::kind(&())),
    }
}

/// The API calls of a run.
#[derive(Clone)]
pub struct KubeApi {
    client: Client,
}

impl KubeApi {
    pub fn new(client: Client) -> Self {
        KubeApi { client }
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Server-side apply of a namespaced object (field manager `harness`, conflicts forced:
    /// the harness owns what it renders).
    pub async fn apply_namespaced<K>(&self, object: &K) -> Result<K, ApiError>
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
            + Clone
            + DeserializeOwned
            + Serialize
            + fmt::Debug,
    {
        let meta = object.meta();
        let (Some(ns), Some(name)) = (meta.namespace.as_deref(), meta.name.as_deref()) else {
            return Err(ApiError {
                operation: format!("applying {}", describe(object)),
                status: None,
                message: "the object has no namespace or name".to_owned(),
                cause: None,
            });
        };
        let api: Api<K> = Api::namespaced(self.client.clone(), ns);
        api.patch(name, &apply_params(), &Patch::Apply(object))
            .await
            .map_err(|e| ApiError::new(format!("applying {}", describe(object)), e))
    }

    /// Server-side apply of the run's Namespace.
    pub async fn apply_namespace(&self, ns: &Namespace) -> Result<Namespace, ApiError> {
        let name = ns.metadata.name.clone().unwrap_or_default();
        let api: Api<Namespace> = Api::all(self.client.clone());
        api.patch(&name, &apply_params(), &Patch::Apply(ns))
            .await
            .map_err(|e| ApiError::new(format!("applying Namespace {name}"), e))
    }

    /// Deletes the run's namespace (and with it everything in it); a missing one is fine.
    pub async fn delete_namespace(&self, name: &str) -> Result<(), ApiError> {
        let api: Api<Namespace> = Api::all(self.client.clone());
        match api.delete(name, &DeleteParams::background()).await {
            Ok(_) => Ok(()),
            Err(e) => {
                let e = ApiError::new(format!("deleting Namespace {name}"), e);
                if e.is_not_found() { Ok(()) } else { Err(e) }
            }
        }
    }

    /// Namespaces carrying `selector` (the run-id label): what cleanup deletes.
    pub async fn namespaces_labelled(&self, selector: &str) -> Result<Vec<String>, ApiError> {
        let api: Api<Namespace> = Api::all(self.client.clone());
        let list = api
            .list(&ListParams::default().labels(selector))
            .await
            .map_err(|e| ApiError::new(format!("listing Namespaces labelled {selector}"), e))?;
        Ok(list
            .items
            .into_iter()
            .filter_map(|n| n.metadata.name)
            .collect())
    }

    pub async fn get_service(&self, ns: &str, name: &str) -> Result<Service, ApiError> {
        let api: Api<Service> = Api::namespaced(self.client.clone(), ns);
        api.get(name)
            .await
            .map_err(|e| ApiError::new(format!("reading Service {ns}/{name}"), e))
    }

    pub async fn get_deployment(&self, ns: &str, name: &str) -> Result<Deployment, ApiError> {
        let api: Api<Deployment> = Api::namespaced(self.client.clone(), ns);
        api.get(name)
            .await
            .map_err(|e| ApiError::new(format!("reading Deployment {ns}/{name}"), e))
    }

    pub async fn get_stateful_set(&self, ns: &str, name: &str) -> Result<StatefulSet, ApiError> {
        let api: Api<StatefulSet> = Api::namespaced(self.client.clone(), ns);
        api.get(name)
            .await
            .map_err(|e| ApiError::new(format!("reading StatefulSet {ns}/{name}"), e))
    }

    pub async fn get_pod(&self, ns: &str, name: &str) -> Result<Pod, ApiError> {
        let api: Api<Pod> = Api::namespaced(self.client.clone(), ns);
        api.get(name)
            .await
            .map_err(|e| ApiError::new(format!("reading Pod {ns}/{name}"), e))
    }

    /// Pods of `ns` matching `selector`.
    pub async fn list_pods(&self, ns: &str, selector: &str) -> Result<Vec<Pod>, ApiError> {
        let api: Api<Pod> = Api::namespaced(self.client.clone(), ns);
        api.list(&ListParams::default().labels(selector))
            .await
            .map(|l| l.items)
            .map_err(|e| ApiError::new(format!("listing Pods {ns} labelled {selector}"), e))
    }

    /// Deletes a pod (its grace period is the pod's own).
    pub async fn delete_pod(&self, ns: &str, name: &str) -> Result<(), ApiError> {
        let api: Api<Pod> = Api::namespaced(self.client.clone(), ns);
        api.delete(name, &DeleteParams::default())
            .await
            .map(|_| ())
            .map_err(|e| ApiError::new(format!("deleting Pod {ns}/{name}"), e))
    }

    /// Sets `spec.replicas` through the Deployment's scale subresource.
    pub async fn scale(&self, ns: &str, name: &str, replicas: u32) -> Result<(), ApiError> {
        let api: Api<Deployment> = Api::namespaced(self.client.clone(), ns);
        let patch = serde_json::json!({ "spec": { "replicas": replicas } });
        api.patch_scale(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map(|_| ())
            .map_err(|e| ApiError::new(format!("scaling Deployment {ns}/{name} to {replicas}"), e))
    }

    /// A strategic merge patch of a Deployment (the `rollout` action's pod-template change);
    /// returns the Deployment as patched (its new `metadata.generation`).
    pub async fn patch_deployment(
        &self,
        ns: &str,
        name: &str,
        patch: &serde_json::Value,
    ) -> Result<Deployment, ApiError> {
        let api: Api<Deployment> = Api::namespaced(self.client.clone(), ns);
        api.patch(name, &PatchParams::default(), &Patch::Strategic(patch))
            .await
            .map_err(|e| {
                ApiError::new(format!("patching Deployment {ns}/{name}'s pod template"), e)
            })
    }

    /// Sets labels on a Node (a merge patch: other labels stay).
    pub async fn label_node(&self, node: &str, key: &str, value: &str) -> Result<(), ApiError> {
        let api: Api<Node> = Api::all(self.client.clone());
        let patch = serde_json::json!({ "metadata": { "labels": { key: value } } });
        api.patch(node, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map(|_| ())
            .map_err(|e| ApiError::new(format!("labelling Node {node} {key}={value}"), e))
    }

    /// Every Node (`zoneNetwork`: their zones and pod CIDRs when a fault starts).
    pub async fn list_nodes(&self) -> Result<Vec<Node>, ApiError> {
        let api: Api<Node> = Api::all(self.client.clone());
        api.list(&ListParams::default())
            .await
            .map(|l| l.items)
            .map_err(|e| ApiError::new("listing Nodes", e))
    }

    /// Deletes a Node object; a missing one is fine.
    pub async fn delete_node(&self, node: &str) -> Result<(), ApiError> {
        let api: Api<Node> = Api::all(self.client.clone());
        match api.delete(node, &DeleteParams::default()).await {
            Ok(_) => Ok(()),
            Err(e) => {
                let e = ApiError::new(format!("deleting Node {node}"), e);
                if e.is_not_found() { Ok(()) } else { Err(e) }
            }
        }
    }

    /// The log of a pod's container (a finished generator's report).
    pub async fn logs(&self, ns: &str, pod: &str, container: &str) -> Result<String, ApiError> {
        let api: Api<Pod> = Api::namespaced(self.client.clone(), ns);
        let params = LogParams {
            container: Some(container.to_owned()),
            ..Default::default()
        };
        api.logs(pod, &params)
            .await
            .map_err(|e| ApiError::new(format!("reading the log of Pod {ns}/{pod}"), e))
    }

    /// A container's log followed until the container ends (what a generator prints while it
    /// stops, read even when its pod is deleted meanwhile).
    pub async fn follow_logs(
        &self,
        ns: &str,
        pod: &str,
        container: &str,
    ) -> Result<String, ApiError> {
        use futures::AsyncReadExt;
        let operation = format!("following the log of Pod {ns}/{pod}");
        let api: Api<Pod> = Api::namespaced(self.client.clone(), ns);
        let params = LogParams {
            container: Some(container.to_owned()),
            follow: true,
            ..Default::default()
        };
        let stream = api
            .log_stream(pod, &params)
            .await
            .map_err(|e| ApiError::new(operation.clone(), e))?;
        let mut stream = Box::pin(stream);
        let mut text = String::new();
        stream
            .read_to_string(&mut text)
            .await
            .map_err(|e| ApiError {
                operation,
                status: None,
                message: e.to_string(),
                cause: None,
            })?;
        Ok(text)
    }

    /// `GET path` on a pod's `port` through the API server's pod proxy
    /// (`/api/v1/namespaces/NS/pods/POD:PORT/proxy/PATH`).
    pub async fn pod_proxy_get(
        &self,
        ns: &str,
        pod: &str,
        port: u16,
        path: &str,
    ) -> Result<String, ApiError> {
        let url = format!(
            "/api/v1/namespaces/{ns}/pods/{pod}:{port}/proxy/{}",
            path.trim_start_matches('/')
        );
        let operation = format!("GET {path} of Pod {ns}/{pod} port {port} through the pod proxy");
        let request = http::Request::get(&url)
            .body(Vec::new())
            .map_err(|e| ApiError {
                operation: operation.clone(),
                status: None,
                message: e.to_string(),
                cause: None,
            })?;
        self.client
            .request_text(request)
            .await
            .map_err(|e| ApiError::new(operation, e))
    }
}

fn apply_params() -> PatchParams {
    PatchParams::apply(FIELD_MANAGER).force()
}

//! Applying a release file: split into its YAML documents, each object server-side applied in
//! file order (field manager `harness`, conflicts forced) whatever its kind — kube's
//! `DynamicObject` with the `ApiResource` taken from its `apiVersion` and `kind` (kube's
//! pluralizer; namespaced exactly when the document names a namespace, as upstream release
//! files do for every namespaced object) — then a bounded wait until every
//! CustomResourceDefinition in it is `Established` and every Deployment `Available`.

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use serde_json::Value;
use tokio::time::Instant;

use crate::api::ApiError;
use crate::manifests::FIELD_MANAGER;

/// Why a release could not be installed.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error("{source_name}: document {index}: {reason}")]
    Document {
        source_name: String,
        index: usize,
        reason: String,
    },
    #[error("{source_name}: not YAML: {reason}")]
    Yaml { source_name: String, reason: String },
    #[error(transparent)]
    Api(#[from] ApiError),
    #[error(
        "{what} not ready after {}s: {}; look at the pods of those namespaces (image pulls need internet)",
        waited.as_secs(),
        pending.join(", ")
    )]
    Timeout {
        what: String,
        waited: Duration,
        pending: Vec<String>,
    },
}

/// One object of a release, as applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectRef {
    pub api_version: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
}

impl std::fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} {ns}/{}", self.kind, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}

/// The objects of a multi-document YAML stream, in order (empty documents skipped). Every
/// document must be an object with `apiVersion`, `kind` and `metadata.name`.
pub fn split(text: &str, source_name: &str) -> Result<Vec<Value>, ApplyError> {
    let mut options = serde_saphyr::Options::default();
    // CRDs are deep and large; the file's size is bounded by the download and its content by
    // its pinned hash.
    let mut budget = serde_saphyr::Budget::default();
    budget.max_nodes = 50_000_000;
    budget.max_events = 200_000_000;
    budget.max_depth = 512;
    budget.max_documents = 100_000;
    options.budget = Some(budget);
    let docs: Vec<Value> =
        serde_saphyr::from_str_multiple_with_options(text, options).map_err(|e| {
            ApplyError::Yaml {
                source_name: source_name.to_owned(),
                reason: e.to_string(),
            }
        })?;
    let docs: Vec<Value> = docs.into_iter().filter(|d| !d.is_null()).collect();
    for (i, doc) in docs.iter().enumerate() {
        object_ref(doc).map_err(|reason| ApplyError::Document {
            source_name: source_name.to_owned(),
            index: i + 1,
            reason,
        })?;
    }
    Ok(docs)
}

/// What `doc` is, or why it is no Kubernetes object.
pub fn object_ref(doc: &Value) -> Result<ObjectRef, String> {
    let text = |v: &Value| v.as_str().filter(|s| !s.is_empty()).map(str::to_owned);
    let api_version = text(&doc["apiVersion"]).ok_or("no `apiVersion`")?;
    let kind = text(&doc["kind"]).ok_or("no `kind`")?;
    if kind.ends_with("List") {
        return Err(format!(
            "`{kind}`: lists are not applied; give each item its own document"
        ));
    }
    let name =
        text(&doc["metadata"]["name"]).ok_or_else(|| format!("{kind}: no `metadata.name`"))?;
    Ok(ObjectRef {
        api_version,
        kind,
        namespace: text(&doc["metadata"]["namespace"]),
        name,
    })
}

fn api_resource(r: &ObjectRef) -> ApiResource {
    let (group, version) = match r.api_version.split_once('/') {
        Some((g, v)) => (g.to_owned(), v.to_owned()),
        None => (String::new(), r.api_version.clone()),
    };
    ApiResource::from_gvk(&GroupVersionKind {
        group,
        version,
        kind: r.kind.clone(),
    })
}

/// Server-side applies one object of any kind.
pub async fn apply_value(client: &Client, doc: &Value) -> Result<ObjectRef, ApplyError> {
    let r = object_ref(doc).map_err(|reason| ApplyError::Document {
        source_name: "object".into(),
        index: 1,
        reason,
    })?;
    let resource = api_resource(&r);
    let api: Api<DynamicObject> = match &r.namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &resource),
        None => Api::all_with(client.clone(), &resource),
    };
    let params = PatchParams::apply(FIELD_MANAGER).force();
    api.patch(&r.name, &params, &Patch::Apply(doc))
        .await
        .map_err(|e| ApiError::new(format!("applying {r}"), e))?;
    Ok(r)
}

/// Server-side applies every object in order; returns what was applied.
pub async fn apply_all(client: &Client, docs: &[Value]) -> Result<Vec<ObjectRef>, ApplyError> {
    let mut applied = Vec::with_capacity(docs.len());
    for doc in docs {
        applied.push(apply_value(client, doc).await?);
    }
    Ok(applied)
}

/// How long and how often to poll for readiness.
#[derive(Debug, Clone, Copy)]
pub struct Waits {
    pub limit: Duration,
    pub every: Duration,
}

impl Default for Waits {
    /// Image pulls of a fresh cluster: a few minutes.
    fn default() -> Self {
        Waits {
            limit: Duration::from_secs(300),
            every: Duration::from_secs(2),
        }
    }
}

fn condition_true(conditions: Option<&[(String, String)]>, kind: &str) -> bool {
    conditions
        .unwrap_or_default()
        .iter()
        .any(|(t, s)| t == kind && s == "True")
}

/// Polls until every named CRD has condition `Established: True` (bounded by `waits`).
pub async fn wait_established(
    client: &Client,
    names: &[String],
    waits: Waits,
) -> Result<(), ApplyError> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let deadline = Instant::now() + waits.limit;
    let mut pending: Vec<String> = names.to_vec();
    loop {
        let mut still = Vec::new();
        for name in &pending {
            let crd = api.get(name).await.map_err(|e| {
                ApiError::new(format!("reading CustomResourceDefinition {name}"), e)
            })?;
            let conditions: Option<Vec<(String, String)>> = crd
                .status
                .and_then(|s| s.conditions)
                .map(|c| c.into_iter().map(|c| (c.type_, c.status)).collect());
            if !condition_true(conditions.as_deref(), "Established") {
                still.push(name.clone());
            }
        }
        pending = still;
        if pending.is_empty() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(ApplyError::Timeout {
                what: "CustomResourceDefinitions (condition Established)".into(),
                waited: waits.limit,
                pending,
            });
        }
        tokio::time::sleep(waits.every).await;
    }
}

/// Polls until every Deployment (namespace, name) has condition `Available: True`.
pub async fn wait_available(
    client: &Client,
    deployments: &[(String, String)],
    waits: Waits,
) -> Result<(), ApplyError> {
    let deadline = Instant::now() + waits.limit;
    let mut pending: Vec<(String, String)> = deployments.to_vec();
    loop {
        let mut still = Vec::new();
        for (ns, name) in &pending {
            let api: Api<Deployment> = Api::namespaced(client.clone(), ns);
            let d = api
                .get(name)
                .await
                .map_err(|e| ApiError::new(format!("reading Deployment {ns}/{name}"), e))?;
            let conditions: Option<Vec<(String, String)>> =
                d.status.and_then(|s| s.conditions).map(|c| {
                    c.into_iter()
                        .map(|c| (c.type_.unwrap_or_default(), c.status.unwrap_or_default()))
                        .collect()
                });
            if !condition_true(conditions.as_deref(), "Available") {
                still.push((ns.clone(), name.clone()));
            }
        }
        pending = still;
        if pending.is_empty() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(ApplyError::Timeout {
                what: "Deployments (condition Available)".into(),
                waited: waits.limit,
                pending: pending
                    .iter()
                    .map(|(ns, n)| format!("Deployment {ns}/{n}"))
                    .collect(),
            });
        }
        tokio::time::sleep(waits.every).await;
    }
}

/// Applies a release's objects in order, then waits for its CRDs to be Established and its
/// Deployments to be Available.
pub async fn install(
    client: &Client,
    docs: &[Value],
    waits: Waits,
) -> Result<Vec<ObjectRef>, ApplyError> {
    let applied = apply_all(client, docs).await?;
    let crds: Vec<String> = applied
        .iter()
        .filter(|r| r.kind == "CustomResourceDefinition")
        .map(|r| r.name.clone())
        .collect();
    wait_established(client, &crds, waits).await?;
    let deployments: Vec<(String, String)> = applied
        .iter()
        .filter(|r| r.kind == "Deployment")
        .map(|r| {
            (
                r.namespace.clone().unwrap_or_else(|| "default".into()),
                r.name.clone(),
            )
        })
        .collect();
    wait_available(client, &deployments, waits).await?;
    Ok(applied)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_are_split_in_order_and_checked() {
        let text = "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: keda}\n---\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: op, namespace: keda}\n";
        let docs = split(text, "keda.yaml").unwrap();
        let refs: Vec<String> = docs
            .iter()
            .map(|d| object_ref(d).unwrap().to_string())
            .collect();
        assert_eq!(refs, ["Namespace keda", "Deployment keda/op"]);
        let bad = "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\nkind: ConfigMap\n";
        let err = split(bad, "x.yaml").unwrap_err().to_string();
        assert_eq!(err, "x.yaml: document 2: no `apiVersion`");
    }

    #[test]
    fn resources_come_from_api_version_and_kind() {
        let r = ObjectRef {
            api_version: "monitoring.coreos.com/v1".into(),
            kind: "Prometheus".into(),
            namespace: Some("n".into()),
            name: "p".into(),
        };
        let res = api_resource(&r);
        assert_eq!(
            (res.group.as_str(), res.plural.as_str()),
            ("monitoring.coreos.com", "prometheuses")
        );
        let core = ObjectRef {
            api_version: "v1".into(),
            kind: "ServiceAccount".into(),
            namespace: None,
            name: "s".into(),
        };
        let res = api_resource(&core);
        assert_eq!(
            (
                res.group.as_str(),
                res.version.as_str(),
                res.plural.as_str()
            ),
            ("", "v1", "serviceaccounts")
        );
    }
}

//! The objects `harness import --from FILE...` reads: any mix of Nodes, Deployments, Services,
//! EndpointSlices, HorizontalPodAutoscalers (`autoscaling/v2`) and PodDisruptionBudgets, as
//! single objects, Lists (`kubectl get nodes,deployments,... -o yaml` prints one `List` of
//! mixed kinds) or several documents, read with the loader `harness hints` uses
//! ([`crate::commands::kube_yaml`]). Objects of other kinds (Pods, ReplicaSets, …) are counted
//! and skipped. A single object is decoded where it stands, so its errors carry the file's line
//! and column; an item of a List is decoded on its own and its errors name the file, the
//! List's line, the item's index, kind and name.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, anyhow};
use harness_kind::import::ClusterObjects;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::commands::kube_yaml::{Source, yaml_error};

/// Objects read from files, and the kinds skipped (kind → count).
#[derive(Debug, Default)]
pub struct FileObjects {
    pub objects: ClusterObjects,
    pub skipped: BTreeMap<String, usize>,
}

/// Reads every file in order.
pub fn read_files(paths: &[std::path::PathBuf]) -> anyhow::Result<FileObjects> {
    let mut out = FileObjects::default();
    for path in paths {
        read_file(path, &mut out)?;
    }
    Ok(out)
}

#[derive(Deserialize)]
struct Head {
    kind: Option<String>,
    #[serde(rename = "apiVersion")]
    api_version: Option<String>,
}

#[derive(Deserialize)]
struct AnyList {
    #[serde(default)]
    items: Vec<serde_json::Value>,
}

fn read_file(path: &Path, out: &mut FileObjects) -> anyhow::Result<()> {
    let src = Source::read(path)?;
    for doc in src.documents() {
        let padded = doc.padded();
        let head: Head = serde_saphyr::from_str(&padded).map_err(|e| yaml_error(&src.name, &e))?;
        let at = format!("{}:{}", src.name, doc.first_line);
        let Some(kind) = head.kind else {
            return Err(anyhow!(
                "{at}:1: document has no `kind`: give the objects as `kubectl get ... -o yaml` prints them"
            ));
        };
        if kind == "List" || kind.ends_with("List") {
            let list: AnyList =
                serde_saphyr::from_str(&padded).map_err(|e| yaml_error(&src.name, &e))?;
            for (index, item) in list.items.into_iter().enumerate() {
                let text = |pointer: &str| item.pointer(pointer).and_then(|v| v.as_str());
                let item_kind = text("/kind")
                    .or_else(|| kind.strip_suffix("List"))
                    .filter(|k| !k.is_empty())
                    .ok_or_else(|| anyhow!("{at}: items[{index}] has no `kind`"))?
                    .to_owned();
                let api_version = text("/apiVersion").map(str::to_owned);
                let name = text("/metadata/name").unwrap_or("?");
                let place = format!("{at}: items[{index}] ({item_kind} {name})");
                let object = Object::Item(item.clone(), place);
                add(out, &item_kind, api_version.as_deref(), object)?;
            }
        } else {
            let object = Object::Document {
                file: &src.name,
                text: padded.clone(),
                place: at,
            };
            add(out, &kind, head.api_version.as_deref(), object)?;
        }
    }
    Ok(())
}

/// One object, not yet decoded.
enum Object<'a> {
    /// A whole document (its text padded to the file's lines, so positions are the file's).
    Document {
        file: &'a str,
        text: String,
        place: String,
    },
    /// An item of a List, and where it is.
    Item(serde_json::Value, String),
}

impl Object<'_> {
    fn place(&self) -> &str {
        match self {
            Object::Document { place, .. } | Object::Item(_, place) => place,
        }
    }

    fn decode<T: DeserializeOwned>(self) -> anyhow::Result<T> {
        match self {
            Object::Document { file, text, .. } => {
                serde_saphyr::from_str::<T>(&text).map_err(|e| yaml_error(file, &e))
            }
            Object::Item(value, place) => {
                serde_json::from_value(value).with_context(|| format!("{place}: cannot read it"))
            }
        }
    }
}

/// Adds the object to its kind's list, or counts it as skipped.
fn add(
    out: &mut FileObjects,
    kind: &str,
    api_version: Option<&str>,
    object: Object<'_>,
) -> anyhow::Result<()> {
    let o = &mut out.objects;
    match kind {
        "Node" => o.nodes.push(object.decode()?),
        "Deployment" => o.deployments.push(object.decode()?),
        "Service" => o.services.push(object.decode()?),
        "EndpointSlice" => o.endpoint_slices.push(object.decode()?),
        "PodDisruptionBudget" => o.disruption_budgets.push(object.decode()?),
        "HorizontalPodAutoscaler" if api_version == Some("autoscaling/v2") => {
            o.autoscalers.push(object.decode()?)
        }
        "HorizontalPodAutoscaler" => {
            return Err(anyhow!(
                "{}: a HorizontalPodAutoscaler of {}: the import reads autoscaling/v2 (its metrics and behavior); print it with `kubectl get hpa.v2.autoscaling -o yaml`",
                object.place(),
                api_version.unwrap_or("no apiVersion")
            ));
        }
        other => *out.skipped.entry(other.to_owned()).or_default() += 1,
    }
    Ok(())
}

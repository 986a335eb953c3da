//! The cells of `--matrix PATH=V1,V2 [--matrix ...]`, as `harness run` (one run per cell, see
//! `run`) and `harness plan --target kind` (one plan per cell) take it: one cell per
//! combination of the values (several axes multiply; each value is a `--set` override, checked
//! like the file before anything runs), each named for its directory under the output
//! directory (`<out>/<path>=<value>,.../`).
//!
//! `kind.nodeImage=IMG1,IMG2` is the kind target's axis, not a scenario path: the node image
//! (so the Kubernetes version) of the cluster each cell creates; its directory is named by the
//! version (`kind.nodeImage=v1.33.1`). On kind every cell of a matrix creates its own cluster,
//! `harness-<scenario>-m<N>[-v<major>-<minor>-<patch>]`, so cells never share one (even with
//! `--keep`), unless `--cluster`/`--context` names the one cluster every cell reuses.

pub mod run;

use std::path::Path;

use anyhow::anyhow;
use harness_core::scenario::model::Scenario;
use harness_core::scenario::{Override, load_scenario_with};
use harness_kind::cluster::names;
use harness_kind::node_image::{self, NodeImage};

use super::target::{KindCell, TargetName};
use crate::exit::Failure;

/// The kind target's matrix axis: the node image of the cluster each cell creates.
pub const NODE_IMAGE_AXIS: &str = "kind.nodeImage";

/// One `--matrix PATH=V1,V2,...` axis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Axis {
    pub path: String,
    pub values: Vec<String>,
}

impl Axis {
    pub fn parse(text: &str) -> Result<Axis, String> {
        let (path, values) = text
            .split_once('=')
            .filter(|(p, v)| !p.trim().is_empty() && !v.trim().is_empty())
            .ok_or_else(|| {
                format!("`{text}` is not PATH=V1,V2 (e.g. `ingress.version=v0.6,v0.16`)")
            })?;
        let values: Vec<String> = values.split(',').map(|v| v.trim().to_owned()).collect();
        if values.iter().any(String::is_empty) {
            return Err(format!("`{text}`: an empty value between commas"));
        }
        Ok(Axis {
            path: path.trim().to_owned(),
            values,
        })
    }
}

/// Every combination, first axis slowest: each a list of (path, value).
pub fn combinations(axes: &[Axis]) -> Vec<Vec<(String, String)>> {
    let mut out: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for axis in axes {
        out = out
            .into_iter()
            .flat_map(|combo| {
                axis.values.iter().map(move |v| {
                    let mut next = combo.clone();
                    next.push((axis.path.clone(), v.clone()));
                    next
                })
            })
            .collect();
    }
    out
}

/// `ingress.version=v0.6,service.replicas=4`, safe as a directory name; a node image is
/// shown by its Kubernetes version (`kind.nodeImage=v1.33.1`).
fn label(combo: &[(String, String)]) -> String {
    combo
        .iter()
        .map(|(p, v)| {
            let shown = match NodeImage::parse(v) {
                Ok(image) if p == NODE_IMAGE_AXIS => image.version_label(),
                _ => v.clone(),
            };
            format!("{p}={shown}")
        })
        .collect::<Vec<_>>()
        .join(",")
        .replace(['/', ' '], "_")
}

/// One combination, checked: its directory name, its `--set` overrides and what it changes
/// on the kind target.
#[derive(Debug)]
pub struct Cell {
    pub label: String,
    pub overrides: Vec<Override>,
    /// The scenario with the overrides, as checked.
    pub scenario: Scenario,
    pub kind: KindCell,
}

/// What the cells are run on.
pub struct CellTarget<'a> {
    pub target: TargetName,
    /// The kind target creates the cells' clusters (no --cluster/--context).
    pub creates_cluster: bool,
    /// `--node-image`, which a `kind.nodeImage` axis excludes.
    pub node_image: Option<&'a NodeImage>,
}

/// Every combination of `axes`, checked (scenario values like the file, node images for form,
/// floor and what the scenario needs) before anything runs; and the scenario's name.
pub fn cells(
    axes: &[Axis],
    set: &[Override],
    file: &Path,
    variant: Option<&str>,
    on: &CellTarget<'_>,
) -> Result<(Vec<Cell>, String), Failure> {
    let invalid = |message: String| Failure::InvalidInput(anyhow!(message));
    let image_axes = axes.iter().filter(|a| a.path == NODE_IMAGE_AXIS).count();
    if let Some(other) = axes
        .iter()
        .find(|a| a.path.starts_with("kind.") && a.path != NODE_IMAGE_AXIS)
    {
        return Err(invalid(format!(
            "--matrix {}: the kind target's only matrix axis is {NODE_IMAGE_AXIS} (the node image, hence the Kubernetes version, of the cluster each run creates)",
            other.path
        )));
    }
    if image_axes > 0 {
        let refusal = if image_axes > 1 {
            Some(format!(
                "--matrix {NODE_IMAGE_AXIS} is given twice; list every image in one axis"
            ))
        } else if on.target == TargetName::Local {
            Some(format!(
                "--matrix {NODE_IMAGE_AXIS}: the local target has no node image; it models one Kubernetes version, {} (the release kube-model's controllers are ported from). Add --target kind to run each image in its own kind cluster",
                kube_model::KUBERNETES_VERSION
            ))
        } else if !on.creates_cluster {
            Some(format!(
                "--matrix {NODE_IMAGE_AXIS}: the cluster exists (--cluster, --context or --allow-existing-cluster); its nodes' image is theirs. Leave those out so that the harness creates one cluster per image"
            ))
        } else {
            on.node_image.map(|image| {
                format!(
                    "--node-image {image} and --matrix {NODE_IMAGE_AXIS} both choose the node image; give the images in the axis only"
                )
            })
        };
        if let Some(message) = refusal {
            return Err(invalid(message));
        }
    }
    let mut cells: Vec<Cell> = Vec::new();
    let mut name = String::new();
    for (index, combo) in combinations(axes).iter().enumerate() {
        let mut overrides = set.to_vec();
        let mut image = None;
        for (path, value) in combo {
            if path == NODE_IMAGE_AXIS {
                image = Some(
                    NodeImage::parse(value)
                        .map_err(|e| invalid(format!("--matrix {path}={value}: {e}")))?,
                );
                continue;
            }
            overrides.push(
                Override::new(path, value)
                    .map_err(|e| invalid(format!("--matrix {path}={value}: {e}")))?,
            );
        }
        let label = label(combo);
        let scenario = load_scenario_with(file, variant, &overrides)
            .map_err(|e| invalid(format!("--matrix {label}: {e}")))?;
        if let Some(image) = &image {
            let refused = node_image::refusals(&scenario, image);
            if !refused.is_empty() {
                return Err(invalid(format!("--matrix {label}: {}", refused.join("; "))));
            }
        }
        if cells.iter().any(|c| c.label == label) {
            return Err(invalid(format!(
                "--matrix: two combinations would share the directory `{label}` (two node images of the same Kubernetes version?); give each value once"
            )));
        }
        let cluster_suffix = (on.target == TargetName::Kind && on.creates_cluster).then(|| {
            let number = format!("m{}", index + 1);
            match &image {
                Some(image) => format!("{number}-{}", image.name_part()),
                None => number,
            }
        });
        name.clone_from(&scenario.name);
        cells.push(Cell {
            label,
            overrides,
            scenario,
            kind: KindCell {
                node_image: image,
                cluster_suffix,
            },
        });
    }
    Ok((cells, name))
}

/// `1. kind.nodeImage=v1.33.1: cluster harness-x-m1-v1-33-1, node image kindest/node:v1.33.1`.
pub fn describe(index: usize, cell: &Cell, scenario: &str, default_image: &NodeImage) -> String {
    let mut line = format!("{}. {}", index + 1, cell.label);
    if let Some(suffix) = &cell.kind.cluster_suffix {
        let image = cell.kind.node_image.as_ref().unwrap_or(default_image);
        line.push_str(&format!(
            ": cluster {}-{suffix}, node image {image}",
            names::cluster_name(scenario)
        ));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_multiply_first_axis_slowest() {
        let axes = vec![
            Axis::parse("ingress.version=v0.6,v0.16").unwrap(),
            Axis::parse("service.replicas=4,8").unwrap(),
        ];
        let labels: Vec<String> = combinations(&axes).iter().map(|c| label(c)).collect();
        assert_eq!(
            labels,
            [
                "ingress.version=v0.6,service.replicas=4",
                "ingress.version=v0.6,service.replicas=8",
                "ingress.version=v0.16,service.replicas=4",
                "ingress.version=v0.16,service.replicas=8"
            ]
        );
        assert!(Axis::parse("ingress.version").is_err());
        let images = [Axis::parse(
            "kind.nodeImage=kindest/node:v1.33.1,kindest/node:v1.34.11@sha256:44e222ee2132dab25ff87301682f89eb82c7880ea3a1bf543bfe9708fd08d67d",
        )
        .unwrap()];
        let labels: Vec<String> = combinations(&images).iter().map(|c| label(c)).collect();
        assert_eq!(
            labels,
            ["kind.nodeImage=v1.33.1", "kind.nodeImage=v1.34.11"]
        );
        assert!(Axis::parse("a=1,,2").is_err());
    }
}

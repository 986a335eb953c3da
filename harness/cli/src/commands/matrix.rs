//! The cells of `--matrix PATH=V1,V2 [--matrix ...]`, as `harness run` (one run per cell, see
//! `run`) and `harness plan --target kind` (one plan per cell) take it: one cell per
//! combination of the values (several axes multiply; each value is a `--set` override, checked
//! like the file before anything runs), each with its own directory under the output
//! directory, named readably (`<out>/ingress.version-v0.16/`, several axes joined with `_`; see
//! `name`). After the last run, `rollup` prints and writes the table of every cell
//! (`matrix.md`, `matrix.json`) and which cell made the exit code.
//!
//! `kind.nodeImage=IMG1,IMG2` is the kind target's axis, not a scenario path: the node image
//! (so the Kubernetes version) of the cluster each cell creates; its directory is named by the
//! version (`kind.nodeImage-v1.33.1`). On kind every cell of a matrix creates its own cluster,
//! `harness-<scenario>-m<N>[-v<major>-<minor>-<patch>]` (N the cell's number, as in the listing
//! and in a directory name that needs `~N` to stay unique), so cells never share one (even with
//! `--keep`), unless `--cluster`/`--context` names the one cluster every cell reuses.

mod name;
pub mod rollup;
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
        if let Some((_, twice)) = values
            .iter()
            .enumerate()
            .find(|(i, v)| values[..*i].contains(v))
        {
            return Err(format!(
                "`{text}`: `{twice}` is given twice; give each value once"
            ));
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

/// A value as a cell shows it: a node image by its Kubernetes version (`v1.33.1`), anything
/// else as given.
fn shown(path: &str, value: &str) -> String {
    match NodeImage::parse(value) {
        Ok(image) if path == NODE_IMAGE_AXIS => image.version_label(),
        _ => value.to_owned(),
    }
}

/// `ingress.version=v0.6, service.replicas=4`: a combination as `--matrix` takes it, for
/// messages.
fn given(combo: &[(String, String)]) -> String {
    combo
        .iter()
        .map(|(p, v)| format!("{p}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One combination, checked: its directory name, its values, its `--set` overrides and what it
/// changes on the kind target.
#[derive(Debug)]
pub struct Cell {
    /// The directory under the matrix's (`ingress.version-v0.16`), unique among the cells.
    pub name: String,
    /// Each axis's path and value, as shown (a node image by its version).
    pub values: Vec<(String, String)>,
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
    let combos = combinations(axes);
    let names = name::cell_names(
        &combos
            .iter()
            .map(|c| c.iter().map(|(p, v)| (p.clone(), shown(p, v))).collect())
            .collect::<Vec<_>>(),
    );
    let mut cells: Vec<Cell> = Vec::new();
    let mut name = String::new();
    for ((index, combo), cell_name) in combos.iter().enumerate().zip(names) {
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
        let scenario = load_scenario_with(file, variant, &overrides)
            .map_err(|e| invalid(format!("--matrix {}: {e}", given(combo))))?;
        if let Some(image) = &image {
            let refused = node_image::refusals(&scenario, image);
            if !refused.is_empty() {
                return Err(invalid(format!(
                    "--matrix {}: {}",
                    given(combo),
                    refused.join("; ")
                )));
            }
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
            name: cell_name,
            values: combo
                .iter()
                .map(|(p, v)| (p.clone(), shown(p, v)))
                .collect(),
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

/// `1. kind.nodeImage-v1.33.1: cluster harness-x-m1-v1-33-1, node image kindest/node:v1.33.1`.
pub fn describe(index: usize, cell: &Cell, scenario: &str, default_image: &NodeImage) -> String {
    let mut line = format!("{}. {}", index + 1, cell.name);
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

    fn names(axes: &[Axis]) -> Vec<String> {
        let combos: Vec<Vec<(String, String)>> = combinations(axes)
            .iter()
            .map(|c| c.iter().map(|(p, v)| (p.clone(), shown(p, v))).collect())
            .collect();
        name::cell_names(&combos)
    }

    #[test]
    fn axes_multiply_first_axis_slowest() {
        let axes = vec![
            Axis::parse("ingress.version=v0.6,v0.16").unwrap(),
            Axis::parse("service.replicas=4,8").unwrap(),
        ];
        assert_eq!(
            names(&axes),
            [
                "ingress.version-v0.6_service.replicas-4",
                "ingress.version-v0.6_service.replicas-8",
                "ingress.version-v0.16_service.replicas-4",
                "ingress.version-v0.16_service.replicas-8"
            ]
        );
        assert_eq!(
            given(&combinations(&axes)[1]),
            "ingress.version=v0.6, service.replicas=8"
        );
        assert!(Axis::parse("ingress.version").is_err());
        let images = [Axis::parse(
            "kind.nodeImage=kindest/node:v1.33.1,kindest/node:v1.34.11@sha256:44e222ee2132dab25ff87301682f89eb82c7880ea3a1bf543bfe9708fd08d67d",
        )
        .unwrap()];
        assert_eq!(
            names(&images),
            ["kind.nodeImage-v1.33.1", "kind.nodeImage-v1.34.11"]
        );
        // Two images of one Kubernetes version: told apart by the cells' numbers.
        let same_version = [Axis::parse(
            "kind.nodeImage=kindest/node:v1.34.11,kindest/node:v1.34.11@sha256:44e222ee2132dab25ff87301682f89eb82c7880ea3a1bf543bfe9708fd08d67d",
        )
        .unwrap()];
        assert_eq!(
            names(&same_version),
            ["kind.nodeImage-v1.34.11~1", "kind.nodeImage-v1.34.11~2"]
        );
        assert!(Axis::parse("a=1,,2").is_err());
        assert_eq!(
            Axis::parse("a=1,2,1").unwrap_err(),
            "`a=1,2,1`: `1` is given twice; give each value once"
        );
    }
}

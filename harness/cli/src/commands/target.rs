//! What `harness run` and `harness plan` run on, shared by them and by the matrix cells: the
//! target (`--target`), what one run changes on the kind target beyond the flags (a matrix
//! cell's node image and cluster suffix), and the refusal of a node image whose Kubernetes
//! lacks what the scenario needs.

use std::path::Path;

use anyhow::anyhow;
use harness_core::scenario::model::Scenario;
use harness_kind::node_image::{self, NodeImage};

use crate::exit::Failure;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TargetName {
    Local,
    Kind,
}

impl TargetName {
    /// The name as `--target` takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            TargetName::Local => "local",
            TargetName::Kind => "kind",
        }
    }
}

/// What one run changes on the kind target beyond the flags: a matrix cell's node image and
/// the suffix of the cluster it creates.
#[derive(Debug, Clone, Default)]
pub struct KindCell {
    pub node_image: Option<NodeImage>,
    pub cluster_suffix: Option<String>,
}

/// Exit 2 when `image`'s Kubernetes cannot run `scenario` (read from `file`), with every reason.
pub fn refuse_node_image(
    file: &Path,
    scenario: &Scenario,
    image: &NodeImage,
) -> Result<(), Failure> {
    let refused = node_image::refusals(scenario, image);
    if refused.is_empty() {
        return Ok(());
    }
    Err(Failure::InvalidInput(anyhow!(
        "{}: cannot run on node image {image}: {}",
        file.display(),
        refused.join("; ")
    )))
}

//! `harness plan FILE`: what a run would do — pod placement, zone CPU ratios, hints and the
//! pods each zone's clients reach, at load start and after each timeline action — predicted on
//! the control-plane models without starting anything. With `--target kind --output-dir DIR`
//! it also writes the kind cluster config and every object the run would apply, in apply
//! order (`kind-config.yaml`, `manifests.yaml` and one numbered file per object), starting
//! nothing; `--node-image` chooses the cluster's image, and `--matrix` (as `harness run` takes
//! it, `kind.nodeImage` included) writes each combination into `DIR/<cell>/` (named as `run
//! --matrix` names its cells: `kind.nodeImage-v1.33.1_load.duration-30s`) and lists
//! the cells with their cluster names and node images.

use std::path::PathBuf;

use anyhow::anyhow;
use harness_core::plan::plan;
use harness_core::scenario::{Override, load_scenario_with};

use super::kind_plan;
use super::matrix::{self, Axis, CellTarget};
use super::target::{KindCell, TargetName};
use crate::exit::{Failure, Outcome};

#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    /// The scenario file.
    pub file: PathBuf,
    /// Apply this variant (see the file's `variants`); `base` is the base document.
    #[arg(long)]
    pub variant: Option<String>,
    /// Override one value of the scenario (repeatable), as `harness run --set` does.
    #[arg(long = "set", value_name = "PATH=VALUE", value_parser = Override::parse)]
    pub set: Vec<Override>,
    /// Seed of the scheduler's tie-breaking (same as `harness run --seed`).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub output: Format,
    /// List every pod of every step, however many (above 30 pods a step is summarised per
    /// zone and node).
    #[arg(long)]
    pub verbose: bool,
    /// `kind`: also write the kind config and the run's manifests (needs --output-dir).
    #[arg(long, value_enum, default_value_t = TargetName::Local)]
    pub target: TargetName,
    /// With --target kind: the directory to write the kind config and manifests to.
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// With --target kind: the host's CPUs (default: this machine's online CPUs).
    #[arg(long, value_name = "N")]
    pub host_cpus: Option<u32>,
    /// With --target kind: the image list `make images` wrote.
    #[arg(
        long,
        value_name = "PATH",
        default_value = "target/harness-images.json"
    )]
    pub images: PathBuf,
    /// With --target kind: the run id the objects are labelled with.
    #[arg(long, default_value = "plan")]
    pub run_id: String,
    /// With --target kind: the node image of the cluster (as `harness run --node-image`).
    #[arg(long, value_name = "IMAGE", value_parser = harness_kind::node_image::NodeImage::parse)]
    pub node_image: Option<harness_kind::node_image::NodeImage>,
    /// With --target kind --output-dir: plan every combination (as `harness run --matrix`,
    /// `kind.nodeImage=IMG1,IMG2` included), each into its own directory under DIR.
    #[arg(long, value_name = "PATH=V1,V2,...", value_parser = Axis::parse)]
    pub matrix: Vec<Axis>,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

pub fn run(args: PlanArgs) -> Outcome {
    if !args.matrix.is_empty() {
        return matrix(&args);
    }
    if args.node_image.is_some() && args.target != TargetName::Kind {
        return Err(Failure::InvalidInput(anyhow!(
            "--node-image is the kind cluster's node image: add --target kind --output-dir DIR"
        )));
    }
    let scenario = load_scenario_with(&args.file, args.variant.as_deref(), &args.set)
        .map_err(|e| Failure::InvalidInput(anyhow!("{e}")))?;
    match (args.target, &args.output_dir) {
        (TargetName::Kind, Some(dir)) => kind_plan::write(
            &kind_input(&args),
            &scenario,
            dir,
            &create_options(&args, None),
        )?,
        (TargetName::Kind, None) => {
            return Err(Failure::InvalidInput(anyhow!(
                "--target kind: pass --output-dir DIR, where the kind config and the manifests are written"
            )));
        }
        (_, Some(_)) => {
            return Err(Failure::InvalidInput(anyhow!(
                "--output-dir writes the kind target's files: add --target kind"
            )));
        }
        _ => {}
    }
    let planned = plan(&scenario, args.seed).map_err(|e| {
        Failure::InvalidInput(anyhow!(
            "{}: the service's pods cannot be scheduled: {e}",
            args.file.display()
        ))
    })?;
    match args.output {
        Format::Text if args.verbose => crate::output::print(&planned.to_verbose_text()),
        Format::Text => crate::output::print(&planned.to_text()),
        Format::Json => crate::output::print(&format!(
            "{}\n",
            serde_json::to_string_pretty(&planned)
                .map_err(|e| Failure::Infrastructure(e.into()))?
        )),
    }
    Ok(())
}

/// What the kind plan's files are written for besides the scenario, from the flags.
fn kind_input(args: &PlanArgs) -> kind_plan::Input<'_> {
    kind_plan::Input {
        file: &args.file,
        variant: args.variant.as_deref(),
        host_cpus: args.host_cpus,
        images: &args.images,
        run_id: &args.run_id,
        seed: args.seed,
    }
}

/// The cluster a kind plan shows: `--node-image` (or a matrix cell's) and the cell's suffix.
fn create_options(args: &PlanArgs, cell: Option<&KindCell>) -> harness_kind::driver::CreateOptions {
    let image = cell
        .and_then(|c| c.node_image.clone())
        .or_else(|| args.node_image.clone())
        .unwrap_or_else(harness_kind::node_image::NodeImage::pinned);
    harness_kind::driver::CreateOptions {
        node_image: image,
        cluster_suffix: cell.and_then(|c| c.cluster_suffix.clone()),
    }
}

/// `plan --target kind --output-dir DIR --matrix ...`: every cell's kind config and objects
/// into `DIR/<cell>/`, and one line per cell on stdout.
fn matrix(args: &PlanArgs) -> Outcome {
    let kind = TargetName::Kind;
    let Some(dir) = args.output_dir.as_ref().filter(|_| args.target == kind) else {
        return Err(Failure::InvalidInput(anyhow!(
            "plan --matrix writes each combination's kind config and objects: add --target kind --output-dir DIR"
        )));
    };
    let (cells, name) = matrix::cells(
        &args.matrix,
        &args.set,
        &args.file,
        args.variant.as_deref(),
        &CellTarget {
            target: kind,
            creates_cluster: true,
            node_image: args.node_image.as_ref(),
        },
    )?;
    let default_image = args
        .node_image
        .clone()
        .unwrap_or_else(harness_kind::node_image::NodeImage::pinned);
    let mut listing = format!("{} kind clusters for {}:\n", cells.len(), name);
    for (index, cell) in cells.iter().enumerate() {
        let cell_dir = dir.join(&cell.name);
        kind_plan::write(
            &kind_input(args),
            &cell.scenario,
            &cell_dir,
            &create_options(args, Some(&cell.kind)),
        )?;
        listing.push_str(&format!(
            "  {} -> {}\n",
            matrix::describe(index, cell, &name, &default_image),
            cell_dir.display()
        ));
    }
    crate::output::print(&listing);
    Ok(())
}

//! `harness plan FILE`: what a run would do — pod placement, zone CPU ratios, hints and the
//! pods each zone's clients reach, at load start and after each timeline action — predicted on
//! the control-plane models without starting anything.

use std::path::PathBuf;

use anyhow::anyhow;
use harness_core::engine::plan::plan;
use harness_core::scenario::{Override, load_scenario_with};

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
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

pub fn run(args: PlanArgs) -> Outcome {
    let scenario = load_scenario_with(&args.file, args.variant.as_deref(), &args.set)
        .map_err(|e| Failure::InvalidInput(anyhow!("{e}")))?;
    let planned = plan(&scenario, args.seed).map_err(|e| {
        Failure::InvalidInput(anyhow!(
            "{}: the service's pods cannot be scheduled: {e}",
            args.file.display()
        ))
    })?;
    match args.output {
        Format::Text => crate::output::print(&planned.to_text()),
        Format::Json => crate::output::print(&format!(
            "{}\n",
            serde_json::to_string_pretty(&planned)
                .map_err(|e| Failure::Infrastructure(e.into()))?
        )),
    }
    Ok(())
}

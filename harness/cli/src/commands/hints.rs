//! `harness hints` (being written).

use crate::exit::{Failure, Outcome};

#[derive(Debug, clap::Args)]
pub struct HintsArgs {}

pub fn run(_args: HintsArgs) -> Outcome {
    Err(Failure::InvalidInput(anyhow::anyhow!("`harness hints` is not available in this build")))
}

//! `harness validate` (being written).

use crate::exit::{Failure, Outcome};

#[derive(Debug, clap::Args)]
pub struct ValidateArgs {}

pub fn run(_args: ValidateArgs) -> Outcome {
    Err(Failure::InvalidInput(anyhow::anyhow!("`harness validate` is not available in this build")))
}

//! `harness schema` (being written).

use crate::exit::{Failure, Outcome};

#[derive(Debug, clap::Args)]
pub struct SchemaArgs {}

pub fn run(_args: SchemaArgs) -> Outcome {
    Err(Failure::InvalidInput(anyhow::anyhow!("`harness schema` is not available in this build")))
}

//! `harness schema`: prints the JSON Schema (draft 2020-12) of scenario files, for editors
//! and other tools. Field descriptions are the format's documentation.

use crate::exit::{Failure, Outcome};

#[derive(Debug, clap::Args)]
pub struct SchemaArgs {}

pub fn run(_args: SchemaArgs) -> Outcome {
    let schema = harness_core::scenario::json_schema();
    let text = serde_json::to_string_pretty(&schema)
        .map_err(|e| Failure::Infrastructure(anyhow::anyhow!("cannot render the schema: {e}")))?;
    println!("{text}");
    Ok(())
}

//! `harness schema`: prints the JSON Schema (draft 2020-12) of scenario files, for editors
//! and other tools, or with `summary` the schema of a run's `summary.json`, with `compare`
//! that of `harness compare`'s `compare.json`. Field descriptions
//! are the formats' documentation.

use crate::exit::{Failure, Outcome};

#[derive(Debug, clap::Args)]
pub struct SchemaArgs {
    /// Which document: a scenario file, a run's summary.json, or compare.json.
    #[arg(value_enum, default_value_t = Document::Scenario)]
    pub document: Document,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Document {
    Scenario,
    Summary,
    Compare,
}

pub fn run(args: SchemaArgs) -> Outcome {
    let schema = match args.document {
        Document::Scenario => harness_core::scenario::json_schema(),
        Document::Summary => harness_core::report::summary_json_schema(),
        Document::Compare => harness_core::compare::compare_json_schema(),
    };
    let text = serde_json::to_string_pretty(&schema)
        .map_err(|e| Failure::Infrastructure(anyhow::anyhow!("cannot render the schema: {e}")))?;
    crate::output::print(&format!("{text}\n"));
    Ok(())
}

//! `harness validate FILE...`: checks scenario files strictly — the base document and every
//! variant — and prints every problem as `file:line:column: path: message`. Exit 0 when every
//! file is valid, 2 otherwise.

use std::path::PathBuf;

use harness_core::scenario::validate_file;

use crate::exit::{Failure, Outcome};

#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// Scenario files to check.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

pub fn run(args: ValidateArgs) -> Outcome {
    let mut invalid_files = 0;
    let mut problems = 0;
    for file in &args.files {
        match validate_file(file) {
            Ok(variants) if variants.is_empty() => println!("ok: {}", file.display()),
            Ok(variants) => println!("ok: {} (variants: {})", file.display(), variants.join(", ")),
            Err(errors) => {
                eprintln!("{errors}");
                invalid_files += 1;
                problems += errors.diagnostics.len();
            }
        }
    }
    if invalid_files == 0 {
        return Ok(());
    }
    let total = args.files.len();
    let files = if total == 1 {
        "1 file".to_owned()
    } else {
        format!("{invalid_files} of {total} files")
    };
    let noun = if problems == 1 { "problem" } else { "problems" };
    Err(Failure::InvalidInput(anyhow::anyhow!(
        "{problems} {noun} in {files}"
    )))
}

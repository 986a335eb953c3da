//! `harness pins lock`: records the SHA-256 of every pinned third-party release
//! (`harness/kind/third-party.yaml`) by downloading each URL, and the manifest digest of every
//! pinned image tag from its registry — the one step that needs internet; a run then verifies
//! every download against it and runs every image by digest.

use std::path::PathBuf;

use anyhow::anyhow;
use harness_kind::pinned::{self, PIN_FILE, fetch};

use crate::exit::{Failure, Outcome};

#[derive(Debug, clap::Args)]
pub struct PinsArgs {
    #[command(subcommand)]
    pub command: PinsCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum PinsCommand {
    /// Download every pinned URL and write its sha256 into the pin file, and resolve every
    /// pinned image tag to its digest (needs internet); review the diff, commit it and rebuild.
    Lock {
        /// The pin file.
        #[arg(long, value_name = "PATH", default_value = PIN_FILE)]
        file: PathBuf,
    },
}

pub fn run(args: PinsArgs) -> Outcome {
    match args.command {
        PinsCommand::Lock { file } => {
            if !file.is_file() {
                return Err(Failure::InvalidInput(anyhow!(
                    "{}: no such pin file; run from the repository root or pass --file PATH",
                    file.display()
                )));
            }
            let runtime = tokio::runtime::Runtime::new().map_err(|e| {
                Failure::Infrastructure(anyhow!("cannot start the async runtime: {e}"))
            })?;
            let fetcher = fetch::Fetcher::new(fetch::default_cache_dir())
                .map_err(|e| Failure::Infrastructure(e.into()))?;
            let report = runtime
                .block_on(pinned::lock_file(&file, &fetcher))
                .map_err(|e| match e {
                    pinned::ThirdPartyError::Pins(p) => Failure::InvalidInput(p.into()),
                    other => Failure::Infrastructure(other.into()),
                })?;
            for (name, sha) in report.releases {
                println!("{name}: sha256 {sha}");
            }
            for (name, digest) in report.images {
                println!("{name}: digest {digest}");
            }
            eprintln!(
                "wrote {}; review `git diff {}`, commit it, and rebuild the harness (the table is built in)",
                file.display(),
                file.display()
            );
            Ok(())
        }
    }
}

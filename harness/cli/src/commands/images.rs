//! `harness images`: builds one Docker image per workload binary — `FROM scratch`, the binary
//! statically linked by cargo on this machine, tagged by the binary's SHA-256 — and writes a
//! manifest of which image is which (default `target/harness-images.json`). Images already
//! present under their content tag are not rebuilt. Exit 3 when cargo or docker fails (the
//! message carries the command to paste), 2 for an unusable `--rust-target`.

use std::path::PathBuf;

use anyhow::{Context as _, anyhow};
use harness_kind::exec::Toolbox;
use harness_kind::images::{self, BuildOptions, ImageError, Manifest};
use harness_kind::tools;

use crate::exit::{Failure, Outcome};

#[derive(Debug, clap::Args)]
pub struct ImagesArgs {
    /// The repository (cargo workspace) root.
    #[arg(long, default_value = ".", value_name = "DIR")]
    pub workspace: PathBuf,
    /// Rust target of the binaries (default: the Docker engine's architecture:
    /// x86_64-unknown-linux-gnu or aarch64-unknown-linux-gnu).
    #[arg(long, value_name = "TRIPLE")]
    pub rust_target: Option<String>,
    /// Do not run cargo: package the binaries already in target/TRIPLE/image/ (built elsewhere,
    /// e.g. inside an arm64 Linux container on Apple Silicon).
    #[arg(long)]
    pub no_cargo: bool,
    /// Where to write the manifest (JSON: workload, image, binary SHA-256).
    #[arg(long, value_name = "PATH")]
    pub manifest: Option<PathBuf>,
}

pub fn run(args: ImagesArgs) -> Outcome {
    let toolbox = Toolbox::new();
    tools::check_docker(&toolbox).map_err(|e| Failure::Infrastructure(e.into()))?;
    let rust_target = match args.rust_target {
        Some(target) => target,
        None => {
            let arch = toolbox
                .output(&images::docker_arch())
                .map_err(|e| Failure::Infrastructure(e.into()))?
                .stdout;
            images::rust_target_for_docker_arch(&arch)
                .ok_or_else(|| {
                    Failure::InvalidInput(anyhow!(
                        "the Docker engine runs on `{}`, for which the harness has no Rust target; pass --rust-target",
                        arch.trim()
                    ))
                })?
                .to_owned()
        }
    };
    let mut opts = BuildOptions::new(&args.workspace, &rust_target);
    opts.run_cargo = !args.no_cargo;
    eprintln!(
        "building {} images for {rust_target} ({})",
        opts.workloads.len(),
        if opts.run_cargo {
            "cargo build --profile image, statically linked"
        } else {
            "prebuilt binaries"
        }
    );
    let built = images::build_images(&toolbox, &opts).map_err(|e| match e {
        ImageError::UnknownTarget(_) => Failure::InvalidInput(e.into()),
        e => Failure::Infrastructure(e.into()),
    })?;
    for image in &built {
        let note = if image.built { "built" } else { "up to date" };
        println!("{}  ({note})", image.image);
    }
    let manifest_path = args
        .manifest
        .unwrap_or_else(|| args.workspace.join("target/harness-images.json"));
    let manifest = Manifest::new(&rust_target, built);
    let text =
        serde_json::to_string_pretty(&manifest).map_err(|e| Failure::Infrastructure(e.into()))?;
    std::fs::write(&manifest_path, text + "\n")
        .with_context(|| format!("cannot write {}", manifest_path.display()))
        .map_err(Failure::Infrastructure)?;
    eprintln!("manifest: {}", manifest_path.display());
    Ok(())
}

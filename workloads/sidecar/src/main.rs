//! The `sidecar` binary: parses flags, binds both listeners, runs [`sidecar::serve`] until
//! SIGTERM/SIGINT.

use anyhow::Context;
use clap::Parser;
use sidecar::Cli;
use workload_common::identity::Identity;
use workload_common::listen::bind_and_announce;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    workload_common::init_tracing();
    let cli = Cli::parse();
    let config = match cli.to_config(Identity::from_env()) {
        Ok(config) => config,
        Err(e) => {
            // Invalid input: the usage exit code, like clap's own parse errors.
            eprintln!("sidecar: {e}");
            std::process::exit(2);
        }
    };
    let (listener, admin) = bind_and_announce(cli.listen, cli.admin_listen).await?;
    tracing::info!(
        listen = %listener.local_addr()?,
        admin = %admin.local_addr()?,
        upstream = %config.upstream,
        max_concurrency = config.max_concurrency,
        "sidecar starting"
    );
    let summary = sidecar::serve(
        listener,
        admin,
        config,
        workload_common::signal::terminate(),
    )
    .await?;
    tracing::info!(?summary, "sidecar stopped");
    // Machine-readable, like the `listening` line: what the harness counts as this pod's
    // arrivals, including those of the drain after the last scrape.
    let totals = summary.totals.totals_line();
    println!("{totals}");
    if let Some(path) = &cli.termination_log {
        std::fs::write(path, format!("{totals}\n"))
            .with_context(|| format!("writing --termination-log {}", path.display()))?;
    }
    Ok(())
}

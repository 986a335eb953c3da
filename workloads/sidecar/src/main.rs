//! The `sidecar` binary: parses flags, binds both listeners, runs [`sidecar::serve`] until
//! SIGTERM/SIGINT.

use anyhow::Context;
use clap::Parser;
use sidecar::Cli;
use workload_common::identity::Identity;
use workload_contract::listening;

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
    let listener = tokio::net::TcpListener::bind(cli.listen)
        .await
        .with_context(|| format!("binding --listen {}", cli.listen))?;
    let admin = tokio::net::TcpListener::bind(cli.admin_listen)
        .await
        .with_context(|| format!("binding --admin-listen {}", cli.admin_listen))?;
    // Machine-readable: the harness (and scripts) read the bound ports from this line.
    println!(
        "{}",
        listening::line(&[
            ("http", listener.local_addr()?),
            ("admin", admin.local_addr()?)
        ])
    );
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

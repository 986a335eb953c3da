//! The `loadbalancer` binary: parses flags, binds both listeners, prints the `listening` line
//! and runs [`loadbalancer::serve_with_client`] until SIGTERM/SIGINT; with `--watch-service` the
//! Kubernetes client is made first (`kube::Client::try_default()`), so a missing one fails
//! before anything listens.

use anyhow::Context;
use clap::Parser;
use loadbalancer::cli::Cli;
use workload_common::listen::bind_and_announce;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    workload_common::init_tracing();
    let cli = Cli::parse();
    let config = cli.to_config()?;
    // Before the listeners: without a client there is nothing to serve.
    let client = loadbalancer::kube_client(&config).await?;
    let (listener, admin) = bind_and_announce(cli.listen, cli.admin_listen).await?;
    loadbalancer::serve_with_client(
        listener,
        admin,
        config,
        client,
        workload_common::signal::terminate(),
    )
    .await
    .context("serving")?;
    Ok(())
}

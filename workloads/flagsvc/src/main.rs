//! `flagsvc` binary: parses flags, binds the listener, serves until SIGTERM/SIGINT.

use anyhow::Context;
use clap::Parser;
use flagsvc::cli::Cli;
use workload_common::identity::Identity;
use workload_contract::listening;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    workload_common::init_tracing();
    let cli = Cli::parse();
    let listener = tokio::net::TcpListener::bind(cli.listen)
        .await
        .with_context(|| format!("cannot listen on {} (--listen)", cli.listen))?;
    let bound = listener.local_addr()?;
    println!("{}", listening::line(&[("http", bound)]));
    let config = cli.to_config(Identity::from_env());
    let summary = flagsvc::serve(listener, config, workload_common::signal::terminate()).await;
    tracing::info!(?summary, "stopped");
    Ok(())
}

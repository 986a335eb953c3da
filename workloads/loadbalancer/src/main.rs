//! The `loadbalancer` binary: parses flags, binds both listeners, prints the `listening` line
//! and runs [`loadbalancer::serve`] until SIGTERM/SIGINT.

use anyhow::Context;
use clap::Parser;
use loadbalancer::cli::Cli;
use workload_contract::listening;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    workload_common::init_tracing();
    let cli = Cli::parse();
    let config = cli.to_config()?;
    let listener = tokio::net::TcpListener::bind(cli.listen)
        .await
        .with_context(|| format!("binding --listen {}", cli.listen))?;
    let admin = tokio::net::TcpListener::bind(cli.admin_listen)
        .await
        .with_context(|| format!("binding --admin-listen {}", cli.admin_listen))?;
    println!(
        "{}",
        listening::line(&[
            ("http", listener.local_addr()?),
            ("admin", admin.local_addr()?)
        ])
    );
    loadbalancer::serve(
        listener,
        admin,
        config,
        workload_common::signal::terminate(),
    )
    .await
    .context("serving")?;
    Ok(())
}

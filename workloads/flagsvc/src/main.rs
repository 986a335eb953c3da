//! `flagsvc` binary: parses flags, binds the listener, serves until SIGTERM/SIGINT.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use flagsvc::{Config, ServiceTime};
use workload_common::identity::Identity;
use workload_common::serve::ServeOptions;

/// Sample feature-flag service with server-sent events. Identity comes from the POD_NAME,
/// NODE_NAME and ZONE environment variables and is returned in x-pod, x-node, x-zone headers.
#[derive(Debug, Parser)]
#[command(name = "flagsvc", version, about)]
struct Args {
    /// Address to listen on (port 0 picks a free port; the bound address is printed on stdout).
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Service time of GET /flags/{key}: fixed:20ms, exp:20ms (exponential with that mean) or
    /// cpu:2ms (busy CPU work).
    #[arg(long, default_value = "fixed:0ms")]
    service_time: ServiceTime,
    /// Heartbeat interval of SSE streams on GET /stream.
    #[arg(long, default_value = "1s", value_parser = humantime::parse_duration)]
    sse_interval: Duration,
    /// A flag flips at this interval and streams push the change; 0 = never.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    flag_change_interval: Duration,
    /// After SIGTERM keep serving this long (readyz fails meanwhile): an in-app preStop sleep.
    #[arg(long, default_value = "0s", value_parser = humantime::parse_duration)]
    drain_delay: Duration,
    /// After accepting stops, wait at most this long for in-flight requests.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    shutdown_timeout: Duration,
    /// A client must send its request head within this time.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    header_read_timeout: Duration,
    /// Largest accepted request head in bytes (minimum 8192).
    #[arg(long, default_value_t = 16 * 1024)]
    max_header_bytes: usize,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    workload_common::init_tracing();
    let args = Args::parse();
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {} (--listen)", args.listen))?;
    let bound = listener.local_addr()?;
    println!("listening http={bound}");
    let config = Config {
        service_time: args.service_time,
        sse_heartbeat: args.sse_interval,
        flag_change_interval: args.flag_change_interval,
        identity: Identity::from_env(),
        serve: ServeOptions {
            header_read_timeout: args.header_read_timeout,
            max_header_bytes: args.max_header_bytes,
            drain_delay: args.drain_delay,
            shutdown_timeout: args.shutdown_timeout,
        },
    };
    let summary = flagsvc::serve(listener, config, workload_common::signal::terminate()).await;
    tracing::info!(?summary, "stopped");
    Ok(())
}

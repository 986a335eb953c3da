//! The command line ([`Cli`], clap derive) and the [`Config`](crate::Config) it describes.

use std::net::SocketAddr;
use std::time::Duration;

use clap::Parser;
use workload_common::identity::Identity;
use workload_common::serve::ServeOptions;

use crate::{Config, ServiceTime};

/// Sample feature-flag service with server-sent events. Identity comes from the POD_NAME,
/// NODE_NAME and ZONE environment variables and is returned in x-pod, x-node, x-zone headers.
#[derive(Debug, Parser)]
#[command(name = "flagsvc", version, about)]
pub struct Cli {
    /// Address to listen on (port 0 picks a free port; the bound address is printed on stdout).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Service time of GET /flags/{key}: fixed:20ms, exp:20ms (exponential with that mean) or
    /// cpu:2ms (busy CPU work).
    #[arg(long, default_value = "fixed:0ms")]
    pub service_time: ServiceTime,
    /// Heartbeat interval of SSE streams on GET /stream.
    #[arg(long, default_value = "1s", value_parser = humantime::parse_duration)]
    pub sse_interval: Duration,
    /// A flag flips at this interval and streams push the change; 0 = never.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub flag_change_interval: Duration,
    /// After SIGTERM keep serving this long (readyz fails meanwhile): an in-app preStop sleep.
    #[arg(long, default_value = "0s", value_parser = humantime::parse_duration)]
    pub drain_delay: Duration,
    /// After accepting stops, wait at most this long for in-flight requests.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub shutdown_timeout: Duration,
    /// A client must send its request head within this time.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub header_read_timeout: Duration,
    /// Largest accepted request head in bytes (minimum 8192).
    #[arg(long, default_value_t = 16 * 1024)]
    pub max_header_bytes: usize,
}

impl Cli {
    /// The configuration these flags describe, for a pod with `identity`.
    pub fn to_config(&self, identity: Identity) -> Config {
        Config {
            service_time: self.service_time,
            sse_heartbeat: self.sse_interval,
            flag_change_interval: self.flag_change_interval,
            identity,
            serve: ServeOptions {
                header_read_timeout: self.header_read_timeout,
                max_header_bytes: self.max_header_bytes,
                drain_delay: self.drain_delay,
                shutdown_timeout: self.shutdown_timeout,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn help_documents_every_flag() {
        workload_test_support::assert_every_flag_has_help(&Cli::command());
    }
}

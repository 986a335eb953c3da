//! Shared by flagsvc, sidecar, loadgen and the load balancer: who this pod is ([`identity`]), how
//! a process learns it must stop ([`signal`]), the HTTP/1 serve loop with drain-then-stop
//! shutdown ([`serve`]), a binary's traffic and admin listeners ([`listen`]), and the
//! hop-by-hop headers proxies drop ([`headers`]).

pub mod headers;
pub mod identity;
pub mod listen;
pub mod serve;
pub mod signal;

/// Installs a `tracing` subscriber writing to stderr, filtered by `RUST_LOG` (default `info`).
pub fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

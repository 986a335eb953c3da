//! The library's error type.

use std::net::SocketAddr;

/// Why a run could not be carried out. Request failures are not errors: they are counted in the
/// report.
#[derive(Debug, thiserror::Error)]
pub enum LoadgenError {
    #[error("invalid configuration: {0}")]
    Config(String),
    #[error("cannot resolve {host}: {source}")]
    Resolve {
        host: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot listen for metrics on {addr}: {source}")]
    MetricsListen {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("a load task failed: {0}")]
    Task(String),
    #[error("report: {0}")]
    Report(String),
}

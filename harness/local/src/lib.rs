//! harness-local: the local target. The real workload binaries run as processes on loopback
//! (one sidecar + flagsvc pair per pod, one loadgen per generator); the harness plays the
//! Kubernetes control plane with the models of `kube_model` and a per-zone TCP forwarder
//! standing in for kube-proxy.

pub mod bins;
pub mod controllers;
pub mod kube_proxy;
pub mod lb_sync;
pub mod load;
pub mod load_balancer;
pub mod manager;
pub mod pods;
pub mod prober;
pub mod process;
pub mod sampler;
pub mod scrape;
pub mod shared;
pub mod target;

pub use target::LocalTarget;

/// Errors of the local target; each names what failed and how to reproduce or fix it.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot start `{command}`: {source}")]
    Spawn {
        command: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{name} did not start: {detail}\n  command: {command}")]
    Startup {
        name: String,
        command: String,
        detail: String,
    },
    #[error(
        "workload binaries (flagsvc, sidecar, loadgen) not found in: {searched}; build them with `cargo build --release --workspace` or point HARNESS_BIN_DIR at their directory"
    )]
    MissingBinaries { searched: String },
    #[error("{0}")]
    Runtime(String),
}

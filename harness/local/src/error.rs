//! [`LocalError`]: what the local target's operations fail with.

use std::path::PathBuf;
use std::time::Duration;

/// Errors of the local target; each names what failed and how to reproduce or fix it. Where a
/// subprocess failed, the message carries the command line to paste into a shell.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    #[error("{context}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot start `{command}`")]
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
        "workload binaries (flagsvc, sidecar, loadgen, loadbalancer) not found in: {searched}; build them with `cargo build --release --workspace` or point HARNESS_BIN_DIR at their directory"
    )]
    MissingBinaries { searched: String },
    #[error(
        "cannot read the report of generator {generator} ({}); see its log next to it\n  command: {command}",
        path.display()
    )]
    ReportUnreadable {
        generator: String,
        path: PathBuf,
        command: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the report of generator {generator} ({}) is not a loadgen report\n  command: {command}",
        path.display()
    )]
    ReportInvalid {
        generator: String,
        path: PathBuf,
        command: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("{} generator(s) failed: {}", failures.len(), failures.iter().map(|e| harness_core::text::error_chain(e)).collect::<Vec<_>>().join("; "))]
    Generators { failures: Vec<LocalError> },
    #[error(
        "{ready}/{total} pods ready after {waited:?}; not ready: {} (see their logs in {})",
        not_ready.join(", "),
        logs.display()
    )]
    PodsNotReady {
        ready: usize,
        total: usize,
        waited: Duration,
        not_ready: Vec<String>,
        logs: PathBuf,
    },
    #[error("cannot schedule {pods} pods")]
    Unschedulable {
        pods: u32,
        #[source]
        source: harness_core::control_plane::placement::Unschedulable,
    },
    #[error("{what}\n  command: {command}")]
    Admin {
        what: String,
        /// The workload's command line.
        command: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("generator {generator} sends via the load balancer, but none was deployed")]
    NoLoadBalancer { generator: String },
    #[error(
        "generator {generator} sends via the ingress, but the scenario has no `ingress` section"
    )]
    NoIngress { generator: String },
    #[error("the scenario has no `ingress` section, so no ingress replicas run")]
    IngressNotDeployed,
    #[error("ingress replica {replica} does not exist")]
    NoIngressReplica { replica: u32 },
    #[error("no kube-proxy forwarder for zone {zone}")]
    NoForwarder { zone: String },
    #[error("nothing is deployed")]
    NotDeployed,
    #[error("the load never started")]
    LoadNotStarted,
}

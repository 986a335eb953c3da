//! harness-local: the local target. The real workload binaries run as processes on loopback
//! (one sidecar + flagsvc pair per pod, one loadgen per generator); the harness plays the
//! Kubernetes control plane with the models of `kube_model` and a per-zone TCP forwarder
//! standing in for kube-proxy.

pub mod bins;
pub mod budget;
pub mod cluster_state;
pub mod control_loops;
pub mod driver;
mod error;
pub mod ingress;
pub mod kube_proxy;
pub mod lb_sync;
pub mod load;
pub mod pod_lifecycle;
pub mod pods;
pub mod prober;
pub mod process;
pub mod sampler;
pub mod scrape;
pub mod zone_faults;
pub mod zone_relays;

pub use driver::LocalTarget;
pub use error::LocalError;

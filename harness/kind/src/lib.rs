//! The kind target: the multi-zone kind cluster a scenario needs ([`cluster`], rendered by
//! [`config`]), the pinned node image and tool versions ([`pins`]), the node image a run chooses
//! and the Kubernetes version it observes ([`node_image`]), the kubelet's self-label
//! rules ([`labels`]), one wrapper for every `kind` and `docker` subprocess ([`exec`]), the
//! cluster lifecycle commands ([`lifecycle`]), the workload images ([`images`]), the run's
//! Kubernetes objects ([`manifests`]), the API calls ([`api`]), the watchers and the timeline
//! they write ([`watch`], [`observer`]), the model check ([`agreement`]), the third-party releases
//! ([`pinned`]) and the real HPA's status on the timeline ([`autoscaler`]), the first
//! contact with a cluster the harness did not create ([`preflight`]), the network faults
//! between zones as `tc` commands in the node containers ([`netem`]), and the engine's
//! `Target` on kind ([`driver`]). See docs/kind-target.md.

pub mod access;
pub mod agreement;
pub mod api;
pub mod autoscaler;
pub mod cluster;
pub mod config;
pub mod driver;
pub mod exec;
pub mod host;
pub mod images;
pub mod import;
pub mod labels;
pub mod lifecycle;
pub mod manifests;
pub mod netem;
pub mod node_image;
pub mod observer;
pub mod pinned;
pub mod pins;
pub mod preflight;
pub mod timing;
pub mod tools;
pub mod watch;

pub use cluster::{ClusterPlan, PlanError};
pub use driver::{ClusterMode, KindOptions, KindTarget};

//! The kind target's building blocks that do not depend on the engine: the multi-zone kind
//! cluster a scenario needs ([`cluster`], rendered by [`config`]), the pinned node image and tool
//! versions ([`pins`]), the kubelet's self-label rules ([`labels`]), one wrapper for every `kind`
//! and `docker` subprocess ([`exec`]), the cluster lifecycle commands ([`lifecycle`]), and the
//! workload images ([`images`]). See docs/kind-target.md.

pub mod cluster;
pub mod config;
pub mod exec;
pub mod host;
pub mod images;
pub mod labels;
pub mod lifecycle;
pub mod pins;
pub mod tools;

pub use cluster::{ClusterPlan, PlanError};

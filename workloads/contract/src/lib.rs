//! workload-contract: everything the harness and the workload binaries must agree on, in one
//! place both sides use, so a drift is a compile error or a failing contract test rather than
//! silently missing evidence:
//!
//! - the command lines the harness starts the workloads with ([`flagsvc::FlagsvcArgs`],
//!   [`sidecar::SidecarArgs`], [`loadgen::RunArgs`], [`loadbalancer::LoadBalancerArgs`]) — each
//!   workload's tests parse them with its own clap `Cli`;
//! - the load balancer's admin API: the endpoint set it is fed and the accounting it reports
//!   ([`loadbalancer`]);
//! - the identity environment ([`identity`]) and the `listening` line ([`listening`]);
//! - the metric names the harness scrapes and their parsing ([`sidecar::SidecarMetrics`],
//!   [`loadgen::ATTEMPTED_TOTAL`], [`prometheus`]);
//! - the loadgen report, the type loadgen writes and the harness reads
//!   ([`loadgen::Report`]), with the keys of its maps ([`loadgen::StatusCode`],
//!   [`loadgen::TransportError`]).
//!
//! Light on purpose: serde, no HTTP stack. Durations are wall time; whether a scenario's
//! Kubernetes time is scaled first is the harness's business.

pub mod flags;
pub mod flagsvc;
pub mod identity;
pub mod listening;
pub mod loadbalancer;
pub mod loadgen;
pub mod prometheus;
pub mod sidecar;

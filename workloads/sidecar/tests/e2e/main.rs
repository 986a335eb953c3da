//! The sidecar end to end on loopback: a test upstream (`workload_test_support::Upstream`,
//! hyper) behind a real sidecar, real clients in front. Every wait is bounded; timing
//! assertions are generous.

mod support;

mod contract;
mod drain;
mod failures;
mod fastpath;
mod hostile;
mod limits;
mod metrics;
mod readiness;
mod streams;

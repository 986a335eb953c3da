//! workload-test-support: what the workloads' tests share, written once. A dev-dependency only
//! (never of a harness crate, and it depends on no workload binary crate):
//!
//! - [`upstream`]: the scripted hyper upstream the sidecar and the data-plane tests proxy to,
//!   counting at the upstream what is in flight;
//! - [`client`]: one `GET` on a fresh connection, whole body read, bounded ([`get`]);
//! - [`raw`]: hostile clients on raw TCP (malformed bytes, slowloris heads, vanishing peers);
//! - [`wait_until`], a bounded poll; [`identity`], a test pod's identity;
//!   [`assert_every_flag_has_help`], the workloads' `--help` check.

pub mod client;
pub mod raw;
pub mod upstream;

use std::time::Duration;

use tokio::time::Instant;
use workload_common::identity::Identity;

pub use self::client::{Reply, get, get_with_host};
pub use self::upstream::{UPSTREAM_POD, Upstream};

/// An identity whose pod is `pod` (node `node-a`, zone `zone-a`).
pub fn identity(pod: &str) -> Identity {
    let pod = pod.to_string();
    Identity::from_lookup(move |key| {
        Some(match key {
            "POD_NAME" => pod.clone(),
            "NODE_NAME" => "node-a".to_string(),
            _ => "zone-a".to_string(),
        })
    })
}

/// Polls `check` every 10 ms until it holds; panics after `limit`. Returns the time it took.
pub async fn wait_until<F, Fut>(what: &str, limit: Duration, mut check: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let started = Instant::now();
    loop {
        if check().await {
            return started.elapsed();
        }
        assert!(started.elapsed() < limit, "not within {limit:?}: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Every argument of `command` has a help text (a workload's `--help` documents every flag).
pub fn assert_every_flag_has_help(command: &clap::Command) {
    for arg in command.get_arguments() {
        assert!(arg.get_help().is_some(), "--{} has no help", arg.get_id());
    }
}

//! flagsvc: the sample service every scenario puts behind the sidecar. A feature-flag server with
//! `GET /flags/{key}` (JSON, configurable service time), `GET /stream` (server-sent events),
//! `/healthz`, `/readyz` and Prometheus `/metrics`; every response names the pod, node and zone that produced it.

mod accept;
pub mod cli;
pub mod flags;
pub mod metrics;
pub mod raw_sse;
mod routes;
pub mod service_time;
pub mod sse;

use std::sync::Arc;
use std::time::Duration;

use rand::SeedableRng;
use tokio::net::TcpListener;
use workload_common::identity::Identity;
use workload_common::serve::{Lifecycle, ServeOptions, ServeSummary};

pub use service_time::ServiceTime;

/// Everything `serve` needs besides the listener.
#[derive(Debug, Clone)]
pub struct Config {
    pub service_time: ServiceTime,
    /// Heartbeat interval of SSE streams.
    pub sse_heartbeat: Duration,
    /// A seeded flag flips at this interval (and streams push the change); zero = never.
    pub flag_change_interval: Duration,
    pub identity: Identity,
    pub serve: ServeOptions,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            service_time: ServiceTime::default(),
            sse_heartbeat: Duration::from_secs(1),
            flag_change_interval: Duration::from_secs(10),
            identity: Identity::from_env(),
            serve: ServeOptions::default(),
        }
    }
}

/// Serves flagsvc on `listener` until `shutdown` resolves, then drains and stops.
pub async fn serve(
    listener: TcpListener,
    config: Config,
    shutdown: impl std::future::Future<Output = ()>,
) -> ServeSummary {
    let lifecycle = Lifecycle::new();
    let store = Arc::new(flags::FlagStore::new());
    let flipper = spawn_flag_flipper(&store, config.flag_change_interval, &lifecycle);
    let app = routes::App::new(config.clone(), store, lifecycle.clone());
    let summary = accept::serve(listener, app, lifecycle, config.serve, shutdown).await;
    if let Some(task) = flipper {
        task.abort();
    }
    summary
}

fn spawn_flag_flipper(
    store: &Arc<flags::FlagStore>,
    every: Duration,
    lifecycle: &Lifecycle,
) -> Option<tokio::task::JoinHandle<()>> {
    if every.is_zero() {
        return None;
    }
    let store = Arc::clone(store);
    let closing = lifecycle.streams_closing();
    Some(tokio::spawn(async move {
        let mut rng = rand::rngs::SmallRng::from_os_rng();
        let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        loop {
            tokio::select! {
                () = closing.cancelled() => break,
                _ = ticker.tick() => { store.flip_random(&mut rng); }
            }
        }
    }))
}

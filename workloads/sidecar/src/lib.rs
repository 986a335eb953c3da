//! The sidecar: a concurrency-limiting reverse proxy standing in for the Envoy/Istio sidecar of
//! the incidents. A tower stack — admission queue ([`queue`]) → concurrency limit ([`limit`]) →
//! upstream proxy ([`proxy`]) — behind the main listener ([`edge`]), readiness on saturation
//! ([`readiness`]), and Prometheus metrics on a separate admin listener ([`admin`],
//! [`metrics`]). Call [`serve`] with bound listeners and a shutdown future.

pub mod admin;
pub mod config;
pub mod edge;
pub mod errors;
pub mod limit;
pub mod metrics;
pub mod proxy;
pub mod queue;
pub mod readiness;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower::Layer;
use workload_common::serve::{Lifecycle, ServeOptions, ServeSummary};

pub use config::{Cli, Config, SaturationReadiness};
pub use errors::SidecarError;

use crate::admin::Admin;
use crate::edge::Edge;
use crate::limit::ConcurrencyLimitLayer;
use crate::metrics::Metrics;
use crate::proxy::{Proxy, ProxyConfig};
use crate::queue::{QueueHandle, QueueLayer};
use crate::readiness::Readiness;

/// How the two listeners ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// The main (traffic) listener.
    pub main: ServeSummary,
    /// The admin listener (kept open until the main listener has finished).
    pub admin: ServeSummary,
}

/// Runs the sidecar on `listener` (traffic) and `admin_listener` (metrics) until `shutdown`
/// resolves; then drains like every workload (see `workload_common::serve`): keeps serving for
/// the drain delay with `/readyz` failing, stops accepting, ends streams, finishes in-flight
/// requests. The admin listener stays up until the main listener is done.
pub async fn serve(
    listener: TcpListener,
    admin_listener: TcpListener,
    config: Config,
    shutdown: impl Future<Output = ()>,
) -> Result<Summary, SidecarError> {
    config.validate()?;
    let lifecycle = Lifecycle::new();
    let metrics = Arc::new(Metrics::new());
    let queue = QueueHandle::new(config.queue_config());
    let limit = ConcurrencyLimitLayer::new(config.max_concurrency);
    let proxy = Proxy::new(
        ProxyConfig {
            upstream: config.upstream.clone(),
            timeout: config.upstream_timeout,
            connect_timeout: config.connect_timeout,
        },
        metrics.clone(),
        lifecycle.streams_closing(),
    );
    let stack = QueueLayer::new(queue.clone(), metrics.clone()).layer(limit.layer(proxy));
    let readiness = Readiness::new(
        lifecycle.clone(),
        queue.clone(),
        config.readiness.map(|r| r.for_at_least),
    );
    let identity = config.identity.headers();
    let edge = Edge::new(stack, readiness.clone(), identity.clone(), metrics.clone());
    let admin = Admin::new(metrics, limit, queue, readiness, identity);

    let main_done = CancellationToken::new();
    let main = async {
        let summary = workload_common::serve::serve(
            listener,
            edge,
            lifecycle,
            config.serve.clone(),
            shutdown,
        )
        .await;
        main_done.cancel();
        summary
    };
    let admin_options = ServeOptions {
        drain_delay: Duration::ZERO,
        shutdown_timeout: Duration::from_secs(1),
        ..config.serve.clone()
    };
    let admin = workload_common::serve::serve(
        admin_listener,
        admin,
        Lifecycle::new(),
        admin_options,
        main_done.clone().cancelled_owned(),
    );
    let (main, admin) = tokio::join!(main, admin);
    Ok(Summary { main, admin })
}

//! The sidecar: a concurrency-limiting reverse proxy standing in for the Envoy/Istio sidecar of
//! the incidents. A tower stack — admission queue ([`queue`]) → concurrency limit ([`limit`]) →
//! upstream proxy ([`proxy`]) — behind the main listener ([`edge`]), readiness on saturation
//! ([`readiness`]), and Prometheus metrics on a separate admin listener ([`admin`],
//! [`metrics`]). Plain HTTP/1.1 requests take a raw keep-alive fast path (`fast`) that
//! shares the queue's and the limit's state and counts the same metrics; everything else is
//! served by hyper through the tower stack. Call [`serve`] with bound listeners and a shutdown
//! future.

pub mod admin;
pub mod config;
pub mod edge;
pub mod errors;
mod fast;
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
use crate::fast::{FastPath, FastPathConfig};
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
    /// The counters once everything has drained (nothing in flight or queued any more).
    pub totals: workload_contract::sidecar::SidecarMetrics,
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
    let fast = Arc::new(FastPath::new(
        FastPathConfig {
            enabled: config.fast_path,
            authority: upstream_authority(&config.upstream),
            host: config
                .upstream
                .authority()
                .map_or_else(|| upstream_authority(&config.upstream), |a| a.to_string()),
            connect_timeout: config.connect_timeout,
            upstream_timeout: config.upstream_timeout,
            serve: config.serve.clone(),
        },
        limit.semaphore().clone(),
        queue.clone(),
        metrics.clone(),
        lifecycle.streams_closing(),
        &identity,
        edge,
    ));
    let counters = metrics.clone();
    let admin = Admin::new(metrics, limit, queue, readiness, identity);

    let main_done = CancellationToken::new();
    let main = async {
        let summary =
            fast::serve::serve(listener, fast, lifecycle, config.serve.clone(), shutdown).await;
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
    Ok(Summary {
        main,
        admin,
        totals: counters.totals(),
    })
}

/// `host:port` of an `http://` upstream (port 80 when the URI names none).
fn upstream_authority(upstream: &http::Uri) -> String {
    let host = upstream.host().unwrap_or("127.0.0.1");
    format!("{host}:{}", upstream.port_u16().unwrap_or(80))
}

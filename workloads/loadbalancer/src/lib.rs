//! loadbalancer: an AWS Application Load Balancer in IP target mode with the AWS Load Balancer
//! Controller in front of it, as incident §4 ("Rolling-update 502s behind a load balancer")
//! needs it. Two halves:
//!
//! - the data plane ([`proxy`]): an HTTP/1 reverse proxy that sends each request straight to a
//!   pod's address, round robin over the routable targets, answers 502/503/504 the way an ALB
//!   does and counts every request per pod in short time buckets;
//! - the control half ([`target_group`], run by [`controller`]): the Service's ready endpoints
//!   come in; a target registers `registration_lag` after its endpoint turned ready and stops
//!   getting new requests `deregistration_lag` after its endpoint left — even when the pod is
//!   gone by then, which is the incident's 502 window — then drains; optional health checks.
//!
//! The endpoints are fed through the admin API ([`admin`], `PUT /endpoints` with the workload
//! contract's `EndpointSet`): by the harness on the local target, by an EndpointSlice watch in
//! a cluster. The accounting is read back with `GET /stats`, the routable targets with
//! `GET /targets`. The binary ([`cli`]) wires it together: `loadbalancer --listen ADDR
//! --admin-listen ADDR --deregistration-lag 20s ...`.

pub mod admin;
pub mod cli;
pub mod controller;
pub mod proxy;
pub mod target_group;

use std::future::Future;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use workload_contract::loadbalancer::EndpointSet;

pub use controller::HealthProbe;
pub use proxy::{LbConfig, LoadBalancer, PodTarget};
pub use target_group::{HealthCheckSpec, TargetGroup, TargetGroupSpec, TargetState};

/// Everything [`serve`] needs besides the listeners.
#[derive(Debug, Clone)]
pub struct Config {
    pub proxy: LbConfig,
    pub target_group: TargetGroupSpec,
    /// How active health checks are sent; `None` when the target group has none.
    pub health_probe: Option<HealthProbe>,
}

/// Runs the load balancer on `listener` (clients) and `admin_listener` (endpoints, stats,
/// metrics) until `shutdown` resolves. The epoch of the accounting is the call.
pub async fn serve(
    listener: TcpListener,
    admin_listener: TcpListener,
    config: Config,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let epoch = Instant::now();
    let stop = CancellationToken::new();
    let proxy = LoadBalancer::serve(listener, epoch, config.proxy.clone(), stop.clone())?;
    let (feed, endpoints) = watch::channel(EndpointSet::default());
    let controller = controller::Controller::new(
        TargetGroup::new(config.target_group),
        proxy.clone(),
        epoch,
        config.health_probe,
    );
    let control = tokio::spawn(controller.run(endpoints, stop.clone()));
    let admin = admin::Admin::new(proxy, feed);
    let admin_options = workload_common::serve::ServeOptions {
        shutdown_timeout: Duration::from_secs(1),
        ..Default::default()
    };
    let stopped = stop.clone();
    let admin_server = workload_common::serve::serve(
        admin_listener,
        admin,
        workload_common::serve::Lifecycle::new(),
        admin_options,
        async move { stopped.cancelled().await },
    );
    tokio::pin!(admin_server);
    let admin_finished = tokio::select! {
        () = shutdown => false,
        _ = &mut admin_server => true,
    };
    stop.cancel();
    let _ = control.await;
    if !admin_finished {
        admin_server.await;
    }
    Ok(())
}

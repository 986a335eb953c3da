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
//! The endpoints come either through the admin API ([`admin`], `PUT /endpoints` with the
//! workload contract's `EndpointSet`, fed by the harness on the local target) or, in a cluster,
//! from a watch of the Service's EndpointSlices ([`endpoint_watch`], `--watch-service`), with
//! an optional pod readiness gate run the way the AWS Load Balancer Controller runs it
//! ([`readiness_gate`]: gated pods registered before they are ready, their condition patched
//! from their target's health). Either way they go into the same channel, so the lags apply
//! alike. The accounting is read back with `GET /stats`, the routable targets with
//! `GET /targets`. The binary ([`cli`]) wires it together: `loadbalancer --listen ADDR
//! --admin-listen ADDR --deregistration-lag 20s ...`; in a pod, add `--watch-service NAME
//! --target-port PORT [--readiness-gate TYPE]` (namespace from `POD_NAMESPACE`). The
//! ServiceAccount then needs (namespaced Role): `discovery.k8s.io` `endpointslices` list and
//! watch; with a gate also `services` get, `pods` get, list and watch, `pods/status` patch.

pub mod admin;
pub mod cli;
pub mod controller;
pub mod endpoint_watch;
pub mod proxy;
pub mod readiness_gate;
pub mod target_group;

use std::future::Future;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use workload_contract::loadbalancer::EndpointSet;

pub use controller::{HealthProbe, TargetHealth};
pub use endpoint_watch::WatchSpec;
pub use proxy::{LbConfig, LoadBalancer, PodTarget};
use readiness_gate::GateError;
pub use target_group::{HealthCheckSpec, TargetGroup, TargetGroupSpec, TargetState};

/// Everything [`serve`] needs besides the listeners.
#[derive(Debug, Clone)]
pub struct Config {
    pub proxy: LbConfig,
    pub target_group: TargetGroupSpec,
    /// How active health checks are sent; `None` when the target group has none.
    pub health_probe: Option<HealthProbe>,
    /// The EndpointSlice watch feeding the endpoints; `None`: `PUT /endpoints` does.
    pub watch: Option<WatchSpec>,
}

/// Why the balancer stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("binding or serving the proxy listener: {0}")]
    Io(#[from] std::io::Error),
    #[error(
        "--watch-service needs a Kubernetes client, and none was found (in a pod: the service account's token and certificate; elsewhere KUBECONFIG or ~/.kube/config)"
    )]
    Client(#[source] kube::Error),
    #[error("--watch-service was given, but no Kubernetes client")]
    NoClient,
    #[error(transparent)]
    Gate(#[from] GateError),
}

/// Runs the load balancer on `listener` (clients) and `admin_listener` (endpoints, stats,
/// metrics) until `shutdown` resolves. The epoch of the accounting is the call. With
/// `config.watch`, the Kubernetes client is `kube::Client::try_default()`.
pub async fn serve(
    listener: TcpListener,
    admin_listener: TcpListener,
    config: Config,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ServeError> {
    let client = kube_client(&config).await?;
    serve_with_client(listener, admin_listener, config, client, shutdown).await
}

/// The Kubernetes client `config.watch` needs (`kube::Client::try_default()`), `None` without.
pub async fn kube_client(config: &Config) -> Result<Option<kube::Client>, ServeError> {
    match &config.watch {
        Some(_) => Ok(Some(
            kube::Client::try_default()
                .await
                .map_err(ServeError::Client)?,
        )),
        None => Ok(None),
    }
}

/// [`serve`] with the Kubernetes client given (used only with `config.watch`).
pub async fn serve_with_client(
    listener: TcpListener,
    admin_listener: TcpListener,
    config: Config,
    client: Option<kube::Client>,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ServeError> {
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
    let health = controller.health();
    let (fatal_tx, mut fatal) = tokio::sync::mpsc::channel::<ServeError>(1);
    let mut kube_tasks = Vec::new();
    if let Some(spec) = &config.watch {
        let client = client.ok_or(ServeError::NoClient)?;
        let pods = spec.readiness_gate.as_ref().map(|gate| {
            let (index_tx, index) = watch::channel(readiness_gate::PodIndex::new());
            let fatal_tx = fatal_tx.clone();
            let watch = readiness_gate::watch_pods(
                client.clone(),
                spec.namespace.clone(),
                spec.service.clone(),
                gate.clone(),
                index_tx,
                stop.clone(),
            );
            kube_tasks.push(tokio::spawn(async move {
                if let Err(e) = watch.await {
                    let _ = fatal_tx.send(e.into()).await;
                }
            }));
            kube_tasks.push(tokio::spawn(readiness_gate::run_gate(
                client.clone(),
                spec.namespace.clone(),
                gate.clone(),
                index.clone(),
                endpoints.clone(),
                health.clone(),
                stop.clone(),
            )));
            index
        });
        kube_tasks.push(tokio::spawn(endpoint_watch::run(
            client,
            spec.clone(),
            feed.clone(),
            pods,
            stop.clone(),
        )));
    }
    drop(fatal_tx);
    let control = tokio::spawn(controller.run(endpoints, stop.clone()));
    let admin =
        admin::Admin::with_watch(proxy, feed, config.watch.as_ref().map(WatchSpec::describe));
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
    let mut failed = None;
    let admin_finished = tokio::select! {
        () = shutdown => false,
        _ = &mut admin_server => true,
        Some(e) = fatal.recv() => {
            failed = Some(e);
            false
        }
    };
    stop.cancel();
    let _ = control.await;
    for task in kube_tasks {
        let _ = task.await;
    }
    if !admin_finished {
        admin_server.await;
    }
    failed.map_or(Ok(()), Err)
}

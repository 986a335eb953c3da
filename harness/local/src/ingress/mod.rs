//! The ingress of a local run: one real `haproxy` per ingress replica (`haproxy`), each
//! configured by its own modelled haproxy-ingress controller (`controller`), behind an L4
//! spreader standing for the cloud load balancer in front of the DaemonSet (a
//! [`ZoneProxy`]: each new TCP connection goes to a replica picked at random; a connection
//! keeps its replica until it closes — a restart closes it).

mod controller;
pub mod haproxy;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use harness_core::clock::TimeScale;
use harness_core::ingress::PodNetwork;
use harness_core::scenario::model::{IngressReplicas, Scenario};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub use controller::ReplicaAction;
use controller::{ActionRequest, ControllerContext, ReplicaController};
use haproxy::HaproxyReplica;

use crate::LocalError;
use crate::cluster_state::SharedState;
use crate::kube_proxy::{Backend, ZoneProxy};
use crate::pod_lifecycle::PodManager;
use crate::zone_faults::ZoneFaults;

/// How long an explicit reload or restart of one replica may take.
const ACTION_LIMIT: Duration = Duration::from_secs(20);

/// The running replicas and their spreader.
pub struct IngressFleet {
    /// Where callers connect (the spreader).
    pub addr: SocketAddr,
    pub spreader: ZoneProxy,
    actions: Vec<mpsc::Sender<ActionRequest>>,
    tasks: Vec<JoinHandle<()>>,
    stop: CancellationToken,
    /// The replicas' UNIX sockets live here while the run lasts.
    _sockets: tempfile::TempDir,
}

impl IngressFleet {
    /// Starts every replica with the current endpoints, then their controllers and the
    /// spreader. `haproxy` is the program found on PATH.
    #[allow(clippy::too_many_arguments)]
    pub async fn start(
        scenario: &Scenario,
        haproxy: &Path,
        shared: SharedState,
        manager: PodManager,
        out_dir: &Path,
        scale: TimeScale,
        seed: u64,
    ) -> Result<Self, LocalError> {
        let Some(ingress) = scenario.ingress.clone() else {
            return Err(LocalError::IngressNotDeployed);
        };
        let sockets = tempfile::Builder::new()
            .prefix("harness-ingress-")
            .tempdir_in(std::env::temp_dir())
            .map_err(|e| LocalError::Io {
                context: "creating a directory for the ingress replicas' sockets".into(),
                source: e,
            })?;
        let stop = CancellationToken::new();
        let spreader =
            ZoneProxy::start("ingress", seed, ZoneFaults::default(), stop.clone()).await?;
        let network = Arc::new(Mutex::new(PodNetwork::new(
            scenario.cluster.nodes.iter().map(|n| n.name.as_str()),
        )));
        let ctx = ControllerContext {
            rewrite_every: ingress.rewrite_interval.map(|d| scale.wall(d)),
            ingress: ingress.clone(),
            shared: shared.clone(),
            manager,
            network,
            server_timeout: scenario.load.request_timeout,
        };
        let mut fleet = IngressFleet {
            addr: spreader.addr,
            spreader: spreader.clone(),
            actions: Vec::new(),
            tasks: Vec::new(),
            stop: stop.clone(),
            _sockets: sockets,
        };
        let mut backends = Vec::new();
        for i in 0..ingress.replicas {
            let name = format!("ingress-{i}");
            let replica = HaproxyReplica::new(
                &name,
                haproxy.to_path_buf(),
                &out_dir.join("ingress").join(&name),
                fleet._sockets.path(),
            )?;
            let listen = free_loopback_addr()?;
            let mut controller = ReplicaController::new(
                i,
                listen,
                replica,
                ctx.clone(),
                seed.wrapping_add(7000 + u64::from(i)),
            );
            let endpoints = shared.lock().endpoints.subscribe();
            let current = endpoints.borrow().clone();
            if let Err(e) = controller.start(&current).await {
                controller.haproxy.stop(Duration::from_secs(1)).await;
                fleet.shutdown().await;
                return Err(e);
            }
            backends.push(Backend {
                pod: name,
                addr: listen,
                zone: None,
            });
            let (tx, rx) = mpsc::channel(4);
            fleet.actions.push(tx);
            fleet
                .tasks
                .push(tokio::spawn(controller.run(endpoints, rx, stop.clone())));
        }
        spreader.set_backends(backends);
        Ok(fleet)
    }

    /// Carries out `reloadIngress` / `restartIngress` on the chosen replicas; returns when each
    /// is done.
    pub async fn act(
        &self,
        action: ReplicaAction,
        which: IngressReplicas,
    ) -> Result<(), LocalError> {
        let chosen: Vec<usize> = match which {
            IngressReplicas::All => (0..self.actions.len()).collect(),
            IngressReplicas::One(i) => vec![i as usize],
        };
        let mut waits = Vec::new();
        for i in chosen {
            let Some(tx) = self.actions.get(i) else {
                return Err(LocalError::NoIngressReplica { replica: i as u32 });
            };
            let (reply, answer) = oneshot::channel();
            if tx.send((action, reply)).await.is_err() {
                return Err(LocalError::NoIngressReplica { replica: i as u32 });
            }
            waits.push((i, answer));
        }
        for (i, answer) in waits {
            match tokio::time::timeout(ACTION_LIMIT, answer).await {
                Ok(Ok(Ok(()))) => {}
                Ok(Ok(Err(message))) => {
                    return Err(LocalError::Io {
                        context: format!("{action:?} of ingress-{i}"),
                        source: std::io::Error::other(message),
                    });
                }
                _ => {
                    return Err(LocalError::Io {
                        context: format!("{action:?} of ingress-{i}"),
                        source: std::io::Error::new(
                            std::io::ErrorKind::TimedOut,
                            format!("not done within {ACTION_LIMIT:?}"),
                        ),
                    });
                }
            }
        }
        Ok(())
    }

    /// Stops the controllers, which stop their HAProxy; bounded.
    pub async fn shutdown(&mut self) {
        self.stop.cancel();
        for task in self.tasks.drain(..) {
            let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
        }
    }
}

/// A loopback port free at this moment, for an HAProxy `bind` line (HAProxy cannot report the
/// port of a `:0` bind back to us). Another process could take it before HAProxy binds; HAProxy
/// then fails to start and the run stops with its log, never silently.
fn free_loopback_addr() -> Result<std::net::SocketAddr, LocalError> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|source| LocalError::Io {
            context: "finding a free loopback port".into(),
            source,
        })
}

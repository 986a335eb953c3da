//! The ingress of a local run: one real `haproxy` per ingress replica (`haproxy`), each
//! configured by its own modelled haproxy-ingress controller (`controller`), behind an L4
//! spreader standing for the path to the replicas (a [`ZoneProxy`]: each new TCP connection
//! goes to a replica picked at random; a connection keeps its replica until it closes — a
//! restart closes it).
//!
//! With zone faults in the scenario ([`ZoneRelays`]) each replica has a zone
//! (`harness_core::scenario::model::hops`), every zone its own spreader (kube-proxy of that
//! zone in front of the ingress Service, through the faults to each replica's zone), and each
//! replica sees the pods of other zones at their relays.

mod controller;
pub mod haproxy;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use harness_core::clock::TimeScale;
use harness_core::ingress::PodNetwork;
use harness_core::scenario::model::{IngressReplicas, Scenario, hops};
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
use crate::zone_relays::ZoneRelays;

/// How long an explicit reload or restart of one replica may take.
const ACTION_LIMIT: Duration = Duration::from_secs(20);

/// The running replicas and their spreaders.
pub struct IngressFleet {
    /// Where callers connect: one spreader for all, or (with zone faults) one per zone.
    spreaders: Spreaders,
    actions: Vec<mpsc::Sender<ActionRequest>>,
    tasks: Vec<JoinHandle<()>>,
    stop: CancellationToken,
    /// The replicas' UNIX sockets live here while the run lasts.
    _sockets: tempfile::TempDir,
}

impl IngressFleet {
    /// Starts every replica with the current endpoints, then their controllers and the
    /// spreaders. `haproxy` is the program found on PATH; `relays` when the scenario has zone
    /// faults.
    #[allow(clippy::too_many_arguments)]
    pub async fn start(
        scenario: &Scenario,
        haproxy: &Path,
        shared: SharedState,
        manager: PodManager,
        out_dir: &Path,
        scale: TimeScale,
        seed: u64,
        relays: Option<&ZoneRelays>,
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
        let spreaders = Spreaders::start(scenario, relays, seed, &stop).await?;
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
            spreaders,
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
            let zone = hops::ingress_replica_zone(&scenario.cluster, i);
            let endpoints = match (relays, &zone) {
                (Some(relays), Some(zone)) => relays.follow(zone, &shared),
                _ => shared.lock().endpoints.subscribe(),
            };
            let current = endpoints.borrow().clone();
            if let Err(e) = controller.start(&current).await {
                controller.haproxy.stop(Duration::from_secs(1)).await;
                fleet.shutdown().await;
                return Err(e);
            }
            backends.push(Backend {
                pod: name,
                addr: listen,
                zone: relays.and(zone),
            });
            let (tx, rx) = mpsc::channel(4);
            fleet.actions.push(tx);
            fleet
                .tasks
                .push(tokio::spawn(controller.run(endpoints, rx, stop.clone())));
        }
        fleet.spreaders.set_backends(&backends);
        Ok(fleet)
    }

    /// Where a caller in `zone` connects.
    pub fn addr_for(&self, zone: &str) -> Option<SocketAddr> {
        match &self.spreaders {
            Spreaders::One(spreader) => Some(spreader.addr),
            Spreaders::PerZone(spreaders) => spreaders.get(zone).map(|s| s.addr),
        }
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

/// The spreaders in front of the replicas.
enum Spreaders {
    /// One for every caller: the replicas have no zone (no zone faults in the scenario).
    One(ZoneProxy),
    /// Zone → the spreader its callers use, through the faults to each replica's zone.
    PerZone(BTreeMap<String, ZoneProxy>),
}

impl Spreaders {
    async fn start(
        scenario: &Scenario,
        relays: Option<&ZoneRelays>,
        seed: u64,
        stop: &CancellationToken,
    ) -> Result<Self, LocalError> {
        let Some(relays) = relays else {
            let one = ZoneProxy::start("ingress", seed, ZoneFaults::default(), stop.clone());
            return Ok(Spreaders::One(one.await?));
        };
        let mut spreaders = BTreeMap::new();
        for (i, zone) in scenario.cluster.zones.iter().enumerate() {
            let seed = seed.wrapping_add(i as u64);
            let proxy = ZoneProxy::start(zone, seed, relays.faults().clone(), stop.clone());
            spreaders.insert(zone.clone(), proxy.await?);
        }
        Ok(Spreaders::PerZone(spreaders))
    }

    fn set_backends(&self, backends: &[Backend]) {
        match self {
            Spreaders::One(spreader) => spreader.set_backends(backends.to_vec()),
            Spreaders::PerZone(spreaders) => {
                for spreader in spreaders.values() {
                    spreader.set_backends(backends.to_vec());
                }
            }
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

//! One ingress replica's controller loop: the modelled haproxy-ingress controller
//! (`harness_core::ingress`) driving the replica's real HAProxy. It watches the Service's ready
//! endpoints (what the controller's informer gives it), re-renders the backend in the
//! version's order and reloads — or, for v0.16, applies what fits into the server slots through
//! the runtime API — rewrites the configuration on the scenario's background churn, and turns a
//! reload into a restart at the scenario's reload-failure rate. Every change is recorded with
//! the servers it listed.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use harness_core::ingress::config::{
    BACKEND, RenderedServer, ReplicaConfig, named_servers, render_config, slot_servers,
};
use harness_core::ingress::{
    PodNetwork, ServerEntry, SlotPlan, SlotUpdate, plan_slots, render_order, update_slots,
};
use harness_core::measure::{EventKind, IngressCause, IngressChange};
use harness_core::scenario::model::Ingress;
use harness_core::text::error_chain;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;
use workload_contract::loadbalancer::EndpointSet;

use super::haproxy::HaproxyReplica;
use crate::LocalError;
use crate::cluster_state::SharedState;
use crate::pod_lifecycle::PodManager;

/// The modelled target port of the Service's endpoints (what the pod IP is paired with).
const TARGET_PORT: u16 = 8080;

/// An explicit `reloadIngress` / `restartIngress`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplicaAction {
    Reload,
    Restart,
}

/// A request to the loop, answered when done.
pub type ActionRequest = (ReplicaAction, oneshot::Sender<Result<(), String>>);

/// What every replica's controller shares.
#[derive(Clone)]
pub struct ControllerContext {
    pub ingress: Ingress,
    pub shared: SharedState,
    pub manager: PodManager,
    pub network: Arc<Mutex<PodNetwork>>,
    pub server_timeout: std::time::Duration,
    /// The rewrite interval at the run's time scale.
    pub rewrite_every: Option<std::time::Duration>,
}

/// One replica's controller state.
pub struct ReplicaController {
    pub index: u32,
    pub listen: SocketAddr,
    pub haproxy: HaproxyReplica,
    ctx: ControllerContext,
    rng: SmallRng,
    /// The endpoints now (pod → where it listens here).
    addrs: BTreeMap<String, SocketAddr>,
    entries: Vec<ServerEntry>,
    /// The rendered order (without slots).
    servers: Vec<ServerEntry>,
    /// v0.16's slots.
    slots: Option<SlotPlan>,
    renders: u64,
}

impl ReplicaController {
    pub fn new(
        index: u32,
        listen: SocketAddr,
        haproxy: HaproxyReplica,
        ctx: ControllerContext,
        seed: u64,
    ) -> Self {
        Self {
            index,
            listen,
            haproxy,
            ctx,
            rng: SmallRng::seed_from_u64(seed),
            addrs: BTreeMap::new(),
            entries: Vec::new(),
            servers: Vec::new(),
            slots: None,
            renders: 0,
        }
    }

    /// Renders the current endpoints and starts HAProxy.
    pub async fn start(&mut self, endpoints: &EndpointSet) -> Result<(), LocalError> {
        self.take_endpoints(endpoints);
        self.render_fresh();
        self.write()?;
        self.haproxy.start().await?;
        self.record(IngressChange::Start, IngressCause::Deploy);
        Ok(())
    }

    /// The loop, until `stop`; HAProxy is stopped at the end.
    pub async fn run(
        mut self,
        mut endpoints: watch::Receiver<EndpointSet>,
        mut actions: mpsc::Receiver<ActionRequest>,
        stop: CancellationToken,
    ) {
        let mut rewrite = self.ctx.rewrite_every.map(|every| {
            let mut i = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
            i.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            i
        });
        loop {
            let tick = async {
                match rewrite.as_mut() {
                    Some(i) => {
                        i.tick().await;
                    }
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = stop.cancelled() => break,
                changed = endpoints.changed() => {
                    if changed.is_err() {
                        break;
                    }
                    let set = endpoints.borrow_and_update().clone();
                    let outcome = self.on_endpoints(&set).await;
                    self.note_failure(outcome);
                }
                () = tick => {
                    let outcome = self.reload_fresh(IngressCause::Rewrite, true).await;
                    self.note_failure(outcome);
                }
                Some((action, reply)) = actions.recv() => {
                    let outcome = match action {
                        ReplicaAction::Reload => self.reload_fresh(IngressCause::Action, false).await,
                        ReplicaAction::Restart => {
                            self.render_for_reload();
                            match self.write() {
                                Ok(()) => self.apply(IngressChange::Restart, IngressCause::Action).await,
                                Err(e) => Err(e),
                            }
                        }
                    };
                    let _ = reply.send(outcome.map_err(|e| error_chain(&e)));
                }
            }
        }
        self.haproxy.stop(std::time::Duration::from_secs(2)).await;
    }

    fn note_failure(&self, outcome: Result<(), LocalError>) {
        if let Err(e) = outcome {
            self.ctx.shared.lock().record(vec![EventKind::Note {
                message: format!("ingress-{}: {}", self.index, error_chain(&e)),
            }]);
        }
    }

    /// The pods' modelled IPs (allocated as they are first seen, in creation order).
    fn take_endpoints(&mut self, set: &EndpointSet) {
        let meta = self.ctx.manager.meta();
        let mut network = self.ctx.network.lock().unwrap_or_else(|e| e.into_inner());
        let mut pods: Vec<_> = set.endpoints.iter().collect();
        pods.sort_by_key(|e| harness_core::text::natural_key(&e.pod));
        self.addrs = pods.iter().map(|e| (e.pod.clone(), e.addr)).collect();
        self.entries = pods
            .iter()
            .map(|e| {
                let node = meta.get(&e.pod).map_or("", |m| m.node.as_str());
                ServerEntry {
                    pod: e.pod.clone(),
                    ip: network.ip(&e.pod, node),
                    port: TARGET_PORT,
                }
            })
            .collect();
        // The Endpoints object's order (what `render_order` starts from): as the API lists it.
        self.entries.sort_by_key(|e| e.ip.to_string());
    }

    /// A fresh render: the version's order, and fresh slots for v0.16.
    fn render_fresh(&mut self) {
        self.servers = render_order(&self.ctx.ingress.controller, &self.entries, &mut self.rng);
        if self.ctx.ingress.controller.dynamic_slots() {
            self.slots = Some(plan_slots(
                &self.servers,
                self.ctx.ingress.controller.slots_increment,
            ));
        }
    }

    /// The render of a reload that the endpoints did not cause: v0.16 keeps its slot
    /// assignment (only unrelated parts of the configuration change) unless the order is
    /// shuffled on every reload (`--sort-endpoints-by=random`); every other version renders
    /// afresh (and v0.7 reshuffles).
    fn render_for_reload(&mut self) {
        let shuffles = self.ctx.ingress.controller.ordering().shuffles();
        if self.slots.is_none() || shuffles {
            self.render_fresh();
        }
    }

    async fn on_endpoints(&mut self, set: &EndpointSet) -> Result<(), LocalError> {
        self.take_endpoints(set);
        let settings = self.ctx.ingress.controller;
        if let Some(current) = &self.slots {
            let desired = render_order(&settings, &self.entries, &mut self.rng);
            match update_slots(current, &desired, settings.slots_increment) {
                SlotUpdate::Unchanged => Ok(()),
                SlotUpdate::Runtime { plan, changes } => {
                    let mut commands = Vec::new();
                    for change in &changes {
                        let name = RenderedServer::slot_name(change.slot);
                        let addr = change
                            .server
                            .as_ref()
                            .and_then(|s| self.addrs.get(&s.pod).copied());
                        match addr {
                            Some(addr) => {
                                commands.push(format!(
                                    "set server {BACKEND}/{name} addr {} port {}",
                                    addr.ip(),
                                    addr.port()
                                ));
                                commands.push(format!("set server {BACKEND}/{name} state ready"));
                            }
                            None => {
                                commands.push(format!("set server {BACKEND}/{name} state maint"))
                            }
                        }
                    }
                    self.slots = Some(plan);
                    self.write()?;
                    self.haproxy.runtime(&commands).await?;
                    self.record(IngressChange::RuntimeApi, IngressCause::Endpoints);
                    Ok(())
                }
                SlotUpdate::Reload(plan) => {
                    self.servers = desired;
                    self.slots = Some(plan);
                    self.write()?;
                    self.reload_or_fail(IngressCause::Endpoints).await
                }
            }
        } else {
            self.render_fresh();
            self.write()?;
            self.reload_or_fail(IngressCause::Endpoints).await
        }
    }

    /// Re-renders (keeping v0.16's slots) and reloads; `may_fail`: at the reload-failure rate
    /// it becomes a restart.
    async fn reload_fresh(
        &mut self,
        cause: IngressCause,
        may_fail: bool,
    ) -> Result<(), LocalError> {
        self.render_for_reload();
        self.write()?;
        if may_fail {
            self.reload_or_fail(cause).await
        } else {
            self.apply(IngressChange::Reload, cause).await
        }
    }

    async fn reload_or_fail(&mut self, cause: IngressCause) -> Result<(), LocalError> {
        let rate = self.ctx.ingress.reload_failure_rate;
        if rate > 0.0 && self.rng.random::<f64>() < rate {
            self.apply(IngressChange::Restart, IngressCause::ReloadFailed)
                .await
        } else {
            self.apply(IngressChange::Reload, cause).await
        }
    }

    async fn apply(
        &mut self,
        change: IngressChange,
        cause: IngressCause,
    ) -> Result<(), LocalError> {
        match change {
            IngressChange::Restart => self.haproxy.restart().await?,
            _ => self.haproxy.reload().await?,
        }
        self.record(change, cause);
        Ok(())
    }

    fn listed(&self) -> Vec<String> {
        match &self.slots {
            Some(plan) => plan.servers().map(|s| s.pod.clone()).collect(),
            None => self.servers.iter().map(|s| s.pod.clone()).collect(),
        }
    }

    fn record(&self, change: IngressChange, cause: IngressCause) {
        self.ctx.shared.lock().record(vec![EventKind::Ingress {
            replica: self.index,
            change,
            cause,
            servers: self.listed(),
        }]);
    }

    fn write(&mut self) -> Result<(), LocalError> {
        self.renders += 1;
        let addr_of = |s: &ServerEntry| self.addrs.get(&s.pod).copied();
        let servers = match &self.slots {
            Some(plan) => slot_servers(plan, addr_of),
            None => named_servers(&self.servers, addr_of),
        };
        let settings = self.ctx.ingress.controller;
        let text = render_config(&ReplicaConfig {
            title: format!(
                "ingress-{}: haproxy-ingress {} model, render {}",
                self.index, settings.version, self.renders
            ),
            listen: self.listen,
            stats_socket: &self.haproxy.stats_socket,
            balance: settings.balance(),
            servers: &servers,
            server_timeout: self.ctx.server_timeout,
        });
        self.haproxy.write_config(&text, self.renders)
    }
}

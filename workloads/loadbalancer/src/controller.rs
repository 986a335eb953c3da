//! The controller loop: applies the Service's ready endpoints to the [`TargetGroup`] as they
//! change (what the AWS Load Balancer Controller sees), runs the target group's health checks
//! when it has them, and every 50 ms pushes the routable targets to the data plane. Model time
//! is wall time since the balancer's epoch. A target's address is kept after its endpoint
//! left: a lagging deregistration still sends there. Every target's state is published
//! ([`Controller::health`], what a readiness gate follows) whenever one changes.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Empty;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use workload_contract::loadbalancer::EndpointSet;

use crate::proxy::{LoadBalancer, PodTarget};
use crate::target_group::{TargetGroup, TargetState};

/// Every pod's target state now (as DescribeTargetHealth would report it).
pub type TargetHealth = BTreeMap<String, TargetState>;

/// How often the routable set is recomputed.
pub const TICK: Duration = Duration::from_millis(50);

/// How the target group's health checks are sent: `GET path`, success on 200–399 within
/// `timeout`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealthProbe {
    pub path: String,
    pub timeout: Duration,
}

/// One round of health checks: each pod's result, at the round's model time.
type CheckRound = (Duration, Vec<(String, bool)>);

/// The loop's state.
pub struct Controller {
    group: TargetGroup,
    proxy: LoadBalancer,
    epoch: Instant,
    probe: Option<HealthProbe>,
    /// Every pod ever fed, with its address.
    addrs: BTreeMap<String, SocketAddr>,
    ready: BTreeSet<String>,
    routable: Vec<String>,
    health: watch::Sender<TargetHealth>,
}

impl Controller {
    pub fn new(
        group: TargetGroup,
        proxy: LoadBalancer,
        epoch: Instant,
        probe: Option<HealthProbe>,
    ) -> Self {
        let active = group.spec().active_health_checks;
        Self {
            group,
            proxy,
            epoch,
            probe: probe.filter(|_| active),
            addrs: BTreeMap::new(),
            ready: BTreeSet::new(),
            routable: Vec::new(),
            health: watch::Sender::new(TargetHealth::new()),
        }
    }

    /// The targets' states, updated at every tick that changes one.
    pub fn health(&self) -> watch::Receiver<TargetHealth> {
        self.health.subscribe()
    }

    fn now(&self) -> Duration {
        self.epoch.elapsed()
    }

    /// The endpoints now are `set`: new ones turned ready, missing ones were removed.
    pub fn apply(&mut self, set: &EndpointSet, now: Duration) {
        let ready_now: BTreeSet<String> = set.endpoints.iter().map(|e| e.pod.clone()).collect();
        for e in &set.endpoints {
            self.addrs.insert(e.pod.clone(), e.addr);
        }
        for pod in ready_now.difference(&self.ready) {
            self.group.on_endpoint_ready(pod, now);
        }
        for pod in self.ready.difference(&ready_now) {
            self.group.on_endpoint_removed(pod, now);
        }
        self.ready = ready_now;
    }

    /// Pushes the routable targets to the data plane and the target states to [`Self::health`]
    /// if they changed.
    pub fn sync(&mut self, now: Duration) {
        let states: TargetHealth = self
            .addrs
            .keys()
            .map(|pod| (pod.clone(), self.group.target_state(pod, now)))
            .collect();
        self.health.send_if_modified(|current| {
            let changed = *current != states;
            if changed {
                *current = states;
            }
            changed
        });
        let routable = self.group.routable(now);
        if routable == self.routable {
            return;
        }
        let targets = routable
            .iter()
            .filter_map(|pod| {
                self.addrs.get(pod).map(|addr| PodTarget {
                    pod: pod.clone(),
                    addr: *addr,
                })
            })
            .collect();
        self.proxy.set_targets(targets);
        self.routable = routable;
    }

    /// Runs until `stop` is cancelled, following `endpoints`.
    pub async fn run(
        mut self,
        mut endpoints: watch::Receiver<EndpointSet>,
        stop: CancellationToken,
    ) {
        let mut ticker = tokio::time::interval(TICK);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let (results_tx, mut results) = mpsc::channel::<CheckRound>(16);
        let interval = self.group.spec().health_check.interval;
        let mut next_check = Duration::ZERO;
        let mut feed_open = true;
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                changed = endpoints.changed(), if feed_open => feed_open = changed.is_ok(),
                Some((at, round)) = results.recv() => {
                    for (pod, ok) in round {
                        self.group.on_health_check(&pod, ok, at);
                    }
                }
                _ = ticker.tick() => {}
            }
            let now = self.now();
            let set = endpoints.borrow_and_update().clone();
            self.apply(&set, now);
            if let Some(probe) = &self.probe
                && now >= next_check
            {
                next_check = now + interval;
                let targets: Vec<(String, SocketAddr)> =
                    self.addrs.iter().map(|(p, a)| (p.clone(), *a)).collect();
                tokio::spawn(check_round(probe.clone(), targets, now, results_tx.clone()));
            }
            self.sync(now);
        }
    }
}

/// Checks every target at once and sends the results.
async fn check_round(
    probe: HealthProbe,
    targets: Vec<(String, SocketAddr)>,
    at: Duration,
    results: mpsc::Sender<CheckRound>,
) {
    let client: Client<HttpConnector, Empty<Bytes>> =
        Client::builder(TokioExecutor::new()).build(HttpConnector::new());
    let checks = targets.into_iter().map(|(pod, addr)| {
        let (client, probe) = (client.clone(), probe.clone());
        async move { (pod, check(&client, &probe, addr).await) }
    });
    let round = futures::future::join_all(checks).await;
    let _ = results.send((at, round)).await;
}

/// One health check: `GET http://addr/path`, healthy on 200–399 within the timeout.
async fn check(
    client: &Client<HttpConnector, Empty<Bytes>>,
    probe: &HealthProbe,
    addr: SocketAddr,
) -> bool {
    let Ok(uri) = format!("http://{addr}{}", probe.path).parse::<http::Uri>() else {
        return false;
    };
    match tokio::time::timeout(probe.timeout, client.get(uri)).await {
        Ok(Ok(response)) => (200..400).contains(&response.status().as_u16()),
        _ => false,
    }
}

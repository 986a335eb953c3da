//! The load balancer of a local run: the `loadbalancer` workload as a process on loopback
//! (flags from the scenario's `loadBalancer`), fed with the Service's ready endpoints the
//! moment they change (`PUT /endpoints`, what an EndpointSlice watch gives it in a cluster),
//! and its per-pod accounting read back at the end (`GET /stats`) and put on the run's clock
//! (`harness_core::measure::lb_buckets`, shared with the kind target).
//! The registration and deregistration lags (at the run's time scale) are the balancer's
//! own: a target keeps getting
//! requests until its deregistration takes effect, even after its pod is gone — that is the
//! incident's 502 window.
//!
//! With `loadBalancer.readinessGate` the balancer's target health comes back (`GET /targets`,
//! polled every 100 ms) into the model's pods' gate condition, as the AWS Load Balancer
//! Controller patches the pod's `target-health` condition from the target group's health.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use harness_core::clock::TimeScale;
use harness_core::measure::EventKind;
use harness_core::scenario::model::LoadBalancer;
use harness_core::workload_args::loadbalancer_args;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use workload_contract::loadbalancer::{
    ENDPOINTS_PATH, EndpointSet, LbStats, RoutableTargets, STATS_PATH, TARGETS_PATH,
};

use crate::LocalError;
use crate::bins::WorkloadBins;
use crate::cluster_state::SharedState;
use crate::process::{ProcessSpec, Supervised};

/// How long the balancer may take to print its listening line.
const STARTUP_LIMIT: Duration = Duration::from_secs(10);
/// How often the readiness gate reads the balancer's target health (wall time).
const GATE_POLL: Duration = Duration::from_millis(100);

/// The running balancer.
#[derive(Debug)]
pub struct LbProcess {
    pub process: Supervised,
    /// Where clients send.
    pub addr: SocketAddr,
    /// The admin port.
    pub admin: SocketAddr,
    client: reqwest::Client,
}

impl LbProcess {
    /// Starts the balancer on loopback.
    pub async fn start(
        bins: &WorkloadBins,
        spec: &LoadBalancer,
        scale: TimeScale,
        out_dir: &Path,
    ) -> Result<Self, LocalError> {
        let any = SocketAddr::from(([127, 0, 0, 1], 0));
        let process = Supervised::spawn(ProcessSpec {
            name: "loadbalancer".into(),
            program: bins.loadbalancer.clone(),
            args: loadbalancer_args(spec, scale, any, any).to_args(),
            env: vec![("RUST_LOG".into(), "warn".into())],
            log_path: out_dir.join("loadbalancer.log"),
            wait_listening: Some(STARTUP_LIMIT),
        })
        .await?;
        let client = reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(5))
            .build()
            .map_err(|e| LocalError::Admin {
                what: "building the admin client".into(),
                command: process.command_line().to_owned(),
                source: e,
            })?;
        Ok(Self {
            addr: process.addr("http")?,
            admin: process.addr("admin")?,
            process,
            client,
        })
    }

    /// Feeds the balancer every change of `endpoints` until `stop` is cancelled; a failed
    /// update is recorded as a note.
    pub fn feed(
        &self,
        mut endpoints: watch::Receiver<EndpointSet>,
        shared: SharedState,
        stop: CancellationToken,
    ) {
        let (client, url) = (
            self.client.clone(),
            format!("http://{}{ENDPOINTS_PATH}", self.admin),
        );
        tokio::spawn(async move {
            loop {
                let set = endpoints.borrow_and_update().clone();
                let sent = client.put(&url).json(&set).send().await;
                if let Err(e) = sent.and_then(|r| r.error_for_status()) {
                    shared.lock().record(vec![EventKind::Note {
                        message: format!("feeding the load balancer its endpoints failed: {e}"),
                    }]);
                }
                tokio::select! {
                    () = stop.cancelled() => return,
                    changed = endpoints.changed() => if changed.is_err() { return },
                }
            }
        });
    }

    /// Until `stop` is cancelled, reads the routable targets and sets each pod's readiness
    /// gate from them (only pods whose containers are ready are asked about; the model
    /// ignores reports that change nothing). A failed read is noted once per failure streak
    /// and the gates stay as they were.
    pub fn follow_targets(&self, shared: SharedState, stop: CancellationToken) {
        let (client, url) = (
            self.client.clone(),
            format!("http://{}{TARGETS_PATH}", self.admin),
        );
        tokio::spawn(async move {
            let mut ticker = tokio::time::interval(GATE_POLL);
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut failing = false;
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    _ = ticker.tick() => {}
                }
                let read = match client.get(&url).send().await {
                    Ok(r) => match r.error_for_status() {
                        Ok(r) => r.json::<RoutableTargets>().await,
                        Err(e) => Err(e),
                    },
                    Err(e) => Err(e),
                };
                match read {
                    Ok(targets) => {
                        failing = false;
                        apply_target_health(&shared, &targets);
                    }
                    Err(e) if !failing => {
                        failing = true;
                        shared.lock().record(vec![EventKind::Note {
                            message: format!(
                                "reading the load balancer's target health failed: {e}"
                            ),
                        }]);
                    }
                    Err(_) => {}
                }
            }
        });
    }

    /// The accounting so far.
    pub async fn stats(&self) -> Result<LbStats, LocalError> {
        let url = format!("http://{}{STATS_PATH}", self.admin);
        let admin = |what: &str, source| LocalError::Admin {
            what: what.to_owned(),
            command: self.process.command_line().to_owned(),
            source,
        };
        let response = self
            .client
            .get(&url)
            .send()
            .await
            .and_then(|r| r.error_for_status())
            .map_err(|e| admin("reading the load balancer's accounting", e))?;
        response
            .json::<LbStats>()
            .await
            .map_err(|e| admin("decoding the load balancer's accounting", e))
    }
}

/// Sets the readiness gate of every pod the balancer is fed (containers ready) from the
/// routable targets; the pods whose `Ready` changes get their endpoint event in the timeline.
pub fn apply_target_health(shared: &SharedState, targets: &RoutableTargets) {
    let mut s = shared.lock();
    let Some(fed) = s.model.gate_feed() else {
        return;
    };
    let mut events = Vec::new();
    for pod in fed {
        let healthy = targets.pods.contains(&pod);
        events.extend(s.model.set_target_healthy(&pod, healthy));
    }
    if !events.is_empty() {
        s.record(events);
    }
}

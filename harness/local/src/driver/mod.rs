//! [`LocalTarget`]: the engine's `Target` on this machine. Deploy starts the per-zone
//! forwarders, the pods' processes and the control loops, and waits for the probes to pass
//! ([`deploy`]); the load starts the generators and the sampler ([`load`]); actions go through
//! the control-plane model and their pod operations are carried out by the [`PodManager`]
//! ([`actions`]); collect gathers the generators' reports, the sidecar samples and the
//! timeline ([`collect`]).

mod actions;
mod collect;
mod deploy;
mod load;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use harness_core::clock::RunClock;
use harness_core::engine::{Capability, Observation, RunContext, Target, TargetError};
use harness_core::measure::RunData;
use harness_core::scenario::model::{Scenario, TimelineEvent};
use harness_core::target_kit::{self, LivePod, LiveRates, Sampler};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::LocalError;
use crate::bins::WorkloadBins;
use crate::cluster_state::SharedState;
use crate::ingress::IngressFleet;
use crate::ingress::haproxy::find_haproxy;
use crate::lb_sync::LbProcess;
use crate::load::{LoadgenMetrics, RunningGenerator, metrics_addrs};
use crate::pod_lifecycle::PodManager;
use crate::sampler::Targets;
use crate::scrape::Scraper;
use crate::zone_relays::ZoneRelays;
use workload_contract::loadgen::LoadgenCounters;

/// Grace period at teardown: the run is over, nothing is measured any more.
const TEARDOWN_GRACE: Duration = Duration::from_secs(5);

/// The local target.
pub struct LocalTarget {
    bins: WorkloadBins,
    scraper: Scraper,
    run: Option<Running>,
}

struct Running {
    scenario: Arc<Scenario>,
    ctx: RunContext,
    shared: SharedState,
    manager: PodManager,
    targets: Targets,
    sampler: Sampler,
    /// Started generators; ones with a later `startAt` join when they start.
    generators: Arc<std::sync::Mutex<Vec<RunningGenerator>>>,
    /// Each started generator's metrics address (as it printed it: it binds port 0).
    loadgen_metrics: LoadgenMetrics,
    /// Stops the forwarders and the control loops.
    stop: CancellationToken,
    /// With zone faults: the relays on the hops the forwarders do not carry.
    relays: Option<ZoneRelays>,
    live_rates: LiveRates,
    clock: Option<RunClock>,
    deployed_at: Instant,
    /// The scenario's load balancer.
    lb: Option<LbProcess>,
    /// The scenario's ingress replicas.
    ingress: Option<IngressFleet>,
}

impl LocalTarget {
    /// Finds the workload binaries; fails with a fix when they are missing.
    pub fn new() -> Result<Self, LocalError> {
        Ok(Self::with_bins(WorkloadBins::locate()?))
    }

    pub fn with_bins(bins: WorkloadBins) -> Self {
        Self {
            bins,
            scraper: Scraper::new(Duration::from_secs(1)),
            run: None,
        }
    }

    fn running(&mut self) -> Result<&mut Running, TargetError> {
        self.run
            .as_mut()
            .ok_or_else(|| TargetError::new("using the deployment", LocalError::NotDeployed))
    }
}

impl Running {
    /// Requests sent per second and the failed share of those completed, since the previous
    /// observation, over every generator that answers its metrics.
    async fn live_rates(&mut self, scraper: &Scraper) -> (Option<f64>, Option<f64>) {
        let mut now = LoadgenCounters::default();
        for addr in metrics_addrs(&self.loadgen_metrics) {
            if let Some(c) = scraper.loadgen_counters(addr).await {
                now = now + c;
            }
        }
        self.live_rates.update(Instant::now(), now)
    }
}

/// `scenario`'s needs against this machine (crate::budget).
fn budget(scenario: &Scenario, ctx: &RunContext) -> crate::budget::Budget {
    crate::budget::Budget {
        needs: crate::budget::needs(scenario, ctx.time_scale.factor()),
        machine: crate::budget::machine(&ctx.out_dir),
    }
}

impl Target for LocalTarget {
    fn name(&self) -> &'static str {
        "local"
    }

    fn capabilities(&self) -> BTreeSet<Capability> {
        // The local target models every control-plane part a scenario can ask for; the
        // ingress replicas are the real `haproxy`, so they need it on PATH.
        let haproxy = find_haproxy().is_some();
        Capability::ALL
            .into_iter()
            .filter(|c| *c != Capability::Ingress || haproxy)
            .collect()
    }

    async fn preflight(
        &mut self,
        scenario: &Scenario,
        ctx: &RunContext,
    ) -> Result<Vec<String>, TargetError> {
        Ok(budget(scenario, ctx).refusals())
    }

    fn warnings(&self, scenario: &Scenario, ctx: &RunContext) -> Vec<String> {
        budget(scenario, ctx).warnings()
    }

    async fn deploy(&mut self, scenario: &Scenario, ctx: &RunContext) -> Result<(), TargetError> {
        deploy::deploy(self, scenario, ctx).await
    }

    async fn start_load(&mut self, clock: &RunClock) -> Result<(), TargetError> {
        let bins = self.bins.clone();
        let scraper = self.scraper.clone();
        load::start_load(self.running()?, clock, bins, scraper).await
    }

    async fn act(&mut self, event: &TimelineEvent) -> Result<(), TargetError> {
        actions::act(self.running()?, event).await
    }

    async fn observe(&mut self) -> Result<Observation, TargetError> {
        let scraper = self.scraper.clone();
        let run = self.running()?;
        if let Some(e) = run.manager.start_failure() {
            return Err(e);
        }
        let (achieved_rps, error_rate) = run.live_rates(&scraper).await;
        let s = run.shared.lock();
        let pods = s
            .model
            .endpoints()
            .pods()
            .filter(|p| !p.terminating)
            .map(|p| LivePod {
                name: p.name.clone(),
                zone: p.zone.clone(),
                ready: p.ready,
            });
        Ok(Observation {
            pods: target_kit::pod_observations(
                pods,
                run.sampler.samples(),
                target_kit::max_concurrency(&run.scenario),
            ),
            hints_enabled: s.model.endpoints().hints_enabled(),
            achieved_rps,
            error_rate,
        })
    }

    async fn collect(&mut self, interrupted: bool) -> Result<RunData, TargetError> {
        collect::collect(self.running()?, interrupted).await
    }

    async fn teardown(&mut self) -> Result<(), TargetError> {
        match self.run.take() {
            Some(run) => deploy::teardown(run).await,
            None => Ok(()),
        }
    }
}

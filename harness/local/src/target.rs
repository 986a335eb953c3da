//! [`LocalTarget`]: the engine's `Target` on this machine. Deploy starts the per-zone
//! forwarders and the pods' processes and waits for the probes to pass; actions go through the
//! control-plane model and their pod operations are carried out as processes; collect gathers
//! the generators' reports, the sidecar samples and the timeline.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use harness_core::control_plane::cluster::{ClusterModel, PodOp};
use harness_core::engine::run::describe;
use harness_core::engine::{
    Capability, Observation, PodObservation, RunClock, RunContext, Target, TargetError,
};
use harness_core::measure::{EventKind, PodRun, RunData, TimelineEvent as MeasuredEvent};
use harness_core::scenario::model::{Scenario, TimelineEvent};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::bins::WorkloadBins;
use crate::kube_proxy::ZoneProxy;
use crate::load::RunningGenerator;
use crate::pods::PodProcesses;
use crate::prober::run_prober;
use crate::sampler::{Samples, Targets, run_sampler};
use crate::scrape::Scraper;
use crate::shared::SharedState;

/// Grace period for pods deleted during a run (terminationGracePeriodSeconds default).
const TERMINATION_GRACE: Duration = Duration::from_secs(30);
/// Grace period at teardown: the run is over, nothing is measured any more.
const TEARDOWN_GRACE: Duration = Duration::from_secs(5);

/// The local target.
pub struct LocalTarget {
    bins: WorkloadBins,
    scraper: Scraper,
    run: Option<Running>,
}

struct PodMeta {
    node: String,
    zone: String,
}

struct Running {
    scenario: Scenario,
    ctx: RunContext,
    shared: SharedState,
    pods: BTreeMap<String, PodProcesses>,
    meta: BTreeMap<String, PodMeta>,
    probers: BTreeMap<String, CancellationToken>,
    targets: Targets,
    samples: Samples,
    generators: Vec<RunningGenerator>,
    /// Stops the forwarders.
    stop: CancellationToken,
    /// Stops the sampler.
    stop_sampler: CancellationToken,
    stopping: Vec<JoinHandle<()>>,
    clock: Option<RunClock>,
    deployed_at: Instant,
}

impl LocalTarget {
    /// Finds the workload binaries; fails with a fix when they are missing.
    pub fn new() -> Result<Self, crate::LocalError> {
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
            .ok_or_else(|| TargetError::new("nothing is deployed"))
    }
}

impl Running {
    /// Carries out pod operations decided by the model.
    async fn execute(
        &mut self,
        ops: Vec<PodOp>,
        bins: &WorkloadBins,
        scraper: &Scraper,
    ) -> Result<(), TargetError> {
        for op in ops {
            match op {
                PodOp::Start { pod, node, zone } => {
                    let processes = PodProcesses::start(
                        bins,
                        &self.scenario.service,
                        &pod,
                        &node,
                        &zone,
                        &self.ctx.out_dir,
                    )
                    .await
                    .map_err(TargetError::new)?;
                    let stop = CancellationToken::new();
                    tokio::spawn(run_prober(
                        pod.clone(),
                        processes.addr,
                        self.scenario.service.readiness_probe,
                        scraper.clone(),
                        self.shared.clone(),
                        stop.clone(),
                    ));
                    self.probers.insert(pod.clone(), stop);
                    self.targets
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(pod.clone(), processes.admin);
                    {
                        let mut s = self.shared.lock();
                        s.pod_addrs.insert(pod.clone(), processes.addr);
                        s.sync_proxies();
                    }
                    self.meta.insert(pod.clone(), PodMeta { node, zone });
                    self.pods.insert(pod, processes);
                }
                PodOp::Stop { pod } => {
                    if let Some(stop) = self.probers.remove(&pod) {
                        stop.cancel();
                    }
                    self.targets
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .remove(&pod);
                    {
                        let mut s = self.shared.lock();
                        s.pod_addrs.remove(&pod);
                        s.sync_proxies();
                    }
                    if let Some(mut processes) = self.pods.remove(&pod) {
                        self.stopping.push(tokio::spawn(async move {
                            processes.stop(TERMINATION_GRACE).await;
                        }));
                    }
                }
            }
        }
        Ok(())
    }

    fn t_s(&self, at: Instant) -> f64 {
        match &self.clock {
            Some(clock) => clock.t_s(at),
            None => (at - self.deployed_at).as_secs_f64(),
        }
    }

    async fn wait_all_ready(&self, limit: Duration) -> Result<(), TargetError> {
        let deadline = Instant::now() + limit;
        loop {
            let (ready, total, not_ready) = {
                let s = self.shared.lock();
                let pods: Vec<_> = s.model.endpoints().pods().cloned().collect();
                let not_ready: Vec<String> = pods
                    .iter()
                    .filter(|p| !p.ready)
                    .map(|p| p.name.clone())
                    .collect();
                (pods.len() - not_ready.len(), pods.len(), not_ready)
            };
            if ready == total {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(TargetError::new(format!(
                    "{ready}/{total} pods ready after {limit:?}; not ready: {} (see their logs in {})",
                    not_ready.join(", "),
                    self.ctx.out_dir.display()
                )));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Target for LocalTarget {
    fn name(&self) -> &'static str {
        "local"
    }

    fn capabilities(&self) -> BTreeSet<Capability> {
        use Capability::*;
        [
            Sidecar,
            Sse,
            ReadinessOnSaturation,
            TopologyModeAuto,
            TrafficDistribution,
            NodeReadiness,
            AddNode,
            RemoveNode,
            RelabelNode,
            SetAllocatableCpu,
            Scale,
            KillPod,
        ]
        .into_iter()
        .collect()
    }

    async fn deploy(&mut self, scenario: &Scenario, ctx: &RunContext) -> Result<(), TargetError> {
        std::fs::create_dir_all(&ctx.out_dir)
            .map_err(|e| TargetError::new(format!("creating {}: {e}", ctx.out_dir.display())))?;
        let shared = SharedState::new(ClusterModel::new(scenario, ctx.seed));
        let stop = CancellationToken::new();
        for (i, zone) in scenario.cluster.zones.iter().enumerate() {
            let proxy = ZoneProxy::start(zone, ctx.seed.wrapping_add(i as u64 + 1), stop.clone())
                .await
                .map_err(TargetError::new)?;
            shared.lock().proxies.insert(zone.clone(), proxy);
        }
        let mut run = Running {
            scenario: scenario.clone(),
            ctx: ctx.clone(),
            shared: shared.clone(),
            pods: BTreeMap::new(),
            meta: BTreeMap::new(),
            probers: BTreeMap::new(),
            targets: Default::default(),
            samples: Default::default(),
            generators: Vec::new(),
            stop,
            stop_sampler: CancellationToken::new(),
            stopping: Vec::new(),
            clock: None,
            deployed_at: Instant::now(),
        };
        let created = {
            let mut s = shared.lock();
            let created = s.model.create_pods(scenario.service.replicas);
            match created {
                Ok(applied) => {
                    s.record(applied.events);
                    Ok(applied.pod_ops)
                }
                Err(e) => Err(TargetError::new(format!(
                    "cannot schedule {} pods: {e}",
                    scenario.service.replicas
                ))),
            }
        };
        // Keep what was started even on failure, so teardown stops it.
        let outcome = match created {
            Ok(ops) => run.execute(ops, &self.bins, &self.scraper).await,
            Err(e) => Err(e),
        };
        let probe = scenario.service.readiness_probe;
        let limit = Duration::from_secs(20) + probe.period * (probe.success_threshold + 2);
        let outcome = match outcome {
            Ok(()) => run.wait_all_ready(limit).await,
            Err(e) => Err(e),
        };
        self.run = Some(run);
        outcome
    }

    async fn start_load(&mut self, clock: &RunClock) -> Result<(), TargetError> {
        let bins = self.bins.clone();
        let scraper = self.scraper.clone();
        let run = self.running()?;
        run.clock = Some(*clock);
        tokio::spawn(run_sampler(
            *clock,
            run.targets.clone(),
            run.samples.clone(),
            run.shared.clone(),
            scraper,
            run.stop_sampler.clone(),
        ));
        let generators = run.scenario.load.generators.clone();
        for (i, generator) in generators.iter().enumerate() {
            let proxy = run
                .shared
                .lock()
                .proxies
                .get(&generator.zone)
                .map(|p| p.addr)
                .ok_or_else(|| {
                    TargetError::new(format!("no forwarder for zone {}", generator.zone))
                })?;
            let started = RunningGenerator::start(
                &bins,
                generator,
                &run.scenario.load,
                proxy,
                &run.ctx.out_dir,
                run.ctx.seed.wrapping_add(1000 + i as u64),
            )
            .await
            .map_err(TargetError::new)?;
            run.generators.push(started);
        }
        Ok(())
    }

    async fn act(&mut self, event: &TimelineEvent) -> Result<(), TargetError> {
        let bins = self.bins.clone();
        let scraper = self.scraper.clone();
        let run = self.running()?;
        let ops = {
            let mut s = run.shared.lock();
            s.record(vec![EventKind::Action {
                name: event.name.clone(),
                description: describe(event),
            }]);
            let applied = s
                .model
                .apply(&event.action)
                .map_err(|e| TargetError::new(format!("{}: {e}", describe(event))))?;
            s.record(applied.events);
            applied.pod_ops
        };
        run.execute(ops, &bins, &scraper).await
    }

    async fn observe(&mut self) -> Result<Observation, TargetError> {
        let run = self.running()?;
        let max = run
            .scenario
            .service
            .sidecar
            .map(|s| u64::from(s.max_concurrency))
            .unwrap_or(0);
        let samples = run.samples.lock().unwrap_or_else(|e| e.into_inner());
        let s = run.shared.lock();
        let pods = s
            .model
            .endpoints()
            .pods()
            .map(|p| {
                let last = samples.get(&p.name).and_then(|v| v.last());
                PodObservation {
                    name: p.name.clone(),
                    zone: p.zone.clone(),
                    ready: p.ready,
                    in_flight: last.map_or(0, |l| l.in_flight),
                    queue_depth: last.map_or(0, |l| l.queue_depth),
                    max_concurrency: max,
                }
            })
            .collect();
        Ok(Observation {
            pods,
            hints_enabled: s.model.endpoints().hints_enabled(),
        })
    }

    async fn collect(&mut self, interrupted: bool) -> Result<RunData, TargetError> {
        let run = self.running()?;
        let clock = run
            .clock
            .ok_or_else(|| TargetError::new("the load never started"))?;
        let planned = clock.duration.as_secs_f64();
        let duration_s = if interrupted {
            clock.now_s().clamp(0.0, planned)
        } else {
            planned
        };
        let remaining =
            (clock.load_start + clock.duration).saturating_duration_since(Instant::now());
        let limit = remaining + run.scenario.load.request_timeout + Duration::from_secs(10);
        let mut generators = Vec::new();
        let mut failures = Vec::new();
        for g in std::mem::take(&mut run.generators) {
            match g.finish(interrupted, limit).await {
                Ok(report) => generators.push(report),
                Err(e) => failures.push(e.to_string()),
            }
        }
        run.stop_sampler.cancel();
        let samples = std::mem::take(&mut *run.samples.lock().unwrap_or_else(|e| e.into_inner()));
        let max_concurrency = run
            .scenario
            .service
            .sidecar
            .map(|s| u64::from(s.max_concurrency))
            .unwrap_or(0);
        let pods = run
            .meta
            .iter()
            .map(|(name, meta)| PodRun {
                name: name.clone(),
                node: meta.node.clone(),
                zone: meta.zone.clone(),
                max_concurrency,
                samples: samples.get(name).cloned().unwrap_or_default(),
            })
            .collect();
        let events = {
            let s = run.shared.lock();
            s.events
                .iter()
                .map(|(at, kind)| MeasuredEvent {
                    t_s: run.t_s(*at),
                    kind: kind.clone(),
                })
                .collect()
        };
        if !failures.is_empty() {
            return Err(TargetError::new(failures.join("; ")));
        }
        Ok(RunData {
            load_started_unix_ms: clock.load_start_unix_ms,
            duration_s,
            generators,
            pods,
            events,
        })
    }

    async fn teardown(&mut self) -> Result<(), TargetError> {
        let Some(mut run) = self.run.take() else {
            return Ok(());
        };
        run.stop_sampler.cancel();
        for stop in run.probers.values() {
            stop.cancel();
        }
        for g in &mut run.generators {
            g.process.terminate(TEARDOWN_GRACE).await;
        }
        let mut stops = Vec::new();
        for (_, mut pod) in std::mem::take(&mut run.pods) {
            stops.push(tokio::spawn(async move { pod.stop(TEARDOWN_GRACE).await }));
        }
        stops.extend(std::mem::take(&mut run.stopping));
        for handle in stops {
            // Bounded: each stop ends with SIGKILL after its grace period.
            let _ = tokio::time::timeout(TERMINATION_GRACE + Duration::from_secs(5), handle).await;
        }
        run.stop.cancel();
        Ok(())
    }
}

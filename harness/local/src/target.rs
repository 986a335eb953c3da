//! [`LocalTarget`]: the engine's `Target` on this machine. Deploy starts the per-zone
//! forwarders, the pods' processes and the control loops, and waits for the probes to pass;
//! actions go through the control-plane model and their pod operations are carried out by the
//! [`PodManager`]; collect gathers the generators' reports, the sidecar samples and the
//! timeline.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use harness_core::control_plane::cluster::ClusterModel;
use harness_core::engine::{
    Capability, Observation, PodObservation, RunClock, RunContext, Target, TargetError, error_chain,
};
use harness_core::measure::{EventKind, PodRun, RecordedEvent, RunData};
use harness_core::scenario::model::{Action, Scenario, TimelineEvent, Via};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::LocalError;
use crate::bins::WorkloadBins;
use crate::controllers::{Controllers, run_controllers};
use crate::ingress::haproxy::find_haproxy;
use crate::ingress::{IngressFleet, ReplicaAction};
use crate::kube_proxy::ZoneProxy;
use crate::lb_sync::LbProcess;
use crate::load::{
    GeneratorAddrs, LoadgenMetrics, RunningGenerator, lock_generators, metrics_addrs, push_metrics,
};
use crate::manager::PodManager;
use crate::sampler::{Samples, Targets, run_sampler};
use crate::scrape::Scraper;
use crate::shared::SharedState;
use harness_core::measure::{lb_buckets, lb_routable};
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
    samples: Samples,
    /// Started generators; ones with a later `startAt` join when they start.
    generators: Arc<std::sync::Mutex<Vec<RunningGenerator>>>,
    /// Each started generator's metrics address (as it printed it: it binds port 0).
    loadgen_metrics: LoadgenMetrics,
    /// Stops the forwarders and the control loops.
    stop: CancellationToken,
    /// Stops the sampler.
    stop_sampler: CancellationToken,
    /// The sampler task (it takes a last sample when stopped).
    sampler: Option<tokio::task::JoinHandle<()>>,
    /// The generators' counters at the previous observation, for live rates.
    last_counters: Option<(Instant, LoadgenCounters)>,
    clock: Option<RunClock>,
    deployed_at: Instant,
    /// The scenario's load balancer.
    lb: Option<LbProcess>,
    /// The scenario's ingress replicas.
    ingress: Option<IngressFleet>,
}

/// Requests sent per second and the failed share of those completed, since the previous
/// observation, over every generator that answers its metrics.
async fn live_rates(run: &mut Running, scraper: &Scraper) -> (Option<f64>, Option<f64>) {
    let mut now = LoadgenCounters::default();
    for addr in metrics_addrs(&run.loadgen_metrics) {
        if let Some(c) = scraper.loadgen_counters(addr).await {
            now = now + c;
        }
    }
    let at = Instant::now();
    let rates = run.last_counters.map(|(then, before)| {
        let seconds = (at - then).as_secs_f64().max(1e-3);
        let sent = now.attempted.saturating_sub(before.attempted) as f64 / seconds;
        let completed = now.completed.saturating_sub(before.completed);
        let failed = now.failed.saturating_sub(before.failed);
        let error_rate = (completed > 0).then(|| failed as f64 / completed as f64);
        (Some(sent), error_rate)
    });
    run.last_counters = Some((at, now));
    rates.unwrap_or((None, None))
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
            .ok_or_else(|| TargetError::new("using the deployment", LocalError::NotDeployed))
    }
}

impl Running {
    fn t_s(&self, at: Instant) -> f64 {
        match &self.clock {
            Some(clock) => clock.t_s(at),
            None => (at - self.deployed_at).as_secs_f64(),
        }
    }

    async fn wait_all_ready(&self, limit: Duration) -> Result<(), TargetError> {
        let deadline = Instant::now() + limit;
        loop {
            let (total, not_ready) = {
                let s = self.shared.lock();
                let pods: Vec<_> = s.model.endpoints().pods().cloned().collect();
                let not_ready: Vec<String> = pods
                    .iter()
                    .filter(|p| !p.ready)
                    .map(|p| p.name.clone())
                    .collect();
                (pods.len(), not_ready)
            };
            if not_ready.is_empty() {
                return Ok(());
            }
            if let Some(e) = self.manager.start_failure() {
                return Err(e);
            }
            if Instant::now() >= deadline {
                return Err(TargetError::new(
                    "waiting for the pods to become ready",
                    LocalError::PodsNotReady {
                        ready: total - not_ready.len(),
                        total,
                        waited: limit,
                        not_ready,
                        logs: self.ctx.out_dir.clone(),
                    },
                ));
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
        // The local target models every control-plane part a scenario can ask for; the
        // ingress replicas are the real `haproxy`, so they need it on PATH.
        let haproxy = find_haproxy().is_some();
        Capability::ALL
            .into_iter()
            .filter(|c| *c != Capability::Ingress || haproxy)
            .collect()
    }

    async fn deploy(&mut self, scenario: &Scenario, ctx: &RunContext) -> Result<(), TargetError> {
        std::fs::create_dir_all(&ctx.out_dir).map_err(|e| {
            TargetError::new(
                "preparing the output directory",
                LocalError::Io {
                    context: format!("creating {}", ctx.out_dir.display()),
                    source: e,
                },
            )
        })?;
        let scenario = Arc::new(scenario.clone());
        let shared = SharedState::new(ClusterModel::new(&scenario, ctx.seed));
        let stop = CancellationToken::new();
        for (i, zone) in scenario.cluster.zones.iter().enumerate() {
            let proxy = ZoneProxy::start(zone, ctx.seed.wrapping_add(i as u64 + 1), stop.clone())
                .await
                .map_err(|e| TargetError::new(format!("starting kube-proxy of zone {zone}"), e))?;
            shared.lock().proxies.insert(zone.clone(), proxy);
        }
        let targets: Targets = Default::default();
        let manager = PodManager::new(
            self.bins.clone(),
            self.scraper.clone(),
            scenario.clone(),
            ctx.out_dir.clone(),
            shared.clone(),
            targets.clone(),
            ctx.time_scale,
        );
        let lb = match &scenario.load_balancer {
            Some(spec) => {
                let lb = LbProcess::start(&self.bins, spec, ctx.time_scale, &ctx.out_dir)
                    .await
                    .map_err(|e| TargetError::new("starting the load balancer", e))?;
                let endpoints = shared.lock().endpoints.subscribe();
                lb.feed(endpoints, shared.clone(), stop.clone());
                if spec.readiness_gate {
                    lb.follow_targets(shared.clone(), stop.clone());
                }
                Some(lb)
            }
            None => None,
        };
        let run = Running {
            ingress: None,
            lb,
            scenario: scenario.clone(),
            ctx: ctx.clone(),
            shared: shared.clone(),
            manager: manager.clone(),
            targets,
            samples: Default::default(),
            generators: Default::default(),
            loadgen_metrics: LoadgenMetrics::default(),
            stop,
            stop_sampler: CancellationToken::new(),
            sampler: None,
            last_counters: None,
            clock: None,
            deployed_at: Instant::now(),
        };
        let created = {
            let mut s = shared.lock();
            s.model.set_time(manager.model_time());
            match s.model.create_pods(scenario.service.replicas) {
                Ok(applied) => {
                    s.record(applied.events);
                    Ok(applied.pod_ops)
                }
                Err(e) => Err(TargetError::new(
                    "creating the Service's pods",
                    LocalError::Unschedulable {
                        pods: scenario.service.replicas,
                        source: e,
                    },
                )),
            }
        };
        // Keep what was started even on failure, so teardown stops it.
        let outcome = match created {
            Ok(ops) => manager.execute(ops).await,
            Err(e) => Err(e),
        };
        // Start-up, then the probes until ready, then two periods of slack and 20 s for slow
        // machines.
        let probe = scenario.service.readiness_probe;
        // With the load balancer's readiness gate also the registration
        // (`harness_core::engine::plan::gate_after`).
        let to_ready = scenario.service.startup.latency
            + probe.timing().ready_after(probe.success_threshold)
            + probe.period * 2
            + harness_core::engine::plan::gate_after(&scenario);
        let limit = Duration::from_secs(20) + ctx.time_scale.wall(to_ready);
        let outcome = match outcome {
            Ok(()) => run.wait_all_ready(limit).await,
            Err(e) => Err(e),
        };
        let mut run = run;
        // The ingress replicas start with every pod ready, as a DaemonSet on a running cluster.
        let outcome = match (outcome, &scenario.ingress) {
            (Ok(()), Some(_)) => match find_haproxy() {
                Some(program) => IngressFleet::start(
                    &scenario,
                    &program,
                    shared.clone(),
                    manager.clone(),
                    &ctx.out_dir,
                    ctx.time_scale,
                    ctx.seed,
                )
                .await
                .map(|fleet| run.ingress = Some(fleet))
                .map_err(|e| TargetError::new("starting the ingress replicas", e)),
                None => Err(TargetError::new(
                    "starting the ingress replicas",
                    LocalError::Io {
                        context:
                            "`haproxy` is not on PATH (Debian/Ubuntu: apt-get install haproxy)"
                                .into(),
                        source: std::io::Error::from(std::io::ErrorKind::NotFound),
                    },
                )),
            },
            (outcome, _) => outcome,
        };
        self.run = Some(run);
        outcome
    }

    async fn start_load(&mut self, clock: &RunClock) -> Result<(), TargetError> {
        let bins = self.bins.clone();
        let scraper = self.scraper.clone();
        let run = self.running()?;
        run.clock = Some(*clock);
        run.sampler = Some(tokio::spawn(run_sampler(
            *clock,
            run.targets.clone(),
            run.samples.clone(),
            run.shared.clone(),
            scraper.clone(),
            run.stop_sampler.clone(),
        )));
        let generators = run.scenario.load.generators.clone();
        for (i, generator) in generators.iter().enumerate() {
            let proxy = match (generator.via, &run.lb) {
                (Via::Ingress, _) => match &run.ingress {
                    Some(fleet) => fleet.addr,
                    None => {
                        return Err(TargetError::new(
                            "starting the load",
                            LocalError::NoIngress {
                                generator: generator.name.clone(),
                            },
                        ));
                    }
                },
                (Via::LoadBalancer, Some(lb)) => lb.addr,
                (Via::LoadBalancer, None) => {
                    return Err(TargetError::new(
                        "starting the load",
                        LocalError::NoLoadBalancer {
                            generator: generator.name.clone(),
                        },
                    ));
                }
                (Via::KubeProxy, _) => run
                    .shared
                    .lock()
                    .proxies
                    .get(&generator.zone)
                    .map(|p| p.addr)
                    .ok_or_else(|| {
                        TargetError::new(
                            "starting the load",
                            LocalError::NoForwarder {
                                zone: generator.zone.clone(),
                            },
                        )
                    })?,
            };
            // loadgen binds port 0 and prints the port: no free-port race with another run.
            let metrics = SocketAddr::from(([127, 0, 0, 1], 0));
            let seed = run.ctx.seed.wrapping_add(1000 + i as u64);
            if generator.start_at.is_zero() {
                let started = RunningGenerator::start(
                    &bins,
                    generator,
                    &run.scenario.load,
                    run.ctx.time_scale,
                    GeneratorAddrs {
                        target: proxy,
                        metrics,
                    },
                    &run.ctx.out_dir,
                    seed,
                )
                .await
                .map_err(|e| {
                    TargetError::new(format!("starting generator {}", generator.name), e)
                })?;
                push_metrics(&run.loadgen_metrics, started.metrics);
                lock_generators(&run.generators).push(started);
            } else {
                let (bins, generator, load) =
                    (bins.clone(), generator.clone(), run.scenario.load.clone());
                let (out_dir, generators, shared, loadgen_metrics) = (
                    run.ctx.out_dir.clone(),
                    run.generators.clone(),
                    run.shared.clone(),
                    run.loadgen_metrics.clone(),
                );
                let scale = run.ctx.time_scale;
                let start = clock.load_start + scale.wall(generator.start_at);
                let stop = run.stop.clone();
                tokio::spawn(async move {
                    tokio::select! {
                        () = stop.cancelled() => return,
                        () = tokio::time::sleep_until(start) => {}
                    }
                    match RunningGenerator::start(
                        &bins,
                        &generator,
                        &load,
                        scale,
                        GeneratorAddrs {
                            target: proxy,
                            metrics,
                        },
                        &out_dir,
                        seed,
                    )
                    .await
                    {
                        Ok(started) => {
                            push_metrics(&loadgen_metrics, started.metrics);
                            lock_generators(&generators).push(started);
                        }
                        Err(e) => shared.lock().record(vec![EventKind::Note {
                            message: format!(
                                "generator {} did not start: {}",
                                generator.name,
                                error_chain(&e)
                            ),
                        }]),
                    }
                });
            }
        }
        tokio::spawn(run_controllers(
            Controllers {
                manager: run.manager.clone(),
                shared: run.shared.clone(),
                scenario: run.scenario.clone(),
                samples: run.samples.clone(),
                scraper,
                loadgen_metrics: run.loadgen_metrics.clone(),
            },
            run.stop.clone(),
        ));
        Ok(())
    }

    async fn act(&mut self, event: &TimelineEvent) -> Result<(), TargetError> {
        let run = self.running()?;
        let ingress_action = match event.action {
            Action::ReloadIngress(which) => Some((ReplicaAction::Reload, which)),
            Action::RestartIngress(which) => Some((ReplicaAction::Restart, which)),
            _ => None,
        };
        if let Some((action, which)) = ingress_action {
            run.shared.lock().record(vec![EventKind::Action {
                name: event.name.clone(),
                description: event.to_string(),
            }]);
            let fleet = run.ingress.as_ref().ok_or_else(|| {
                TargetError::new(
                    format!("applying `{event}`"),
                    LocalError::IngressNotDeployed,
                )
            })?;
            return fleet
                .act(action, which)
                .await
                .map_err(|e| TargetError::new(format!("applying `{event}`"), e));
        }
        let ops = {
            let mut s = run.shared.lock();
            s.model.set_time(run.manager.model_time());
            s.record(vec![EventKind::Action {
                name: event.name.clone(),
                description: event.to_string(),
            }]);
            let applied = s
                .model
                .apply(&event.action)
                .map_err(|e| TargetError::new(format!("applying `{event}`"), e))?;
            s.record(applied.events);
            applied.pod_ops
        };
        run.manager.execute(ops).await
    }

    async fn observe(&mut self) -> Result<Observation, TargetError> {
        let scraper = self.scraper.clone();
        let run = self.running()?;
        if let Some(e) = run.manager.start_failure() {
            return Err(e);
        }
        let (achieved_rps, error_rate) = live_rates(run, &scraper).await;
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
            .filter(|p| !p.terminating)
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
            achieved_rps,
            error_rate,
        })
    }

    async fn collect(&mut self, interrupted: bool) -> Result<RunData, TargetError> {
        let run = self.running()?;
        let clock = run
            .clock
            .ok_or_else(|| TargetError::new("collecting", LocalError::LoadNotStarted))?;
        let duration_s = clock.measured_s(interrupted);
        let remaining =
            (clock.load_start + clock.duration).saturating_duration_since(Instant::now());
        let limit = remaining + run.scenario.load.request_timeout + Duration::from_secs(10);
        let mut generators = Vec::new();
        let mut failures = Vec::new();
        let started = std::mem::take(&mut *lock_generators(&run.generators));
        for g in started {
            match g.finish(interrupted, limit).await {
                Ok(report) => generators.push(report),
                Err(e) => failures.push(e),
            }
        }
        run.stop_sampler.cancel();
        if let Some(sampler) = run.sampler.take() {
            // The last scrape is bounded by the scraper's timeout.
            let _ = tokio::time::timeout(Duration::from_secs(5), sampler).await;
        }
        let samples = std::mem::take(&mut *run.samples.lock().unwrap_or_else(|e| e.into_inner()));
        let max_concurrency = run
            .scenario
            .service
            .sidecar
            .map(|s| u64::from(s.max_concurrency))
            .unwrap_or(0);
        let pods = run
            .manager
            .meta()
            .into_iter()
            .map(|(name, meta)| PodRun {
                samples: samples.get(&name).cloned().unwrap_or_default(),
                name,
                node: meta.node,
                zone: meta.zone,
                max_concurrency,
            })
            .collect();
        let events = {
            let s = run.shared.lock();
            s.events
                .iter()
                .map(|(at, kind)| RecordedEvent {
                    t_s: run.t_s(*at),
                    kind: kind.clone(),
                })
                .collect()
        };
        if !failures.is_empty() {
            return Err(TargetError::new(
                "collecting the generators' reports",
                LocalError::Generators { failures },
            ));
        }
        let (lb, lb_routable) = match &run.lb {
            Some(lb) => {
                let stats = lb
                    .stats()
                    .await
                    .map_err(|e| TargetError::new("collecting the load balancer's counts", e))?;
                (lb_buckets(&stats, &clock), lb_routable(&stats, &clock))
            }
            None => (Vec::new(), Vec::new()),
        };
        Ok(RunData {
            load_started_unix_ms: clock.load_start_unix_ms,
            duration_s,
            generators,
            pods,
            events,
            lb,
            lb_routable,
        })
    }

    async fn teardown(&mut self) -> Result<(), TargetError> {
        let Some(run) = self.run.take() else {
            return Ok(());
        };
        run.stop_sampler.cancel();
        run.stop.cancel();
        let left = std::mem::take(&mut *lock_generators(&run.generators));
        for mut g in left {
            g.process.terminate(TEARDOWN_GRACE).await;
        }
        if let Some(mut fleet) = run.ingress {
            fleet.shutdown().await;
        }
        run.manager.shutdown(TEARDOWN_GRACE).await;
        if let Some(mut lb) = run.lb {
            lb.process.terminate(TEARDOWN_GRACE).await;
        }
        Ok(())
    }
}

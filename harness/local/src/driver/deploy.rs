//! Deploying a local run — the per-zone forwarders, the load balancer, the pods the model
//! schedules (then their probes until ready) and the ingress replicas — and taking it down.

use std::sync::Arc;
use std::time::Duration;

use harness_core::control_plane::cluster::ClusterModel;
use harness_core::engine::{RunContext, TargetError};
use harness_core::plan::gate_after;
use harness_core::scenario::model::{Scenario, hops};
use harness_core::target_kit::{LiveRates, Sampler};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::{LocalTarget, Running, TEARDOWN_GRACE};
use crate::LocalError;
use crate::cluster_state::SharedState;
use crate::ingress::IngressFleet;
use crate::ingress::haproxy::find_haproxy;
use crate::kube_proxy::ZoneProxy;
use crate::lb_sync::LbProcess;
use crate::load::{LoadgenMetrics, lock_generators};
use crate::pod_lifecycle::PodManager;
use crate::sampler::Targets;
use crate::zone_relays::ZoneRelays;

/// Starts everything the scenario deploys and waits for its pods to be ready.
pub(super) async fn deploy(
    target: &mut LocalTarget,
    scenario: &Scenario,
    ctx: &RunContext,
) -> Result<(), TargetError> {
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
        let faults = shared.lock().zone_faults.clone();
        let proxy = ZoneProxy::start(
            zone,
            ctx.seed.wrapping_add(i as u64 + 1),
            faults,
            stop.clone(),
        )
        .await
        .map_err(|e| TargetError::new(format!("starting kube-proxy of zone {zone}"), e))?;
        shared.lock().proxies.insert(zone.clone(), proxy);
    }
    // With zone faults, the hops the forwarders do not carry get relays (crate::zone_relays).
    let relays = scenario
        .has_zone_faults()
        .then(|| ZoneRelays::new(shared.lock().zone_faults.clone(), stop.clone()));
    let targets: Targets = Default::default();
    let manager = PodManager::new(
        target.bins.clone(),
        target.scraper.clone(),
        scenario.clone(),
        shared.clone(),
        targets.clone(),
        crate::pod_lifecycle::PodRunContext {
            out_dir: ctx.out_dir.clone(),
            scale: ctx.time_scale,
            seed: ctx.seed,
        },
    );
    let lb = match &scenario.load_balancer {
        Some(spec) => {
            let lb = LbProcess::start(&target.bins, spec, ctx.time_scale, &ctx.out_dir)
                .await
                .map_err(|e| TargetError::new("starting the load balancer", e))?;
            let endpoints = match (&relays, hops::load_balancer_zone(&scenario)) {
                (Some(relays), Some(zone)) => relays.follow(&zone, &shared),
                _ => shared.lock().endpoints.subscribe(),
            };
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
        relays: relays.clone(),
        lb,
        scenario: scenario.clone(),
        ctx: ctx.clone(),
        shared: shared.clone(),
        manager: manager.clone(),
        targets,
        sampler: Sampler::default(),
        generators: Default::default(),
        loadgen_metrics: LoadgenMetrics::default(),
        stop,
        live_rates: LiveRates::default(),
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
    // (`harness_core::plan::gate_after`).
    let to_ready = scenario.service.startup.latency
        + probe.timing().ready_after(probe.success_threshold)
        + probe.period * 2
        + gate_after(&scenario);
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
                relays.as_ref(),
            )
            .await
            .map(|fleet| run.ingress = Some(fleet))
            .map_err(|e| TargetError::new("starting the ingress replicas", e)),
            None => Err(TargetError::new(
                "starting the ingress replicas",
                LocalError::Io {
                    context: "`haproxy` is not on PATH (Debian/Ubuntu: apt-get install haproxy)"
                        .into(),
                    source: std::io::Error::from(std::io::ErrorKind::NotFound),
                },
            )),
        },
        (outcome, _) => outcome,
    };
    target.run = Some(run);
    outcome
}

impl Running {
    /// Waits until every pod of the model is ready, or fails naming the ones that are not.
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

/// Stops the generators, the ingress replicas, the pods and the load balancer.
pub(super) async fn teardown(run: Running) -> Result<(), TargetError> {
    run.sampler.stop();
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

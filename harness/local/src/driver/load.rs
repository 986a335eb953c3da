//! Starting the load of a local run: the sampler, each generator against its way in (the
//! zone's kube-proxy forwarder, the load balancer or the ingress), at load start or at its
//! `startAt`, and the control loops.

use std::net::SocketAddr;

use harness_core::clock::RunClock;
use harness_core::engine::TargetError;
use harness_core::measure::EventKind;
use harness_core::scenario::model::{Via, hops};
use harness_core::text::error_chain;

use super::Running;
use crate::LocalError;
use crate::bins::WorkloadBins;
use crate::control_loops::{Controllers, run_controllers};
use crate::load::{GeneratorAddrs, RunningGenerator, lock_generators, push_metrics};
use crate::sampler::sample_round;
use crate::scrape::Scraper;

/// Starts the sampler, the generators and the control loops on `clock`.
pub(super) async fn start_load(
    run: &mut Running,
    clock: &RunClock,
    bins: WorkloadBins,
    scraper: Scraper,
) -> Result<(), TargetError> {
    run.clock = Some(*clock);
    let (targets, shared, sampling) = (run.targets.clone(), run.shared.clone(), scraper.clone());
    run.sampler.start(*clock, move || {
        let (targets, shared, scraper) = (targets.clone(), shared.clone(), sampling.clone());
        async move { sample_round(&targets, &shared, &scraper).await }
    });
    let generators = run.scenario.load.generators.clone();
    for (i, generator) in generators.iter().enumerate() {
        let proxy = match (generator.via, &run.lb) {
            (Via::Ingress, _) => match run
                .ingress
                .as_ref()
                .and_then(|f| f.addr_for(&generator.zone))
            {
                Some(addr) => addr,
                None => {
                    return Err(TargetError::new(
                        "starting the load",
                        LocalError::NoIngress {
                            generator: generator.name.clone(),
                        },
                    ));
                }
            },
            (Via::LoadBalancer, Some(lb)) => {
                match (&run.relays, hops::load_balancer_zone(&run.scenario)) {
                    (Some(relays), Some(lb_zone)) => relays
                        .reach(&generator.zone, &lb_zone, lb.addr)
                        .map_err(|e| TargetError::new("reaching the load balancer's zone", e))?,
                    _ => lb.addr,
                }
            }
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
            .map_err(|e| TargetError::new(format!("starting generator {}", generator.name), e))?;
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
            samples: run.sampler.samples().clone(),
            scraper,
            loadgen_metrics: run.loadgen_metrics.clone(),
        },
        run.stop.clone(),
    ));
    Ok(())
}

//! Collecting a local run: each generator's report (waited for, or stopped when the run was
//! cut short), the sampler's last round, every pod that ran with its samples, the timeline on
//! the run's clock and the load balancer's per-pod accounting.

use std::collections::BTreeMap;
use std::time::Duration;

use harness_core::engine::TargetError;
use harness_core::measure::{RunData, lb_data};
use harness_core::target_kit::{self, PlacedPod, PodExit};
use tokio::time::Instant;

use super::Running;
use crate::LocalError;
use crate::load::lock_generators;

/// Waits for the generators (or stops them when `interrupted`) and gathers the run's data.
pub(super) async fn collect(run: &mut Running, interrupted: bool) -> Result<RunData, TargetError> {
    let clock = run
        .clock
        .ok_or_else(|| TargetError::new("collecting", LocalError::LoadNotStarted))?;
    let duration_s = clock.measured_s(interrupted);
    let remaining = (clock.load_start + clock.duration).saturating_duration_since(Instant::now());
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
    // The last scrape is bounded by the scraper's timeout.
    let samples = run.sampler.finish(Duration::from_secs(5)).await;
    let placed = run
        .manager
        .meta()
        .into_iter()
        .map(|(name, meta)| PlacedPod {
            name,
            node: meta.node,
            zone: meta.zone,
        });
    let (events, exits) = {
        let s = run.shared.lock();
        let exits: BTreeMap<String, PodExit> = s
            .exits
            .iter()
            .map(|(pod, (at, totals))| {
                let exit = PodExit {
                    t_s: target_kit::run_time(Some(&clock), run.deployed_at, *at),
                    totals: *totals,
                };
                (pod.clone(), exit)
            })
            .collect();
        let events = target_kit::events_on_clock(&s.events, Some(&clock), run.deployed_at);
        (events, exits)
    };
    let collected = target_kit::pod_runs(
        placed,
        &samples,
        &exits,
        target_kit::max_concurrency(&run.scenario),
    );
    if !failures.is_empty() {
        return Err(TargetError::new(
            "collecting the generators' reports",
            LocalError::Generators { failures },
        ));
    }
    let (lb, lb_routable, lb_accounts) = match &run.lb {
        Some(lb) => {
            let stats = lb
                .stats()
                .await
                .map_err(|e| TargetError::new("collecting the load balancer's counts", e))?;
            lb_data(&stats, &clock)
        }
        None => Default::default(),
    };
    Ok(RunData {
        load_started_unix_ms: clock.load_start_unix_ms,
        duration_s,
        generators,
        pods: collected.pods,
        events,
        lb,
        lb_routable,
        lb_accounts,
        counters_cut: collected.counters_cut,
    })
}

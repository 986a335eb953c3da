//! Keeps the L7 load balancer in line with the ported target-registration model
//! (`kube_model::workloads::load_balancer`, an AWS Load Balancer Controller + ALB in IP
//! mode): every 50 ms it tells the model which pods are ready endpoints, runs the target
//! group's health checks when configured, and pushes the routable targets to the proxy. A
//! target keeps getting requests until its deregistration takes effect, even after its pod is
//! gone — that is the incident's 502 window.

use std::collections::BTreeSet;
use std::time::Duration;

use harness_core::scenario::model::LoadBalancer as LbSpec;
use kube_model::workloads::{HealthCheckSpec, LoadBalancer as TargetGroup, LoadBalancerSpec};
use tokio_util::sync::CancellationToken;

use harness_core::engine::RunClock;
use harness_core::measure::LbBucket;
use tokio::time::Instant;

use crate::load_balancer::{LbStats, LoadBalancer, Target};
use crate::manager::PodManager;
use crate::scrape::Scraper;
use crate::shared::SharedState;

const TICK: Duration = Duration::from_millis(50);

/// The model's spec from the scenario's (already time-scaled) settings.
pub fn target_group_spec(spec: &LbSpec) -> LoadBalancerSpec {
    let defaults = LoadBalancerSpec::default();
    LoadBalancerSpec {
        registration_lag: spec.registration_lag,
        deregistration_lag: spec.deregistration_lag,
        deregistration_delay: spec.deregistration_delay,
        health_check: match &spec.health_check {
            Some(hc) => HealthCheckSpec {
                interval: hc.interval,
                healthy_threshold: hc.healthy_threshold,
                unhealthy_threshold: hc.unhealthy_threshold,
                initial_checks: defaults.health_check.initial_checks,
            },
            // No health checks: a target takes traffic from its registration on.
            None => HealthCheckSpec {
                initial_checks: 0,
                ..defaults.health_check
            },
        },
        active_health_checks: spec.health_check.is_some(),
    }
}

/// Runs until `stop` is cancelled.
pub async fn run_lb_sync(
    spec: LbSpec,
    proxy: LoadBalancer,
    manager: PodManager,
    shared: SharedState,
    scraper: Scraper,
    stop: CancellationToken,
) {
    let mut group = TargetGroup::new(target_group_spec(&spec));
    let mut ready: BTreeSet<String> = BTreeSet::new();
    let mut routable: Vec<String> = Vec::new();
    let mut next_check = Duration::ZERO;
    let mut ticker = tokio::time::interval(TICK);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = ticker.tick() => {}
        }
        let now = manager.now();
        let (ready_now, addrs) = {
            let s = shared.lock();
            let ready_now: BTreeSet<String> = s
                .model
                .endpoints()
                .pods()
                .filter(|p| p.ready && !p.terminating)
                .map(|p| p.name.clone())
                .collect();
            (ready_now, s.known_addrs.clone())
        };
        for pod in ready_now.difference(&ready) {
            group.on_endpoint_ready(pod, now);
        }
        for pod in ready.difference(&ready_now) {
            group.on_endpoint_removed(pod, now);
        }
        ready = ready_now;
        if let Some(hc) = &spec.health_check
            && now >= next_check
        {
            next_check = now + hc.interval;
            // Checks go to every target the group still holds, dead or alive.
            for pod in addrs.keys() {
                if let Some(addr) = addrs.get(pod) {
                    let ok = scraper.probe(*addr, &hc.path).await;
                    group.on_health_check(pod, ok, now);
                }
            }
        }
        let now_routable = group.routable(now);
        if now_routable != routable {
            let targets = now_routable
                .iter()
                .filter_map(|pod| {
                    addrs.get(pod).map(|addr| Target {
                        pod: pod.clone(),
                        addr: *addr,
                    })
                })
                .collect();
            proxy.set_targets(targets);
            routable = now_routable;
        }
    }
}

/// The load balancer's per-pod buckets on the run's clock; `failed` counts its own 502/503/504
/// answers, 5xx relayed from pods and bodies cut short.
pub fn lb_buckets(stats: &LbStats, epoch: Instant, clock: &RunClock) -> Vec<LbBucket> {
    let width = Duration::from_millis(stats.bucket_ms.max(1));
    let mut out = Vec::new();
    for (pod, pod_stats) in &stats.pods {
        for (slot, counts) in &pod_stats.buckets {
            let start = epoch + width * (*slot as u32);
            let relayed_5xx: u64 = counts
                .by_status
                .iter()
                .filter(|(code, _)| **code >= 500)
                .map(|(_, n)| n)
                .sum();
            // The balancer's own errors are also in by_status; count each failure once.
            let own: u64 = counts.lb_errors.values().sum();
            let failed = relayed_5xx.max(own) + counts.body_errors;
            out.push(LbBucket {
                pod: pod.clone(),
                t_s: clock.t_s(start),
                width_s: width.as_secs_f64(),
                requests: counts.sent,
                failed,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_health_checks_targets_are_routable_from_registration() {
        let spec = LbSpec {
            registration_lag: Duration::from_millis(500),
            deregistration_lag: Duration::from_secs(2),
            deregistration_delay: Duration::from_secs(3),
            health_check: None,
        };
        let mut group = TargetGroup::new(target_group_spec(&spec));
        group.on_endpoint_ready("pod-0", Duration::ZERO);
        assert!(group.routable(Duration::from_millis(400)).is_empty());
        assert_eq!(group.routable(Duration::from_millis(500)), vec!["pod-0"]);
        group.on_endpoint_removed("pod-0", Duration::from_secs(1));
        assert_eq!(
            group.routable(Duration::from_millis(2900)),
            vec!["pod-0"],
            "lag"
        );
        assert!(
            group.routable(Duration::from_secs(3)).is_empty(),
            "deregistered"
        );
    }
}

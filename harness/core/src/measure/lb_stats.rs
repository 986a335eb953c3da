//! The load balancer's accounting (`GET /stats` of the `loadbalancer` workload, wherever it
//! runs: a local process or a pod read through the API server's pod proxy) on the run's clock:
//! per-pod buckets of requests and failures ([`LbBucket`]) and each pod's joins and leaves of
//! the routable set ([`LbRoutable`]), and each pod's account ([`LbAccount`]). One conversion for every target, so the lifecycle
//! metrics (`terminationErrorRate`, `requestsAfterRemoval`, `minRoutableTargets`) read the same.

use std::collections::BTreeMap;
use std::time::Duration;

use tokio::time::Instant;
use workload_contract::loadbalancer::LbStats;

use crate::clock::RunClock;
use crate::measure::{LbAccount, LbBucket, LbRoutable};

/// The balancer's per-pod buckets on the run's clock; `failed` counts its own 502/503/504
/// answers, 5xx relayed from pods and bodies cut short.
pub fn lb_buckets(stats: &LbStats, clock: &RunClock) -> Vec<LbBucket> {
    let width = Duration::from_millis(stats.bucket_ms.max(1));
    let epoch = instant_of_unix_us(stats.epoch_unix_us);
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

/// Each pod's account at the load balancer over the whole run.
pub fn lb_accounts(stats: &LbStats) -> BTreeMap<String, LbAccount> {
    stats
        .pods
        .iter()
        .map(|(pod, p)| {
            let c = &p.totals;
            let account = LbAccount {
                sent: c.sent,
                responses: c.responses(),
                own_errors: c.lb_errors.values().sum(),
                client_closed: c.client_closed,
                in_flight: p.in_flight,
            };
            (pod.clone(), account)
        })
        .collect()
}

/// The load balancer's counts as a run keeps them: per-pod buckets and routable changes on
/// the run's clock, and each pod's account.
pub fn lb_data(
    stats: &LbStats,
    clock: &RunClock,
) -> (Vec<LbBucket>, Vec<LbRoutable>, BTreeMap<String, LbAccount>) {
    (
        lb_buckets(stats, clock),
        lb_routable(stats, clock),
        lb_accounts(stats),
    )
}

/// Each pod's joins and leaves of the balancer's routable set on the run's clock, in time
/// order.
pub fn lb_routable(stats: &LbStats, clock: &RunClock) -> Vec<LbRoutable> {
    let epoch = instant_of_unix_us(stats.epoch_unix_us);
    let mut out: Vec<LbRoutable> = stats
        .pods
        .iter()
        .flat_map(|(pod, pod_stats)| {
            pod_stats.routable.iter().map(move |change| LbRoutable {
                pod: pod.clone(),
                t_s: clock.t_s(epoch + Duration::from_millis(change.at_ms)),
                routable: change.routable,
            })
        })
        .collect();
    out.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
    out
}

/// The instant of the monotonic clock at a wall-clock time (Unix µs).
fn instant_of_unix_us(unix_us: u64) -> Instant {
    let now = Instant::now();
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let at = Duration::from_micros(unix_us);
    if at <= wall {
        now.checked_sub(wall - at).unwrap_or(now)
    } else {
        now + (at - wall)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use workload_contract::loadbalancer::{Counts, LbErrorReason, PodStats, RoutableChange};

    #[test]
    fn buckets_land_on_the_run_clock_and_count_each_failure_once() {
        let clock = RunClock::starting_after(Duration::ZERO, Duration::from_secs(60));
        // The balancer's epoch 2.5 s before the load start.
        let epoch_us = clock.load_start_unix_ms * 1000 - 2_500_000;
        let mut counts = Counts {
            sent: 10,
            body_errors: 1,
            ..Counts::default()
        };
        counts.by_status.insert(200, 6);
        counts.by_status.insert(502, 3);
        counts.lb_errors.insert(LbErrorReason::Connect, 3);
        let stats = LbStats {
            epoch_unix_us: epoch_us,
            bucket_ms: 100,
            pods: BTreeMap::from([(
                "pod-1".to_string(),
                PodStats {
                    buckets: BTreeMap::from([(30, counts)]),
                    ..PodStats::default()
                },
            )]),
            ..LbStats::default()
        };
        let buckets = lb_buckets(&stats, &clock);
        assert_eq!(buckets.len(), 1);
        let b = &buckets[0];
        // Bucket 30 of 100 ms starts 3.0 s after the epoch: 0.5 s after the load start.
        assert!((b.t_s - 0.5).abs() < 0.01, "{}", b.t_s);
        assert_eq!((b.requests, b.failed, b.width_s), (10, 4, 0.1));
    }

    #[test]
    fn routable_changes_land_on_the_run_clock_in_time_order() {
        let clock = RunClock::starting_after(Duration::ZERO, Duration::from_secs(60));
        let epoch_us = clock.load_start_unix_ms * 1000 - 2_000_000;
        let change = |at_ms, routable| RoutableChange { at_ms, routable };
        let stats = LbStats {
            epoch_unix_us: epoch_us,
            bucket_ms: 100,
            pods: BTreeMap::from([
                (
                    "pod-1".to_string(),
                    PodStats {
                        routable: vec![change(1000, true), change(5000, false)],
                        ..PodStats::default()
                    },
                ),
                (
                    "pod-2".to_string(),
                    PodStats {
                        routable: vec![change(3000, true)],
                        ..PodStats::default()
                    },
                ),
            ]),
            ..LbStats::default()
        };
        let got: Vec<(String, i64, bool)> = lb_routable(&stats, &clock)
            .into_iter()
            .map(|c| (c.pod, (c.t_s * 10.0).round() as i64, c.routable))
            .collect();
        assert_eq!(
            got,
            vec![
                ("pod-1".into(), -10, true),
                ("pod-2".into(), 10, true),
                ("pod-1".into(), 30, false),
            ]
        );
    }
}

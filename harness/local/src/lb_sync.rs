//! The load balancer of a local run: the `loadbalancer` workload as a process on loopback
//! (flags from the scenario's `loadBalancer`), fed with the Service's ready endpoints the
//! moment they change (`PUT /endpoints`, what an EndpointSlice watch gives it in a cluster),
//! and its per-pod accounting read back at the end (`GET /stats`) and put on the run's clock.
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

use harness_core::engine::{RunClock, TimeScale};
use harness_core::measure::{EventKind, LbBucket, LbRoutable};
use harness_core::scenario::model::LoadBalancer;
use harness_core::workload_args::loadbalancer_args;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use workload_contract::loadbalancer::{
    ENDPOINTS_PATH, EndpointSet, LbStats, RoutableTargets, STATS_PATH, TARGETS_PATH,
};

use crate::LocalError;
use crate::bins::WorkloadBins;
use crate::process::{ProcessSpec, Supervised};
use crate::shared::SharedState;

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

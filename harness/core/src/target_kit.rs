//! What every target does the same way, written once: the live request rates from the load
//! generators' counters, the sidecar sampler's "every second until stopped, then once more"
//! loop, the pods as progress shows them, and the end of `collect` — each pod's samples and
//! the recorded events moved onto the run's clock. A target supplies only what is its own
//! (where the counters and metrics come from, which pods exist and which are ready).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use workload_contract::loadgen::LoadgenCounters;
use workload_contract::sidecar::SidecarMetrics;

use crate::clock::RunClock;
use crate::engine::PodObservation;
use crate::measure::{EventKind, PodRun, PodSample, RecordedEvent};
use crate::scenario::model::Scenario;

/// Pod name → its samples so far, in the order they were taken.
pub type Samples = Arc<Mutex<BTreeMap<String, Vec<PodSample>>>>;

/// The samples, whatever a panicking holder left behind.
pub fn lock_samples(samples: &Samples) -> MutexGuard<'_, BTreeMap<String, Vec<PodSample>>> {
    samples.lock().unwrap_or_else(|e| e.into_inner())
}

/// The sidecar's concurrency limit of every pod (0 without a sidecar).
pub fn max_concurrency(scenario: &Scenario) -> u64 {
    scenario
        .service
        .sidecar
        .map(|s| u64::from(s.max_concurrency))
        .unwrap_or(0)
}

/// Live request rates for progress: requests sent per second and the failed share of those
/// completed since the previous reading of the generators' cumulative counters.
#[derive(Debug, Clone, Copy, Default)]
pub struct LiveRates {
    last: Option<(Instant, LoadgenCounters)>,
}

impl LiveRates {
    /// Takes the generators' counters summed at `at`: `(sent per second, error rate)`, each
    /// `None` until two readings are apart (and the error rate while nothing completed).
    pub fn update(&mut self, at: Instant, now: LoadgenCounters) -> (Option<f64>, Option<f64>) {
        let rates = self.last.map(|(then, before)| {
            let seconds = (at - then).as_secs_f64().max(1e-3);
            let sent = now.attempted.saturating_sub(before.attempted) as f64 / seconds;
            let completed = now.completed.saturating_sub(before.completed);
            let failed = now.failed.saturating_sub(before.failed);
            (
                Some(sent),
                (completed > 0).then(|| failed as f64 / completed as f64),
            )
        });
        self.last = Some((at, now));
        rates.unwrap_or((None, None))
    }
}

/// One pod of a sampling round: its name, whether it was in the Service's endpoints, and
/// its sidecar's metrics (`None`: no sidecar, or it did not answer).
#[derive(Debug, Clone, PartialEq)]
pub struct ScrapedPod {
    pub name: String,
    pub ready: bool,
    /// The pod has a sidecar (so `metrics: None` means it did not answer this time).
    pub has_sidecar: bool,
    pub metrics: Option<SidecarMetrics>,
}

/// The sampler of a run: every second a round of scrapes until stopped, then one round more,
/// so the last sample of each pod holds its final counters once the generators are done.
#[derive(Debug, Default)]
pub struct Sampler {
    samples: Samples,
    stop: CancellationToken,
    task: Option<JoinHandle<()>>,
}

impl Sampler {
    /// The samples so far (shared with the sampling task).
    pub fn samples(&self) -> &Samples {
        &self.samples
    }

    /// Starts sampling on `clock`: `round` scrapes the pods there are now.
    pub fn start<F, Fut>(&mut self, clock: RunClock, round: F)
    where
        F: FnMut() -> Fut + Send + 'static,
        Fut: Future<Output = Vec<ScrapedPod>> + Send + 'static,
    {
        self.task = Some(tokio::spawn(sample_until_stopped(
            clock,
            self.samples.clone(),
            self.stop.clone(),
            round,
        )));
    }

    /// Stops sampling after one last round (bounded by `limit`) and hands over every pod's
    /// samples.
    pub async fn finish(&mut self, limit: Duration) -> BTreeMap<String, Vec<PodSample>> {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            let _ = tokio::time::timeout(limit, task).await;
        }
        std::mem::take(&mut *lock_samples(&self.samples))
    }

    /// Stops sampling without waiting (teardown).
    pub fn stop(&self) {
        self.stop.cancel();
    }

    /// Cancelled when sampling stops: for tasks that end with the sampler (observers).
    pub fn stop_token(&self) -> &CancellationToken {
        &self.stop
    }
}

/// Every second a round of `round` recorded at its instant on `clock`, until `stop`; then one
/// round more, and return.
pub async fn sample_until_stopped<F, Fut>(
    clock: RunClock,
    samples: Samples,
    stop: CancellationToken,
    mut round: F,
) where
    F: FnMut() -> Fut,
    Fut: Future<Output = Vec<ScrapedPod>>,
{
    let mut ticker = tokio::time::interval(Duration::from_secs(1));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        let last = tokio::select! {
            () = stop.cancelled() => true,
            _ = ticker.tick() => false,
        };
        let t_s = clock.now_s();
        let scraped = round().await;
        let mut all = lock_samples(&samples);
        for pod in scraped {
            let series = all.entry(pod.name).or_default();
            let sample = match (pod.metrics, series.last()) {
                // A sidecar that did not answer this round (busy, or exiting) has not lost
                // its counts: its cumulative counters carry over, not drop to zero.
                (None, Some(last)) if pod.has_sidecar => PodSample {
                    t_s,
                    ready: pod.ready,
                    ..last.clone()
                },
                (metrics, _) => PodSample::scraped(t_s, pod.ready, metrics),
            };
            series.push(sample);
        }
        drop(all);
        if last {
            return;
        }
    }
}

/// A pod as a target knows it while the run goes on.
#[derive(Debug, Clone, PartialEq)]
pub struct LivePod {
    pub name: String,
    pub zone: String,
    pub ready: bool,
}

/// The pods as progress shows them: each with its latest sample's in-flight requests and
/// queue against the sidecar's limit.
pub fn pod_observations(
    pods: impl IntoIterator<Item = LivePod>,
    samples: &Samples,
    max_concurrency: u64,
) -> Vec<PodObservation> {
    let samples = lock_samples(samples);
    pods.into_iter()
        .map(|p| {
            let last = samples.get(&p.name).and_then(|v| v.last());
            PodObservation {
                in_flight: last.map_or(0, |l| l.in_flight),
                queue_depth: last.map_or(0, |l| l.queue_depth),
                name: p.name,
                zone: p.zone,
                ready: p.ready,
                max_concurrency,
            }
        })
        .collect()
}

/// Where a pod ran.
#[derive(Debug, Clone, PartialEq)]
pub struct PlacedPod {
    pub name: String,
    pub node: String,
    pub zone: String,
}

/// A pod whose processes exited during the run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PodExit {
    /// When, on the run's clock.
    pub t_s: f64,
    /// Its sidecar's final counters, as it wrote them when it exited (`None`: it wrote none,
    /// e.g. killed at the end of its grace period).
    pub totals: Option<SidecarMetrics>,
}

/// The pods of a run as collected.
#[derive(Debug, Clone, Default)]
pub struct CollectedPods {
    pub pods: Vec<PodRun>,
    /// Pods with a sidecar that exited without final counters ([`RunData::counters_cut`]).
    ///
    /// [`RunData::counters_cut`]: crate::measure::RunData::counters_cut
    pub counters_cut: std::collections::BTreeSet<String>,
}

/// Every pod of the run with its samples (none for a pod never scraped); a pod that exited
/// during the run ends with a sample of its sidecar's final counters at its exit, so nothing
/// that arrived during its drain is cut off.
pub fn pod_runs(
    pods: impl IntoIterator<Item = PlacedPod>,
    samples: &BTreeMap<String, Vec<PodSample>>,
    exits: &BTreeMap<String, PodExit>,
    max_concurrency: u64,
) -> CollectedPods {
    let mut out = CollectedPods::default();
    for p in pods {
        let mut pod_samples = samples.get(&p.name).cloned().unwrap_or_default();
        match exits.get(&p.name) {
            Some(PodExit {
                t_s,
                totals: Some(totals),
            }) => {
                let t_s = pod_samples.last().map_or(*t_s, |last| t_s.max(last.t_s));
                pod_samples.push(PodSample::scraped(t_s, false, Some(*totals)));
            }
            Some(PodExit { totals: None, .. }) if max_concurrency > 0 => {
                out.counters_cut.insert(p.name.clone());
            }
            _ => {}
        }
        out.pods.push(PodRun {
            samples: pod_samples,
            name: p.name,
            node: p.node,
            zone: p.zone,
            max_concurrency,
        });
    }
    out
}

/// Seconds on the run's clock; before the load starts (no clock yet), seconds since `origin`.
pub fn run_time(clock: Option<&RunClock>, origin: Instant, at: Instant) -> f64 {
    match clock {
        Some(clock) => clock.t_s(at),
        None => (at - origin).as_secs_f64(),
    }
}

/// Recorded events moved onto the run's clock ([`run_time`]).
pub fn events_on_clock(
    events: &[(Instant, EventKind)],
    clock: Option<&RunClock>,
    origin: Instant,
) -> Vec<RecordedEvent> {
    events
        .iter()
        .map(|(at, kind)| RecordedEvent {
            t_s: run_time(clock, origin, *at),
            kind: kind.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counters(attempted: u64, completed: u64, failed: u64) -> LoadgenCounters {
        LoadgenCounters {
            attempted,
            completed,
            failed,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn live_rates_are_differences_over_the_time_between_readings() {
        let mut rates = LiveRates::default();
        let t0 = Instant::now();
        assert_eq!(rates.update(t0, counters(100, 90, 0)), (None, None));
        let t1 = t0 + Duration::from_secs(2);
        // 400 sent in 2 s; of 300 completed, 30 failed.
        assert_eq!(
            rates.update(t1, counters(500, 390, 30)),
            (Some(200.0), Some(0.1))
        );
        // Nothing completed: no error rate, not 0.
        let t2 = t1 + Duration::from_secs(1);
        assert_eq!(rates.update(t2, counters(510, 390, 30)), (Some(10.0), None));
    }

    #[tokio::test(start_paused = true)]
    async fn the_sampler_takes_one_round_more_after_it_is_stopped() {
        let clock = RunClock::starting_after(Duration::ZERO, Duration::from_secs(60));
        let mut sampler = Sampler::default();
        let rounds = Arc::new(Mutex::new(0u64));
        let counted = rounds.clone();
        sampler.start(clock, move || {
            let counted = counted.clone();
            async move {
                let mut n = counted.lock().unwrap();
                *n += 1;
                vec![ScrapedPod {
                    name: "pod-0".into(),
                    ready: true,
                    has_sidecar: true,
                    // The third round is not answered.
                    metrics: (*n != 3).then_some(SidecarMetrics {
                        received: *n,
                        ..SidecarMetrics::default()
                    }),
                }]
            }
        });
        tokio::time::sleep(Duration::from_millis(2500)).await;
        let samples = sampler.finish(Duration::from_secs(5)).await;
        let taken = *rounds.lock().unwrap();
        // Rounds at 0 s, 1 s and 2 s, then the last one after the stop.
        assert_eq!(taken, 4);
        let pod = &samples["pod-0"];
        assert_eq!(pod.len(), 4);
        assert_eq!(pod.last().unwrap().received, 4, "the last round's counters");
        assert!(pod.windows(2).all(|w| w[0].t_s <= w[1].t_s));
        // The unanswered round keeps the counters it had, never falling back to zero.
        let received: Vec<u64> = pod.iter().map(|s| s.received).collect();
        assert_eq!(received, [1, 2, 2, 4]);
    }

    #[test]
    fn pods_without_samples_get_none_and_keep_their_place() {
        let mut samples = BTreeMap::new();
        samples.insert(
            "b".to_string(),
            vec![PodSample {
                admitted: 3,
                ..PodSample::default()
            }],
        );
        let placed = |name: &str| PlacedPod {
            name: name.into(),
            node: "n".into(),
            zone: "z".into(),
        };
        let runs = pod_runs([placed("b"), placed("a")], &samples, &BTreeMap::new(), 8).pods;
        assert_eq!(runs[0].name, "b");
        assert_eq!(runs[0].samples.len(), 1);
        assert!(runs[1].samples.is_empty());
        assert_eq!(runs[1].max_concurrency, 8);
    }

    #[test]
    fn a_pod_that_exited_ends_with_its_final_counters_or_is_marked_cut() {
        let mut samples = BTreeMap::new();
        let scraped = |t_s, received| PodSample {
            t_s,
            ready: true,
            received,
            admitted: received,
            ..PodSample::default()
        };
        samples.insert(
            "drained".to_string(),
            vec![scraped(1.0, 10), scraped(2.0, 20)],
        );
        samples.insert("killed".to_string(), vec![scraped(1.0, 10)]);
        let totals = SidecarMetrics {
            received: 27,
            admitted: 25,
            rejected_queue_timeout: 2,
            ..SidecarMetrics::default()
        };
        let exits = BTreeMap::from([
            (
                "drained".to_string(),
                PodExit {
                    t_s: 4.5,
                    totals: Some(totals),
                },
            ),
            (
                "killed".to_string(),
                PodExit {
                    t_s: 3.0,
                    totals: None,
                },
            ),
        ]);
        let placed = |name: &str| PlacedPod {
            name: name.into(),
            node: "n".into(),
            zone: "z".into(),
        };
        let got = pod_runs([placed("drained"), placed("killed")], &samples, &exits, 4);
        let last = got.pods[0].samples.last().unwrap();
        assert_eq!((last.t_s, last.ready, last.received), (4.5, false, 27));
        assert_eq!(last.rejected_queue_timeout, 2);
        assert_eq!(got.pods[1].samples.len(), 1);
        assert_eq!(
            got.counters_cut.iter().collect::<Vec<_>>(),
            [&"killed".to_string()]
        );
    }
}

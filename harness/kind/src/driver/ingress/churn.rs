//! Churn on the real controller, through the API: every rewrite interval (at the run's time
//! scale) the controller's ConfigMap is server-side applied with the next rewrite generation —
//! the controller renders a changed `haproxy.cfg` and reloads every replica's HAProxy — and
//! after each rewrite each replica independently, at `reloadFailureRate`, has its reload turned
//! into a restart: its pod is deleted and the StatefulSet recreates it under the same name, a
//! fresh HAProxy. The draws use one seeded generator per replica (seed + 7000 + replica, as the
//! local target's controllers do, harness/local/src/ingress), so a run's restarts are
//! reproducible from its seed.
//!
//! On kind a restart is a pod restart: deletion, the kubelet stopping the container, the
//! StatefulSet controller creating the pod again, scheduling, container start and the
//! controller's first render — seconds of real kubelet time, where the local target restarts a
//! process in milliseconds. That time cannot scale, which is why `reloadFailureRate > 0` is
//! refused at a time scale other than 1 ([`super::refuse`]).

use std::time::Duration;

use harness_core::measure::{EventKind, IngressCause};
use k8s_openapi::api::core::v1::ConfigMap;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::intents::Intents;
use crate::api::{ApiError, KubeApi};
use crate::manifests::ingress::config_map_at;
use crate::watch::Recorder;

/// The seeded draws that turn reloads into restarts.
#[derive(Debug, Clone)]
pub struct RestartDraws {
    rngs: Vec<SmallRng>,
}

impl RestartDraws {
    pub fn new(seed: u64, replicas: u32) -> Self {
        RestartDraws {
            rngs: (0..replicas)
                .map(|i| SmallRng::seed_from_u64(seed.wrapping_add(7000 + u64::from(i))))
                .collect(),
        }
    }

    /// The replicas whose reload fails this time, each independently at `rate`.
    pub fn draw(&mut self, rate: f64) -> Vec<u32> {
        if rate <= 0.0 {
            return Vec::new();
        }
        self.rngs
            .iter_mut()
            .enumerate()
            .filter_map(|(i, rng)| (rng.random::<f64>() < rate).then_some(i as u32))
            .collect()
    }
}

/// The churn of one run.
#[derive(Debug, Clone)]
pub struct ChurnSetup {
    pub namespace: String,
    /// Replica `i`'s pod name at index `i`.
    pub pods: Vec<String>,
    /// The rewrite interval on the wall clock (the scenario's, through the time scale).
    pub interval: Duration,
    pub reload_failure_rate: f64,
    pub seed: u64,
}

/// Applies `config_map` (as deployed) at the next generation; every replica will reload
/// because of `cause`.
pub async fn rewrite(
    api: &KubeApi,
    config_map: &ConfigMap,
    intents: &Intents,
    replicas: u32,
    cause: IngressCause,
) -> Result<u64, ApiError> {
    let generation = intents.next_generation();
    intents.expect_reloads(replicas, cause);
    api.apply_namespaced(&config_map_at(config_map, generation))
        .await?;
    Ok(generation)
}

/// Deletes the pods of `replicas` (the StatefulSet recreates each); `cause` for the observer.
/// A pod already gone (still being recreated after an earlier restart) is no failure; any
/// other failure is returned after the other pods were tried.
pub async fn restart(
    api: &KubeApi,
    namespace: &str,
    pods: &[String],
    replicas: &[u32],
    cause: IngressCause,
    intents: &Intents,
) -> Result<(), ApiError> {
    let mut first_failure = None;
    for &replica in replicas {
        let Some(pod) = pods.get(replica as usize) else {
            continue;
        };
        intents.expect_restart(replica, cause);
        match api.delete_pod(namespace, pod).await {
            Ok(()) => {}
            Err(e) if e.is_not_found() => {}
            Err(e) => {
                first_failure.get_or_insert(e);
            }
        }
    }
    first_failure.map_or(Ok(()), Err)
}

/// Rewrites every `interval` until `stop` or `until` (at most `(until - now) / interval`
/// times), restarting the replicas the draws pick after each rewrite. Failures are notes on
/// the timeline; the churn goes on.
pub async fn churn(
    api: KubeApi,
    setup: ChurnSetup,
    config_map: ConfigMap,
    intents: Intents,
    recorder: Recorder,
    stop: CancellationToken,
    until: Instant,
) {
    let replicas = u32::try_from(setup.pods.len()).unwrap_or(u32::MAX);
    let mut draws = RestartDraws::new(setup.seed, replicas);
    let interval = setup.interval.max(Duration::from_millis(1));
    let start = Instant::now();
    let count = (until.saturating_duration_since(start).as_secs_f64() / interval.as_secs_f64())
        .floor() as u32;
    for n in 1..=count {
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep_until(start + interval * n) => {}
        }
        if let Err(e) = rewrite(&api, &config_map, &intents, replicas, IngressCause::Rewrite).await
        {
            recorder.record(vec![EventKind::Note {
                message: format!("ingress churn: rewrite {n} failed: {e}"),
            }]);
            continue;
        }
        let failed = draws.draw(setup.reload_failure_rate);
        if let Err(e) = restart(
            &api,
            &setup.namespace,
            &setup.pods,
            &failed,
            IngressCause::ReloadFailed,
            &intents,
        )
        .await
        {
            recorder.record(vec![EventKind::Note {
                message: format!("ingress churn: restarting {failed:?} failed: {e}"),
            }]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_draws_are_reproducible_and_near_the_rate() {
        let mut a = RestartDraws::new(42, 8);
        let mut b = RestartDraws::new(42, 8);
        let mut total = 0;
        for _ in 0..500 {
            let drawn = a.draw(0.25);
            assert_eq!(drawn, b.draw(0.25));
            assert!(drawn.iter().all(|r| *r < 8));
            total += drawn.len();
        }
        // 4000 draws at 0.25: 1000 expected, sd ~27.
        assert!((880..=1120).contains(&total), "{total}");
        assert!(RestartDraws::new(42, 8).draw(0.0).is_empty());
        assert_eq!(RestartDraws::new(1, 3).draw(1.0), [0, 1, 2]);
        // Another seed, other restarts.
        let (mut one, mut other) = (RestartDraws::new(42, 8), RestartDraws::new(43, 8));
        assert_ne!(
            (0..20).map(|_| one.draw(0.5)).collect::<Vec<_>>(),
            (0..20).map(|_| other.draw(0.5)).collect::<Vec<_>>()
        );
    }
}

//! Once a second, scrapes every running pod's sidecar and records a [`PodSample`] with the
//! pod's current endpoint readiness, so measurements can see saturation and rejections over
//! time.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use harness_core::engine::RunClock;
use harness_core::measure::PodSample;
use tokio_util::sync::CancellationToken;

use crate::scrape::Scraper;
use crate::shared::SharedState;

/// Pod → its samples so far.
pub type Samples = Arc<Mutex<BTreeMap<String, Vec<PodSample>>>>;

/// Pods to scrape: name → admin address (None: no sidecar, readiness only).
pub type Targets = Arc<Mutex<BTreeMap<String, Option<SocketAddr>>>>;

/// Samples until `stop` is cancelled, then once more: the generators have finished by then,
/// so the last sample holds the sidecars' final counters (the reports set them against the
/// generators' totals).
pub async fn run_sampler(
    clock: RunClock,
    targets: Targets,
    samples: Samples,
    shared: SharedState,
    scraper: Scraper,
    stop: CancellationToken,
) {
    let mut ticker = tokio::time::interval(Duration::from_secs(1));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        let last = tokio::select! {
            () = stop.cancelled() => true,
            _ = ticker.tick() => false,
        };
        let now: Vec<(String, Option<SocketAddr>)> = targets
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        let t_s = clock.now_s();
        let scrapes = futures_scrape(&scraper, &now).await;
        let readiness: BTreeMap<String, bool> = {
            let s = shared.lock();
            now.iter()
                .map(|(pod, _)| {
                    let ready = s
                        .model
                        .endpoints()
                        .pod(pod)
                        .is_some_and(|p| p.ready && !p.terminating);
                    (pod.clone(), ready)
                })
                .collect()
        };
        let mut all = samples.lock().unwrap_or_else(|e| e.into_inner());
        for ((pod, _), metrics) in now.iter().zip(scrapes) {
            let ready = readiness.get(pod).copied().unwrap_or(false);
            all.entry(pod.clone())
                .or_default()
                .push(PodSample::scraped(t_s, ready, metrics));
        }
        if last {
            return;
        }
    }
}

async fn futures_scrape(
    scraper: &Scraper,
    pods: &[(String, Option<SocketAddr>)],
) -> Vec<Option<workload_contract::sidecar::SidecarMetrics>> {
    let mut handles = Vec::with_capacity(pods.len());
    for (_, admin) in pods {
        let scraper = scraper.clone();
        let admin = *admin;
        handles.push(tokio::spawn(async move {
            match admin {
                Some(a) => scraper.sidecar_metrics(a).await,
                None => None,
            }
        }));
    }
    let mut out = Vec::with_capacity(handles.len());
    for h in handles {
        out.push(h.await.ok().flatten());
    }
    out
}

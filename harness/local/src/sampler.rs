//! One sampling round of the local target: every running pod's sidecar scraped at once, with
//! the pod's current endpoint readiness. The once-a-second loop around it (and the last round
//! after the load) is [`harness_core::target_kit::Sampler`]'s.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use harness_core::target_kit::ScrapedPod;

use crate::cluster_state::SharedState;
use crate::scrape::Scraper;

/// Pods to scrape: name → admin address (None: no sidecar, readiness only).
pub type Targets = Arc<Mutex<BTreeMap<String, Option<SocketAddr>>>>;

/// Scrapes every pod in `targets` at once and reads its readiness from the model.
pub async fn sample_round(
    targets: &Targets,
    shared: &SharedState,
    scraper: &Scraper,
) -> Vec<ScrapedPod> {
    let now: Vec<(String, Option<SocketAddr>)> = targets
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .map(|(k, v)| (k.clone(), *v))
        .collect();
    let scrapes = futures::future::join_all(now.iter().map(|(_, admin)| async move {
        match admin {
            Some(a) => scraper.sidecar_metrics(*a).await,
            None => None,
        }
    }))
    .await;
    let s = shared.lock();
    now.into_iter()
        .zip(scrapes)
        .map(|((name, admin), metrics)| {
            let ready = s
                .model
                .endpoints()
                .pod(&name)
                .is_some_and(|p| p.ready && !p.terminating);
            ScrapedPod {
                name,
                ready,
                has_sidecar: admin.is_some(),
                metrics,
            }
        })
        .collect()
}

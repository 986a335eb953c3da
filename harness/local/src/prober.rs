//! The kubelet's readiness probing of one pod on the local target: a `GET /readyz` every
//! `periodSeconds` at the run's time scale (each bounded by the scraper's 1 s timeout, the
//! default `timeoutSeconds`), the
//! first one right after start; the results go through the kubelet's state machine
//! ([`kube_model::probe`]) and each flip is handed to the control-plane model, which updates
//! the endpoints.

use std::net::SocketAddr;

use harness_core::engine::TimeScale;
use harness_core::scenario::model::ReadinessProbe;
use kube_model::probe::{ProbeState, ProbeThresholds};
use tokio_util::sync::CancellationToken;

use crate::scrape::Scraper;
use crate::shared::SharedState;

/// Probes `addr` until `stop` is cancelled, reporting flips to the model.
pub async fn run_prober(
    pod: String,
    addr: SocketAddr,
    spec: ReadinessProbe,
    scale: TimeScale,
    scraper: Scraper,
    shared: SharedState,
    stop: CancellationToken,
) {
    let mut state = ProbeState::new(ProbeThresholds {
        success_threshold: spec.success_threshold,
        failure_threshold: spec.failure_threshold,
    });
    let mut ticker = tokio::time::interval(scale.wall(spec.period));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = ticker.tick() => {}
        }
        let success = tokio::select! {
            () = stop.cancelled() => return,
            ok = scraper.probe_ready(addr) => ok,
        };
        if let Some(ready) = state.observe(success) {
            let mut s = shared.lock();
            let events = s.model.set_pod_ready(&pod, ready);
            s.record(events);
        }
    }
}

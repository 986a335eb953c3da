//! The kubelet's readiness probing of one pod on the local target, started when the pod's
//! containers have started: a `GET /readyz` at each run of the probe worker (each bounded by
//! the scraper's 1 s timeout, the default `timeoutSeconds`). The runs follow
//! [`kube_model::probe::ProbeTiming`] (Kubernetes v1.34 `pkg/kubelet/prober/worker.go`): the
//! manual run at the container's start, then one every period at the run's time scale, those
//! within `initialDelaySeconds` probing nothing. The results go through the kubelet's state
//! machine ([`kube_model::probe::ProbeState`]) and each flip is handed to the control-plane
//! model, which updates the endpoints.

use std::net::SocketAddr;

use harness_core::clock::TimeScale;
use harness_core::scenario::model::ReadinessProbe;
use kube_model::probe::{ProbeState, ProbeThresholds};
use tokio::time::{Instant, MissedTickBehavior};
use tokio_util::sync::CancellationToken;

use crate::cluster_state::SharedState;
use crate::scrape::Scraper;

/// Probes `addr`, whose containers have just started, until `stop` is cancelled, reporting
/// flips to the model.
pub async fn run_prober(
    pod: String,
    addr: SocketAddr,
    spec: ReadinessProbe,
    scale: TimeScale,
    scraper: Scraper,
    shared: SharedState,
    stop: CancellationToken,
) {
    let timing = spec.timing();
    let mut state = ProbeState::new(ProbeThresholds {
        success_threshold: spec.success_threshold,
        failure_threshold: spec.failure_threshold,
    });
    let started = Instant::now();
    let wall_period = scale
        .wall(spec.period)
        .max(std::time::Duration::from_millis(1));
    let mut ticker = tokio::time::interval_at(started, wall_period);
    // A Go ticker delivers one late tick and then keeps its schedule, as Skip does.
    ticker.set_missed_tick_behavior(MissedTickBehavior::Skip);
    loop {
        let scheduled = tokio::select! {
            () = stop.cancelled() => return,
            at = ticker.tick() => at,
        };
        // Which run this is, on the worker's schedule in Kubernetes time.
        let run = ((scheduled - started).as_secs_f64() / wall_period.as_secs_f64()).round();
        if !timing.probes_at(timing.run_offset(run as u32)) {
            continue;
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

//! The kubelet's readiness probing of one pod on the local target, started when the pod's
//! containers have started: a `GET /readyz` at each run of the probe worker (each bounded by
//! the scraper's 1 s timeout, the default `timeoutSeconds`). The runs follow
//! [`kube_model::probe::ProbeTiming`] (Kubernetes v1.34 `pkg/kubelet/prober/worker.go`): the
//! manual run at the container's start, then one every period at the run's time scale, those
//! within `initialDelaySeconds` probing nothing. The results go through the kubelet's state
//! machine ([`kube_model::probe::ProbeState`]) and each flip is handed to the control-plane
//! model, which updates the endpoints. A kubelet that comes back after being silent starts its
//! workers afresh ([`ProbeStart::KubeletRestart`]): the result starts as a failure and the
//! first run comes a random part of the period later
//! (`kube_model::node_lifecycle::first_probe_after_restart`).

use std::net::SocketAddr;
use std::time::Duration;

use harness_core::clock::TimeScale;
use harness_core::scenario::model::ReadinessProbe;
use kube_model::probe::{ProbeState, ProbeThresholds};
use tokio::time::{Instant, MissedTickBehavior};
use tokio_util::sync::CancellationToken;

use crate::cluster_state::SharedState;
use crate::scrape::Scraper;

/// Why a probe worker starts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ProbeStart {
    /// The pod's containers have just started.
    ContainerStart,
    /// The pod's kubelet came back: the first run after `jitter` (Kubernetes time).
    KubeletRestart { jitter: Duration },
}

/// Probes `addr` until `stop` is cancelled, reporting flips to the model.
#[allow(clippy::too_many_arguments)]
pub async fn run_prober(
    pod: String,
    addr: SocketAddr,
    spec: ReadinessProbe,
    scale: TimeScale,
    scraper: Scraper,
    shared: SharedState,
    stop: CancellationToken,
    start: ProbeStart,
) {
    let timing = spec.timing();
    let mut state = ProbeState::new(ProbeThresholds {
        success_threshold: spec.success_threshold,
        failure_threshold: spec.failure_threshold,
    });
    let (started, restarted) = match start {
        ProbeStart::ContainerStart => (Instant::now(), false),
        ProbeStart::KubeletRestart { jitter } => (Instant::now() + scale.wall(jitter), true),
    };
    let wall_period = scale.wall(spec.period).max(Duration::from_millis(1));
    let mut ticker = tokio::time::interval_at(started, wall_period);
    // A Go ticker delivers one late tick and then keeps its schedule, as Skip does.
    ticker.set_missed_tick_behavior(MissedTickBehavior::Skip);
    loop {
        let scheduled = tokio::select! {
            () = stop.cancelled() => return,
            at = ticker.tick() => at,
        };
        // Which run this is, on the worker's schedule in Kubernetes time; after a kubelet
        // restart the containers are long past their initial delay.
        let run = ((scheduled - started).as_secs_f64() / wall_period.as_secs_f64()).round();
        if !restarted && !timing.probes_at(timing.run_offset(run as u32)) {
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

//! The kubelet's readiness probing of one pod, as in kubernetes/kubernetes v1.34.0
//! `pkg/kubelet/prober/worker.go`: a probe every `period` (timeout 1 s, the default
//! `timeoutSeconds`), the first one right after start (initialDelaySeconds 0); the result
//! flips to ready after `successThreshold` consecutive successes and to not ready after
//! `failureThreshold` consecutive failures. A pod starts not ready. Each flip is handed to the
//! control-plane model, which updates the endpoints.

use std::net::SocketAddr;

use harness_core::scenario::model::ReadinessProbe;
use tokio_util::sync::CancellationToken;

use crate::scrape::Scraper;
use crate::shared::SharedState;

/// Counts consecutive results and says when the Ready condition flips.
#[derive(Debug, Clone)]
pub struct ProbeState {
    spec: ReadinessProbe,
    ready: bool,
    successes: u32,
    failures: u32,
}

impl ProbeState {
    pub fn new(spec: ReadinessProbe) -> Self {
        Self {
            spec,
            ready: false,
            successes: 0,
            failures: 0,
        }
    }

    /// Feeds one probe result; returns the new readiness when it flipped.
    pub fn observe(&mut self, success: bool) -> Option<bool> {
        if success {
            self.successes += 1;
            self.failures = 0;
            if !self.ready && self.successes >= self.spec.success_threshold.max(1) {
                self.ready = true;
                return Some(true);
            }
        } else {
            self.failures += 1;
            self.successes = 0;
            if self.ready && self.failures >= self.spec.failure_threshold.max(1) {
                self.ready = false;
                return Some(false);
            }
        }
        None
    }
}

/// Probes `addr` until `stop` is cancelled, reporting flips to the model.
pub async fn run_prober(
    pod: String,
    addr: SocketAddr,
    spec: ReadinessProbe,
    scraper: Scraper,
    shared: SharedState,
    stop: CancellationToken,
) {
    let mut state = ProbeState::new(spec);
    let mut ticker = tokio::time::interval(spec.period);
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn thresholds_decide_the_flips() {
        let mut p = ProbeState::new(ReadinessProbe {
            period: Duration::from_secs(1),
            failure_threshold: 3,
            success_threshold: 2,
        });
        assert_eq!(p.observe(true), None, "one success is not enough");
        assert_eq!(p.observe(true), Some(true));
        assert_eq!(p.observe(false), None);
        assert_eq!(p.observe(false), None);
        assert_eq!(p.observe(true), None, "a success resets the failure count");
        assert_eq!(p.observe(false), None);
        assert_eq!(p.observe(false), None);
        assert_eq!(p.observe(false), Some(false));
        assert_eq!(p.observe(false), None, "already not ready");
    }
}

//! The kubelet's readiness probing, as in kubernetes/kubernetes v1.34.0
//! `pkg/kubelet/prober/worker.go` and `prober_manager.go`:
//!
//! - the result state machine ([`ProbeState`]): the result flips to ready after
//!   `successThreshold` consecutive successes and to not ready after `failureThreshold`
//!   consecutive failures; a container starts not ready (the readiness worker's initial value
//!   is `Failure`);
//! - when probes run ([`ProbeTiming`]): the worker is created with the pod and ticks every
//!   `periodSeconds`, but `doProbe` does nothing until the pod status shows the container
//!   running. The status update that first shows it running goes through
//!   `UpdatePodStatus`, which triggers an immediate run of a readiness probe that has not
//!   succeeded yet (`manualTriggerCh`), and that manual run restarts the ticker
//!   (`probeTicker.Reset`): so the probes of a new container run at its start and then every
//!   period after it. A run is skipped while `int32(time.Since(startedAt).Seconds()) <
//!   initialDelaySeconds`: whole seconds, truncated.
//!
//! Sending the probes (and bounding each by `timeoutSeconds`) is the caller's part: the
//! target that actually sends them.

use std::time::Duration;

/// `successThreshold` and `failureThreshold` of a probe (Kubernetes' defaults: 1 and 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeThresholds {
    pub success_threshold: u32,
    pub failure_threshold: u32,
}

impl Default for ProbeThresholds {
    fn default() -> Self {
        Self {
            success_threshold: 1,
            failure_threshold: 3,
        }
    }
}

/// Counts consecutive results and says when the Ready condition flips.
#[derive(Debug, Clone)]
pub struct ProbeState {
    thresholds: ProbeThresholds,
    ready: bool,
    successes: u32,
    failures: u32,
}

impl ProbeState {
    pub fn new(thresholds: ProbeThresholds) -> Self {
        Self {
            thresholds,
            ready: false,
            successes: 0,
            failures: 0,
        }
    }

    /// Whether the container is ready now.
    pub fn ready(&self) -> bool {
        self.ready
    }

    /// Feeds one probe result; returns the new readiness when it flipped.
    pub fn observe(&mut self, success: bool) -> Option<bool> {
        if success {
            self.successes += 1;
            self.failures = 0;
            if !self.ready && self.successes >= self.thresholds.success_threshold.max(1) {
                self.ready = true;
                return Some(true);
            }
        } else {
            self.failures += 1;
            self.successes = 0;
            if self.ready && self.failures >= self.thresholds.failure_threshold.max(1) {
                self.ready = false;
                return Some(false);
            }
        }
        None
    }
}

/// When the readiness worker probes a container, relative to the moment the kubelet reports
/// it running (its `startedAt`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeTiming {
    /// `periodSeconds`, as a duration.
    pub period: Duration,
    /// `initialDelaySeconds`, as a duration.
    pub initial_delay: Duration,
}

impl ProbeTiming {
    /// The offset from the container's start of the worker's `n`-th run (from 0): the manual
    /// run at the status update that shows the container running, then one per period of the
    /// ticker that run restarted.
    pub fn run_offset(&self, n: u32) -> Duration {
        self.period * n
    }

    /// Whether a run `since_start` after the container started probes, or is skipped by the
    /// initial delay. worker.go compares the elapsed time truncated to whole seconds.
    pub fn probes_at(&self, since_start: Duration) -> bool {
        Duration::from_secs(since_start.as_secs()) >= self.initial_delay
    }

    /// The index of the first run that probes (the runs before it fall in the initial delay).
    pub fn first_probing_run(&self) -> u32 {
        if self.period.is_zero() {
            return 0;
        }
        // Bounded: the answer is at most initial_delay / period + 1 (truncation loses < 1 s).
        let limit =
            (self.initial_delay + Duration::from_secs(1)).as_nanos() / self.period.as_nanos();
        let limit = u32::try_from(limit)
            .unwrap_or(u32::MAX - 1)
            .saturating_add(1);
        (0..=limit)
            .find(|n| self.probes_at(self.run_offset(*n)))
            .unwrap_or(limit)
    }

    /// How long after its start a container turns ready when every probe succeeds: the
    /// `success_threshold`-th run that probes.
    pub fn ready_after(&self, success_threshold: u32) -> Duration {
        let first = self.first_probing_run();
        self.run_offset(first.saturating_add(success_threshold.max(1) - 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing(period_s: u64, initial_delay_s: u64) -> ProbeTiming {
        ProbeTiming {
            period: Duration::from_secs(period_s),
            initial_delay: Duration::from_secs(initial_delay_s),
        }
    }

    /// worker_test.go `TestInitialDelay`: with `initialDelaySeconds: 10` a run right after the
    /// start probes nothing (the result stays the initial `Failure`); 100 s later it probes.
    #[test]
    fn runs_within_the_initial_delay_do_not_probe() {
        let t = timing(10, 10);
        assert!(!t.probes_at(Duration::ZERO));
        assert!(t.probes_at(Duration::from_secs(100)));
        // Truncated to whole seconds, as `int32(time.Since(...).Seconds())`.
        assert!(!t.probes_at(Duration::from_millis(9_999)));
        assert!(t.probes_at(Duration::from_secs(10)));
    }

    /// worker_test.go `TestDoProbe`, "Probe successful" and "Initial delay passed": with no
    /// initial delay the first run, the manual one at the container's start, probes.
    #[test]
    fn without_an_initial_delay_the_manual_run_at_the_start_probes() {
        let t = timing(10, 0);
        assert_eq!(t.first_probing_run(), 0);
        assert_eq!(t.ready_after(1), Duration::ZERO);
        // successThreshold 3 (worker_test.go `TestSuccessThreshold`): the third success, two
        // periods after the start.
        assert_eq!(t.ready_after(3), Duration::from_secs(20));
    }

    #[test]
    fn the_first_probe_is_the_first_period_tick_past_the_initial_delay() {
        // Runs at 0, 10, 20 s: the delay of 15 s skips 0 and 10.
        assert_eq!(timing(10, 15).first_probing_run(), 2);
        assert_eq!(timing(10, 15).ready_after(1), Duration::from_secs(20));
        // A run exactly at the delay probes.
        assert_eq!(timing(5, 10).ready_after(2), Duration::from_secs(15));
        // Sub-second periods (the harness allows them): runs at 0, 0.4, 0.8, 1.2 s; 1.2 s
        // truncates to 1 s, the first run at or past a 1 s delay.
        let fast = ProbeTiming {
            period: Duration::from_millis(400),
            initial_delay: Duration::from_secs(1),
        };
        assert_eq!(fast.ready_after(1), Duration::from_millis(1200));
    }

    #[test]
    fn thresholds_decide_the_flips() {
        let mut p = ProbeState::new(ProbeThresholds {
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

//! The control-plane time scale, a property of the run: Kubernetes' own timings (15 s HPA
//! syncs, 300 s stabilization, 30 s preStop sleeps) make faithful scenarios slow, so a run may
//! shrink every control-plane period, delay and timeout together with the scenario's clock,
//! keeping their ratios — and so the behaviour.
//!
//! The scenario stays in Kubernetes time; the models compute in it. The scale is applied only
//! where a target sleeps or ticks on the wall clock ([`TimeScale::wall`]: probe periods,
//! preStop sleeps and grace periods, the in-app drain delay that stands in for a preStop
//! sleep, load balancer lags and health-check intervals, HPA syncs, the warm-up, the load, the
//! generators' starts) and where the engine maps the scenario's clock onto the run's (timeline
//! actions, expectation windows, and the bounds of the control-plane durations
//! `rolloutDuration` and `timeToScaleUp`); a model fed wall time gets it back in Kubernetes
//! time with [`TimeScale::kubernetes`]. Never scaled: the data plane (service time, request
//! timeout, SSE heartbeat, sidecar queue timeout and readiness-on-saturation period), whose
//! timings are the workload's own. Measurements are taken on the wall clock; what the
//! scenario states in Kubernetes time (the control-plane durations `rolloutDuration` and
//! `timeToScaleUp`, and the instants of control-plane events in the explanation) is reported
//! in Kubernetes time, with the wall clock alongside ([`TimeScale::instant_text`]).

use std::fmt;
use std::time::Duration;

/// The factor between Kubernetes time and wall time: 1 runs Kubernetes' own timings, 0.1 runs
/// ten times faster. Always in (0, 1].
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct TimeScale(f64);

/// A time scale outside (0, 1].
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("time scale {0}: must be more than 0 and at most 1 (e.g. 0.1)")]
pub struct InvalidTimeScale(pub f64);

impl TimeScale {
    /// Kubernetes' own timings.
    pub const REAL: TimeScale = TimeScale(1.0);

    pub fn new(factor: f64) -> Result<Self, InvalidTimeScale> {
        if factor > 0.0 && factor <= 1.0 {
            Ok(TimeScale(factor))
        } else {
            Err(InvalidTimeScale(factor))
        }
    }

    pub fn factor(self) -> f64 {
        self.0
    }

    /// Whether time runs as in Kubernetes.
    pub fn is_real(self) -> bool {
        self.0 == 1.0
    }

    /// The wall time a span of Kubernetes time takes in this run.
    pub fn wall(self, kubernetes: Duration) -> Duration {
        if self.is_real() {
            kubernetes
        } else {
            kubernetes.mul_f64(self.0)
        }
    }

    /// The Kubernetes time a span of wall time stands for.
    pub fn kubernetes(self, wall: Duration) -> Duration {
        if self.is_real() {
            wall
        } else {
            wall.div_f64(self.0)
        }
    }
}

impl TimeScale {
    /// An instant `wall_s` seconds from the load start as the reports name it: `7.7s` at time
    /// scale 1; else in Kubernetes time with the wall clock alongside, `77.0s (7.7s wall)`.
    pub fn instant_text(self, wall_s: f64) -> String {
        if self.is_real() {
            format!("{wall_s:.1}s")
        } else {
            format!("{:.1}s ({wall_s:.1}s wall)", wall_s / self.0)
        }
    }

    /// Seconds of wall time as Kubernetes seconds.
    pub fn kubernetes_secs(self, wall_s: f64) -> f64 {
        if self.is_real() {
            wall_s
        } else {
            wall_s / self.0
        }
    }
}

impl Default for TimeScale {
    fn default() -> Self {
        TimeScale::REAL
    }
}

impl fmt::Display for TimeScale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_factors_in_zero_to_one_are_scales() {
        assert!(TimeScale::new(0.1).is_ok());
        assert!(TimeScale::new(1.0).unwrap().is_real());
        for bad in [0.0, -0.5, 1.5, f64::NAN] {
            assert!(TimeScale::new(bad).is_err(), "{bad}");
        }
        assert_eq!(
            TimeScale::new(2.0).unwrap_err().to_string(),
            "time scale 2: must be more than 0 and at most 1 (e.g. 0.1)"
        );
    }

    #[test]
    fn wall_and_kubernetes_time_are_inverse() {
        let s = TimeScale::new(0.1).unwrap();
        // A 10 s probe period, a 60 s grace period, a 10 min load, a 2 min offset.
        assert_eq!(s.wall(Duration::from_secs(10)), Duration::from_secs(1));
        assert_eq!(s.wall(Duration::from_secs(60)), Duration::from_secs(6));
        assert_eq!(s.wall(Duration::from_secs(600)), Duration::from_secs(60));
        assert_eq!(s.wall(Duration::from_secs(120)), Duration::from_secs(12));
        assert_eq!(
            s.kubernetes(Duration::from_millis(1500)),
            Duration::from_secs(15)
        );
        assert_eq!(
            TimeScale::REAL.wall(Duration::from_millis(7)),
            Duration::from_millis(7)
        );
    }
}

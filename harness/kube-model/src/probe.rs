//! The kubelet's readiness probe result state machine, as in kubernetes/kubernetes v1.34.0
//! `pkg/kubelet/prober/worker.go`: the result flips to ready after `successThreshold`
//! consecutive successes and to not ready after `failureThreshold` consecutive failures; a
//! container starts not ready. When probes run (every `periodSeconds`, the first right after
//! start with initialDelaySeconds 0, each bounded by `timeoutSeconds`) is the caller's part:
//! the target that actually sends them.

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

#[cfg(test)]
mod tests {
    use super::*;

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

//! The Deployment's lifecycle settings in the typed model: the rolling-update strategy, pod
//! termination, the app's drain, and the `rollout` timeline action's changes.

use std::time::Duration;

/// The Deployment's `RollingUpdate` strategy (defaults: `25%`, `25%`, `0s`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RolloutStrategy {
    /// `maxSurge`: pods allowed above the desired count (a percentage rounds up).
    pub max_surge: IntOrPercent,
    /// `maxUnavailable`: pods allowed below the desired count (a percentage rounds down).
    /// Never `0` together with a zero `max_surge`.
    pub max_unavailable: IntOrPercent,
    /// `minReadySeconds`.
    pub min_ready: Duration,
}

impl Default for RolloutStrategy {
    fn default() -> Self {
        Self {
            max_surge: IntOrPercent::Percent(25),
            max_unavailable: IntOrPercent::Percent(25),
            min_ready: Duration::ZERO,
        }
    }
}

/// Kubernetes' `IntOrString` as a pod count: a number of pods or a percentage of the desired
/// count. A percentage of `max_unavailable` is at most 100.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntOrPercent {
    Int(u32),
    Percent(u32),
}

impl IntOrPercent {
    /// The pod count for `total` desired replicas, as `intstr.GetScaledValueFromIntOrPercent`
    /// does: a percentage is rounded up when `round_up` (`maxSurge`) and down otherwise
    /// (`maxUnavailable`).
    pub fn scaled(self, total: u32, round_up: bool) -> u32 {
        match self {
            IntOrPercent::Int(n) => n,
            IntOrPercent::Percent(p) => {
                let product = u64::from(p) * u64::from(total);
                let value = if round_up {
                    product.div_ceil(100)
                } else {
                    product / 100
                };
                u32::try_from(value).unwrap_or(u32::MAX)
            }
        }
    }

    /// Whether this is zero pods (`0` or `0%`).
    pub fn is_zero(self) -> bool {
        matches!(self, IntOrPercent::Int(0) | IntOrPercent::Percent(0))
    }
}

/// How pods terminate (defaults: 30s grace period, no hook, an image with a shell).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Termination {
    /// `terminationGracePeriodSeconds`: from the deletion to SIGKILL, hook included.
    pub grace_period: Duration,
    pub pre_stop: PreStop,
    /// `false`: a distroless or scratch image, where [`PreStop::Exec`] hooks fail.
    pub image_has_shell: bool,
}

impl Default for Termination {
    fn default() -> Self {
        Self {
            grace_period: Duration::from_secs(30),
            pre_stop: PreStop::None,
            image_has_shell: true,
        }
    }
}

/// The container's `preStop` hook, run before SIGTERM.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum PreStop {
    /// No hook: SIGTERM at once.
    #[default]
    None,
    /// The native sleep action; never longer than the grace period.
    Sleep(Duration),
    /// A command line (non-empty) run in the container; fails without a shell image.
    Exec(Vec<String>),
}

impl PreStop {
    /// How long the hook holds the container before SIGTERM: a sleep its duration; an exec
    /// hook as long as its command runs — `sleep N` N seconds — where the image has a shell,
    /// and not at all where it has none (the hook fails at once).
    pub fn holds_for(&self, image_has_shell: bool) -> Duration {
        match self {
            PreStop::None => Duration::ZERO,
            PreStop::Sleep(d) => *d,
            PreStop::Exec(command) if image_has_shell => exec_runtime(command),
            PreStop::Exec(_) => Duration::ZERO,
        }
    }
}

/// How long an exec hook runs: `sleep N` (also inside `sh -c "…"`) sleeps N seconds; anything
/// else returns at once.
pub fn exec_runtime(command: &[String]) -> Duration {
    let words: Vec<&str> = command.iter().flat_map(|w| w.split_whitespace()).collect();
    words
        .windows(2)
        .find(|w| w[0].ends_with("sleep"))
        .and_then(|w| w[1].parse::<f64>().ok())
        .map(Duration::from_secs_f64)
        .unwrap_or_default()
}

/// The service's own shutdown behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct App {
    /// How long the service keeps serving after SIGTERM (`--drain-delay` of `flagsvc` and
    /// `sidecar`); zero stops accepting at once.
    pub drain_delay: Duration,
}

/// A `rollout` timeline action: a new Deployment revision, rolled out under the service's
/// [`RolloutStrategy`]. Either `restart` (same settings) or at least one changed setting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RolloutChange {
    /// `kubectl rollout restart`: the other fields are `None`.
    pub restart: bool,
    /// The new [`App::drain_delay`], if changed.
    pub drain_delay: Option<Duration>,
    /// The new hook, if changed ([`PreStop::None`] removes it).
    pub pre_stop: Option<PreStop>,
    /// The new [`Termination::grace_period`], if changed.
    pub grace_period: Option<Duration>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooks_hold_the_container_as_long_as_they_run() {
        let cmd = |s: &[&str]| s.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        assert_eq!(
            exec_runtime(&cmd(&["sleep", "30"])),
            Duration::from_secs(30)
        );
        assert_eq!(
            exec_runtime(&cmd(&["/bin/sh", "-c", "sleep 5"])),
            Duration::from_secs(5)
        );
        assert_eq!(exec_runtime(&cmd(&["true"])), Duration::ZERO);
        let exec = PreStop::Exec(cmd(&["sleep", "30"]));
        assert_eq!(exec.holds_for(true), Duration::from_secs(30));
        assert_eq!(
            exec.holds_for(false),
            Duration::ZERO,
            "no shell: fails at once"
        );
        assert_eq!(
            PreStop::Sleep(Duration::from_secs(3)).holds_for(false),
            Duration::from_secs(3)
        );
    }

    #[test]
    fn percentages_round_as_kubernetes_does() {
        assert_eq!(IntOrPercent::Percent(25).scaled(12, true), 3);
        assert_eq!(IntOrPercent::Percent(25).scaled(10, true), 3);
        assert_eq!(IntOrPercent::Percent(25).scaled(10, false), 2);
        assert_eq!(IntOrPercent::Percent(25).scaled(3, false), 0);
        assert_eq!(IntOrPercent::Int(2).scaled(10, false), 2);
        assert!(IntOrPercent::Percent(0).is_zero() && !IntOrPercent::Int(1).is_zero());
    }
}

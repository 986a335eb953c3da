// Ported from kubernetes/kubernetes v1.34 (release-1.34 line): killContainer,
// executePreStopHook and setTerminationGracePeriod of
// pkg/kubelet/kuberuntime/kuberuntime_container.go (stored copy of the v1.31+ form, file listed
// @fbba6b47ad98), minimumGracePeriodInSeconds of kuberuntime_manager.go, handlerRunner.Run /
// runSleepHandler of pkg/kubelet/lifecycle/handlers.go, and podToEndpoint of
// staging/src/k8s.io/endpointslice/utils.go (endpoint conditions of a terminating pod).
//! What happens to a pod from the moment it is deleted: when it leaves the ready endpoints,
//! when the preStop hook ends, when SIGTERM and SIGKILL arrive, and which events the kubelet
//! records.
//!
//! At deletion time T the EndpointSlice controller marks the endpoint `ready=false,
//! terminating=true` (it stays `serving` while the pod's Ready condition holds) and the kubelet
//! starts `killContainer` with the grace period G (`terminationGracePeriodSeconds`):
//!
//! 1. event `Killing` / "Stopping container <name>";
//! 2. if a preStop hook is set and G > 0, run it and wait for it at most G seconds; on failure
//!    record a `Warning` `FailedPreStopHook` / "PreStopHook failed" (the error text is left out
//!    of the event on purpose upstream);
//! 3. subtract the hook's run time, truncated to whole seconds, from G; if less than 2 s remain
//!    (`minimumGracePeriodInSeconds`) use 2 s — so a hook that overruns G still gets SIGTERM
//!    followed by SIGKILL 2 s later;
//! 4. `StopContainer(G')`: SIGTERM now, SIGKILL at SIGTERM + G' if still running.
//!
//! Whole seconds: the API and the kubelet count grace periods and sleep actions in seconds; a
//! fractional `grace_period` is truncated.

use std::time::Duration;

use crate::events::EventType;
use crate::types::EndpointConditions;

/// `minimumGracePeriodInSeconds`.
pub const MINIMUM_GRACE_PERIOD: Duration = Duration::from_secs(2);
/// `events.KillingContainer`.
pub const REASON_KILLING: &str = "Killing";
/// `events.FailedPreStopHook`.
pub const REASON_FAILED_PRE_STOP_HOOK: &str = "FailedPreStopHook";
/// The fixed message of a `FailedPreStopHook` event.
pub const MESSAGE_PRE_STOP_HOOK_FAILED: &str = "PreStopHook failed";

/// `lifecycle.preStop` of the container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreStop {
    None,
    /// The native `sleep` action (`preStop.sleep.seconds`): the kubelet itself waits, so it
    /// works on any image.
    Sleep {
        seconds: u64,
    },
    /// An `exec` action. It needs the command's binary in the image: without it (distroless,
    /// scratch) it fails at once. `runs_for` is how long it runs when it can.
    Exec {
        command: Vec<String>,
        runs_for: Duration,
    },
}

/// The pod facts that shape its termination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminationSpec {
    /// `terminationGracePeriodSeconds` (whole seconds; API default 30 s).
    pub grace_period: Duration,
    pub pre_stop: PreStop,
    /// The image has a shell and the exec hook's binaries.
    pub image_has_shell: bool,
    /// Container name, for event messages.
    pub container_name: String,
    /// How long the app takes to exit after SIGTERM (it stops accepting new requests at
    /// SIGTERM, as the incident's app did). SIGKILL cuts it short.
    pub app_shutdown: Duration,
}

impl TerminationSpec {
    /// A container named `app` with no preStop hook that exits as soon as it gets SIGTERM.
    pub fn new(grace_period: Duration, pre_stop: PreStop) -> Self {
        TerminationSpec {
            grace_period,
            pre_stop,
            image_has_shell: true,
            container_name: "app".to_owned(),
            app_shutdown: Duration::ZERO,
        }
    }
}

/// An event the kubelet records on the pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubeletEvent {
    pub at: Duration,
    pub event_type: EventType,
    pub reason: &'static str,
    pub message: String,
}

/// How the preStop hook went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreStopOutcome {
    /// No hook, or G was 0 (the kubelet skips the hook then).
    NotRun,
    Completed,
    /// Failed (exec binary missing); SIGTERM follows at once.
    Failed,
    /// Still running when the grace period ran out; the kubelet stopped waiting.
    TimedOut,
}

/// The timeline of one pod's termination, all instants on the caller's clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminationPlan {
    pub deleted_at: Duration,
    /// The endpoint turns `ready=false, terminating=true` (kube-proxy and load-balancer
    /// controllers start removing it from here, each with its own lag).
    pub endpoint_removed_at: Duration,
    pub pre_stop: PreStopOutcome,
    /// When the kubelet stops waiting for the hook (= `deleted_at` without a hook).
    pub prestop_end_at: Duration,
    pub sigterm_at: Duration,
    /// The grace left for `StopContainer` after the hook (at least 2 s).
    pub stop_grace: Duration,
    /// SIGKILL if the container is still running (`sigterm_at + stop_grace`).
    pub sigkill_at: Duration,
    /// The app stops accepting new requests (at SIGTERM).
    pub serving_until: Duration,
    /// The containers have exited; the pod and its endpoint disappear.
    pub exited_at: Duration,
    pub events: Vec<KubeletEvent>,
}

impl TerminationPlan {
    /// The pod's EndpointSlice conditions at `at`: `None` once the endpoint is gone. The
    /// `serving` flip is taken at the moment the app stops serving (a readiness probe needs up
    /// to `failureThreshold x periodSeconds` more to notice; not modelled).
    pub fn endpoint_conditions(&self, at: Duration) -> Option<EndpointConditions> {
        if at >= self.exited_at {
            return None;
        }
        let terminating = at >= self.endpoint_removed_at;
        let serving = at < self.serving_until;
        Some(EndpointConditions {
            ready: Some(serving && !terminating),
            serving: Some(serving),
            terminating: Some(terminating),
        })
    }

    /// The app accepts new requests at `at`.
    pub fn accepts_requests(&self, at: Duration) -> bool {
        at < self.serving_until
    }
}

/// The kubelet's `killContainer` for a pod deleted at `deleted_at`.
pub fn termination_plan(spec: &TerminationSpec, deleted_at: Duration) -> TerminationPlan {
    let t = deleted_at;
    let grace_secs = spec.grace_period.as_secs();
    let mut events = vec![KubeletEvent {
        at: t,
        event_type: EventType::Normal,
        reason: REASON_KILLING,
        message: format!("Stopping container {}", spec.container_name),
    }];

    // (how long the kubelet waited, outcome)
    let (waited, outcome) = match &spec.pre_stop {
        PreStop::None => (Duration::ZERO, PreStopOutcome::NotRun),
        _ if grace_secs == 0 => (Duration::ZERO, PreStopOutcome::NotRun),
        PreStop::Exec { .. } if !spec.image_has_shell => {
            events.push(KubeletEvent {
                at: t,
                event_type: EventType::Warning,
                reason: REASON_FAILED_PRE_STOP_HOOK,
                message: MESSAGE_PRE_STOP_HOOK_FAILED.to_owned(),
            });
            (Duration::ZERO, PreStopOutcome::Failed)
        }
        PreStop::Sleep { seconds } => hook_wait(Duration::from_secs(*seconds), grace_secs),
        PreStop::Exec { runs_for, .. } => hook_wait(*runs_for, grace_secs),
    };

    let prestop_end_at = t + waited;
    // gracePeriod -= int64(elapsed.Seconds()); then the 2 s floor.
    let remaining = grace_secs.saturating_sub(waited.as_secs());
    let stop_grace = Duration::from_secs(remaining).max(MINIMUM_GRACE_PERIOD);
    let sigterm_at = prestop_end_at;
    let sigkill_at = sigterm_at + stop_grace;
    let exited_at = (sigterm_at + spec.app_shutdown).min(sigkill_at);
    TerminationPlan {
        deleted_at: t,
        endpoint_removed_at: t,
        pre_stop: outcome,
        prestop_end_at,
        sigterm_at,
        stop_grace,
        sigkill_at,
        serving_until: sigterm_at,
        exited_at,
        events,
    }
}

/// `executePreStopHook`'s wait: the hook's run time, or the whole grace period if it is longer.
fn hook_wait(runs_for: Duration, grace_secs: u64) -> (Duration, PreStopOutcome) {
    let grace = Duration::from_secs(grace_secs);
    if runs_for < grace {
        (runs_for, PreStopOutcome::Completed)
    } else if runs_for == grace {
        // Both timers fire together; either way the kubelet proceeds at T + G.
        (grace, PreStopOutcome::Completed)
    } else {
        (grace, PreStopOutcome::TimedOut)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Duration = Duration::from_secs(1000);

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn exec_hook_time_is_truncated_to_seconds() {
        let spec = TerminationSpec::new(
            secs(60),
            PreStop::Exec {
                command: vec!["/bin/drain".into()],
                runs_for: Duration::from_millis(30_700),
            },
        );
        let plan = termination_plan(&spec, T);
        assert_eq!(plan.sigterm_at, T + Duration::from_millis(30_700));
        // 60 - int(30.7) = 30 s left.
        assert_eq!(plan.stop_grace, secs(30));
        assert_eq!(plan.sigkill_at, T + Duration::from_millis(60_700));
    }

    #[test]
    fn zero_grace_skips_the_hook_and_keeps_the_floor() {
        let spec = TerminationSpec::new(secs(0), PreStop::Sleep { seconds: 30 });
        let plan = termination_plan(&spec, T);
        assert_eq!(plan.pre_stop, PreStopOutcome::NotRun);
        assert_eq!((plan.sigterm_at, plan.sigkill_at), (T, T + secs(2)));
    }

    #[test]
    fn endpoint_conditions_over_time() {
        let mut spec = TerminationSpec::new(secs(60), PreStop::Sleep { seconds: 30 });
        spec.app_shutdown = secs(5);
        let plan = termination_plan(&spec, T);
        let c = |at| plan.endpoint_conditions(at);
        let conds = |r, s, t| {
            Some(EndpointConditions {
                ready: Some(r),
                serving: Some(s),
                terminating: Some(t),
            })
        };
        assert_eq!(c(T - secs(1)), conds(true, true, false));
        assert_eq!(c(T), conds(false, true, true));
        assert_eq!(c(T + secs(29)), conds(false, true, true));
        assert_eq!(c(T + secs(30)), conds(false, false, true));
        assert_eq!(plan.exited_at, T + secs(35));
        assert_eq!(c(T + secs(35)), None);
    }
}

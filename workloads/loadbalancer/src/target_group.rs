//! The control half of the load balancer: an AWS Application Load Balancer target group in IP
//! mode, kept in sync with the Service's endpoints by the AWS Load Balancer Controller, decides
//! which pods are routable when. Not a port of Kubernetes code (neither part is Kubernetes);
//! behaviour follows the Elastic Load Balancing user guide (target group health checks, target
//! health states, deregistration delay). Pure: callers feed endpoint changes, health-check
//! results and times in, and ask what is routable.
//!
//! Per pod (target):
//! - the endpoint turns ready at R; the controller registers the target at R +
//!   `registration_lag`; the target is `Initial` until it passes `initial_checks` health checks
//!   (the guide: "it must pass one health check to be considered healthy", so the default is 1;
//!   set it to `healthy_threshold` for the stricter reading), then `Healthy`;
//! - the endpoint is removed at X; the controller deregisters the target at X +
//!   `deregistration_lag`; the target is `Draining` for `deregistration_delay` (default 300 s:
//!   no new requests, in-flight ones may finish), then `Gone` (`unused`);
//! - with active health checks, `unhealthy_threshold` consecutive failures make a registered
//!   target `Unhealthy`, `healthy_threshold` consecutive passes make it `Healthy` again.
//!   Without them every check is taken to pass (the target turns healthy one
//!   `initial_checks x interval` after registration and stays so).
//!
//! Routing (fail-open): new requests go to `Healthy` targets. If there is none and every
//! registered, non-draining target is `Unhealthy`, they go to all of those (the guide: "If a
//! target group contains only unhealthy registered targets, the load balancer routes requests
//! to all those targets"). Otherwise (none registered, or only `Initial` ones left) nothing is
//! routable and the load balancer answers 503 itself — an assumption, as the guide does not say
//! how `initial` targets count for fail-open. Draining does not end early when a target has no
//! connections (the real ALB completes deregistration at once then).
//!
//! Events for one pod should come in time order; queries may ask about any instant and see
//! only the events up to it.

use std::collections::BTreeMap;
use std::time::Duration;

/// Target group health check settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HealthCheckSpec {
    /// `HealthCheckIntervalSeconds`.
    pub interval: Duration,
    /// `HealthyThresholdCount`: consecutive passes to turn an unhealthy target healthy.
    pub healthy_threshold: u32,
    /// `UnhealthyThresholdCount`: consecutive failures to turn a target unhealthy.
    pub unhealthy_threshold: u32,
    /// Passes a newly registered target needs to leave `Initial` (1 per the guide).
    pub initial_checks: u32,
}

/// The target group and its controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TargetGroupSpec {
    /// From an endpoint turning ready to the target's registration.
    pub registration_lag: Duration,
    /// From an endpoint's removal to the target's deregistration.
    pub deregistration_lag: Duration,
    /// `deregistration_delay.timeout_seconds` (default 300 s).
    pub deregistration_delay: Duration,
    pub health_check: HealthCheckSpec,
    /// Health comes from [`TargetGroup::on_health_check`] results; otherwise checks pass.
    pub active_health_checks: bool,
}

impl Default for TargetGroupSpec {
    /// Target group defaults: deregistration delay 300 s (documented) and healthy threshold 5
    /// (the elbv2 API's ALB default); interval 30 s and unhealthy threshold 2 are assumed ALB
    /// defaults. No controller lag.
    fn default() -> Self {
        TargetGroupSpec {
            registration_lag: Duration::ZERO,
            deregistration_lag: Duration::ZERO,
            deregistration_delay: Duration::from_secs(300),
            health_check: HealthCheckSpec {
                interval: Duration::from_secs(30),
                healthy_threshold: 5,
                unhealthy_threshold: 2,
                initial_checks: 1,
            },
            active_health_checks: false,
        }
    }
}

/// A target's state, as `describe-target-health` reports it (`unused` is `Gone`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetState {
    /// Not registered (yet, or never).
    NotRegistered,
    Initial,
    Healthy,
    Unhealthy,
    Draining,
    Gone,
}

/// One registration of a pod's IP, from its endpoint turning ready to the end of draining.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Registration {
    registered_at: Duration,
    deregistered_at: Option<Duration>,
    checks: Vec<(Duration, bool)>,
}

impl Registration {
    fn live(&self) -> bool {
        self.deregistered_at.is_none()
    }

    /// Deregistered before it was ever registered: the controller never registered it.
    fn never_registered(&self) -> bool {
        self.deregistered_at
            .is_some_and(|d| d <= self.registered_at)
    }
}

/// The target group's view of all targets.
#[derive(Debug, Clone)]
pub struct TargetGroup {
    spec: TargetGroupSpec,
    targets: BTreeMap<String, Vec<Registration>>,
}

impl TargetGroup {
    pub fn new(spec: TargetGroupSpec) -> Self {
        TargetGroup {
            spec,
            targets: BTreeMap::new(),
        }
    }

    pub fn spec(&self) -> &TargetGroupSpec {
        &self.spec
    }

    /// The pod's endpoint turned ready. Repeated calls while it stays ready change nothing.
    pub fn on_endpoint_ready(&mut self, pod: &str, now: Duration) {
        let regs = self.targets.entry(pod.to_owned()).or_default();
        if regs.last().is_some_and(Registration::live) {
            return;
        }
        regs.push(Registration {
            registered_at: now + self.spec.registration_lag,
            deregistered_at: None,
            checks: Vec::new(),
        });
    }

    /// The pod's endpoint was removed (pod deleted or no longer ready).
    pub fn on_endpoint_removed(&mut self, pod: &str, now: Duration) {
        let lag = self.spec.deregistration_lag;
        if let Some(reg) = self
            .targets
            .get_mut(pod)
            .and_then(|regs| regs.last_mut())
            .filter(|reg| reg.live())
        {
            reg.deregistered_at = Some(now + lag);
        }
    }

    /// A health check of the pod's target ran at `now`. Ignored unless active health checks
    /// are on; checks outside the target's registration do not count.
    pub fn on_health_check(&mut self, pod: &str, ok: bool, now: Duration) {
        if let Some(reg) = self.targets.get_mut(pod).and_then(|regs| regs.last_mut()) {
            reg.checks.push((now, ok));
        }
    }

    /// When the pod's current target stops getting new requests through deregistration.
    pub fn deregistered_at(&self, pod: &str) -> Option<Duration> {
        self.targets.get(pod)?.last()?.deregistered_at
    }

    /// The registration in force at `now`: the latest one already registered.
    fn registration_at(&self, pod: &str, now: Duration) -> Option<&Registration> {
        self.targets
            .get(pod)?
            .iter()
            .rev()
            .find(|r| !r.never_registered() && r.registered_at <= now)
    }

    pub fn target_state(&self, pod: &str, now: Duration) -> TargetState {
        let Some(reg) = self.registration_at(pod, now) else {
            return TargetState::NotRegistered;
        };
        if let Some(dereg) = reg.deregistered_at.filter(|d| *d <= now) {
            return if now < dereg + self.spec.deregistration_delay {
                TargetState::Draining
            } else {
                TargetState::Gone
            };
        }
        self.health_at(reg, now)
    }

    fn health_at(&self, reg: &Registration, now: Duration) -> TargetState {
        let hc = self.spec.health_check;
        if !self.spec.active_health_checks {
            let healthy_at = reg.registered_at + hc.interval * hc.initial_checks;
            return if now >= healthy_at {
                TargetState::Healthy
            } else {
                TargetState::Initial
            };
        }
        let mut state = TargetState::Initial;
        let (mut passes, mut failures) = (0u32, 0u32);
        let checks = reg
            .checks
            .iter()
            .filter(|(at, _)| *at >= reg.registered_at && *at <= now);
        for &(_, ok) in checks {
            if ok {
                passes += 1;
                failures = 0;
            } else {
                failures += 1;
                passes = 0;
            }
            state = match state {
                TargetState::Initial if passes >= hc.initial_checks => TargetState::Healthy,
                TargetState::Unhealthy if passes >= hc.healthy_threshold => TargetState::Healthy,
                TargetState::Initial | TargetState::Healthy
                    if failures >= hc.unhealthy_threshold =>
                {
                    TargetState::Unhealthy
                }
                other => other,
            };
        }
        state
    }

    /// Pods that receive new requests at `now`, by name.
    pub fn routable(&self, now: Duration) -> Vec<String> {
        let states: Vec<(&String, TargetState)> = self
            .targets
            .keys()
            .map(|pod| (pod, self.target_state(pod, now)))
            .collect();
        let pick = |wanted: TargetState| -> Vec<String> {
            states
                .iter()
                .filter(|(_, s)| *s == wanted)
                .map(|(p, _)| (*p).clone())
                .collect()
        };
        let healthy = pick(TargetState::Healthy);
        if !healthy.is_empty() {
            return healthy;
        }
        let registered = states
            .iter()
            .filter(|(_, s)| matches!(s, TargetState::Initial | TargetState::Unhealthy));
        if registered.clone().count() > 0
            && registered
                .clone()
                .all(|(_, s)| *s == TargetState::Unhealthy)
        {
            return pick(TargetState::Unhealthy);
        }
        Vec::new()
    }

    /// The pod receives new requests at `now`.
    pub fn is_routable(&self, pod: &str, now: Duration) -> bool {
        self.routable(now).iter().any(|p| p == pod)
    }
}

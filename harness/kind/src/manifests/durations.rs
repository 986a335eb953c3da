//! The service's whole-second fields at the run's time scale ([`super::time`]): the probe's
//! `periodSeconds` (at least 1) and `initialDelaySeconds`, `minReadySeconds`,
//! `terminationGracePeriodSeconds`, the not-ready/unreachable `tolerationSeconds` and the
//! preStop `sleep.seconds` — of the Deployment as
//! deployed and of every `rollout` action's new revision — and the autoscaler's periods
//! ([`super::autoscaler::check`]). [`check`] lists every value that does
//! not scale, so a run is refused up front naming each; [`timings`] states what the cluster
//! runs (the note on a kind run's timeline).

use std::time::Duration;

use harness_core::clock::TimeScale;
use harness_core::scenario::model::{Action, PreStop, Scenario};

use super::time::{Timings, UnscalableSeconds, whole_seconds};

/// The service's whole-second fields of one revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServiceSeconds {
    pub probe_period: i64,
    pub probe_initial_delay: i64,
    pub min_ready: i64,
    pub grace_period: i64,
    /// `tolerationSeconds` of the `node.kubernetes.io/not-ready` and `unreachable` NoExecute
    /// tolerations (`service.notReadyToleration`).
    pub not_ready_toleration: i64,
    /// The preStop sleep, when the hook is the native sleep.
    pub pre_stop_sleep: Option<i64>,
}

/// The service's whole-second fields: (scenario field, value, Kubernetes' minimum).
fn service_fields(scenario: &Scenario) -> [(&'static str, Duration, i64); 5] {
    let svc = &scenario.service;
    [
        (
            "service.readinessProbe.period",
            svc.readiness_probe.period,
            1,
        ),
        (
            "service.readinessProbe.initialDelay",
            svc.readiness_probe.initial_delay,
            0,
        ),
        ("service.rollout.minReadySeconds", svc.rollout.min_ready, 0),
        (
            "service.termination.gracePeriod",
            svc.termination.grace_period,
            0,
        ),
        ("service.notReadyToleration", svc.not_ready_toleration, 0),
    ]
}

/// The scenario's service at `scale`.
pub fn service_seconds(
    scenario: &Scenario,
    scale: TimeScale,
) -> Result<ServiceSeconds, Box<UnscalableSeconds>> {
    let [period, delay, min_ready, grace, toleration] =
        service_fields(scenario).map(|(field, d, min)| whole_seconds(field, d, scale, min));
    Ok(ServiceSeconds {
        probe_period: period?,
        probe_initial_delay: delay?,
        min_ready: min_ready?,
        grace_period: grace?,
        not_ready_toleration: toleration?,
        pre_stop_sleep: pre_stop_sleep(
            "service.termination.preStop.sleep",
            &scenario.service.termination.pre_stop,
            scale,
        )?,
    })
}

pub(crate) fn grace_period(
    field: &str,
    d: Duration,
    scale: TimeScale,
) -> Result<i64, Box<UnscalableSeconds>> {
    whole_seconds(field, d, scale, 0)
}

pub(crate) fn pre_stop_sleep(
    field: &str,
    pre_stop: &PreStop,
    scale: TimeScale,
) -> Result<Option<i64>, Box<UnscalableSeconds>> {
    match pre_stop {
        PreStop::Sleep(d) => whole_seconds(field, *d, scale, 1).map(Some),
        PreStop::None | PreStop::Exec(_) => Ok(None),
    }
}

/// Every whole-second value of the scenario that does not scale: the service's, each
/// `rollout` action's and the autoscaler's.
pub fn check(scenario: &Scenario, scale: TimeScale) -> Vec<Box<UnscalableSeconds>> {
    let mut out: Vec<Box<UnscalableSeconds>> = service_fields(scenario)
        .into_iter()
        .filter_map(|(field, d, min)| whole_seconds(field, d, scale, min).err())
        .collect();
    if let Err(e) = pre_stop_sleep(
        "service.termination.preStop.sleep",
        &scenario.service.termination.pre_stop,
        scale,
    ) {
        out.push(e);
    }
    for event in &scenario.timeline {
        let Action::Rollout(change) = &event.action else {
            continue;
        };
        let at = format!("timeline[{}].rollout", event.name.as_deref().unwrap_or("?"));
        if let Some(grace) = change.grace_period
            && let Err(e) = grace_period(&format!("{at}.gracePeriod"), grace, scale)
        {
            out.push(e);
        }
        if let Some(pre_stop) = &change.pre_stop
            && let Err(e) = pre_stop_sleep(&format!("{at}.preStop.sleep"), pre_stop, scale)
        {
            out.push(e);
        }
    }
    out.extend(super::autoscaler::check(scenario, scale));
    out
}

/// The scenario's durations as the cluster and the workloads run them at `scale`.
pub fn timings(scenario: &Scenario, scale: TimeScale) -> Timings {
    let mut t = Timings::new(scale);
    let svc = &scenario.service;
    let mut push = |what: &str, d: Duration| t.push(what, d, scale.wall(d));
    push("readiness probe period", svc.readiness_probe.period);
    if !svc.readiness_probe.initial_delay.is_zero() {
        push("probe initial delay", svc.readiness_probe.initial_delay);
    }
    if !svc.rollout.min_ready.is_zero() {
        push("minReadySeconds", svc.rollout.min_ready);
    }
    push(
        "terminationGracePeriodSeconds",
        svc.termination.grace_period,
    );
    if scale.wall(svc.not_ready_toleration) != Duration::from_secs(300) {
        push("not-ready tolerationSeconds", svc.not_ready_toleration);
    }
    if let PreStop::Sleep(d) = svc.termination.pre_stop {
        push("preStop sleep", d);
    }
    if !svc.app.drain_delay.is_zero() {
        push("drain delay", svc.app.drain_delay);
    }
    if let Some(lb) = &scenario.load_balancer {
        push("registration lag", lb.registration_lag);
        push("deregistration lag", lb.deregistration_lag);
        push("deregistration delay", lb.deregistration_delay);
        if let Some(hc) = &lb.health_check {
            push("health-check interval", hc.interval);
        }
    }
    push("warm-up", scenario.load.warmup);
    push("load", scenario.load.duration);
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness_core::testing::one_node_scenario;

    const SERVICE: &[&str] = &[
        "replicas: 2",
        "serviceTime: { fixed: 5ms }",
        "readinessProbe: { period: 10s }",
        "termination: { gracePeriod: 60s, preStop: { sleep: 30s } }",
    ];
    const REST: &str = r#"load:
  duration: 1m
  generators: [{ name: g, zone: z, rate: 10 }]
timeline:
  - { at: 10s, name: roll, rollout: { set: { gracePeriod: 45s } } }
"#;

    #[test]
    fn the_service_and_each_rollout_are_checked() {
        let s = one_node_scenario(SERVICE, REST);
        let at = |f| TimeScale::new(f).unwrap();
        let ok = service_seconds(&s, at(0.1)).unwrap();
        assert_eq!(
            (ok.probe_period, ok.grace_period, ok.pre_stop_sleep),
            (1, 6, Some(3))
        );
        assert!(
            check(&s, at(0.1))
                .iter()
                .any(|e| e.field == "timeline[roll].rollout.gracePeriod")
        );
        let fields: Vec<String> = check(&s, at(0.05)).into_iter().map(|e| e.field).collect();
        assert_eq!(
            fields,
            [
                "service.readinessProbe.period",
                "service.termination.preStop.sleep",
                "timeline[roll].rollout.gracePeriod"
            ]
        );
        assert!(check(&s, TimeScale::REAL).is_empty());
    }
}

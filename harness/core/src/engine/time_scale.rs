//! The control-plane time scale: Kubernetes' own timings (15 s HPA syncs, 300 s stabilization,
//! 30 s preStop sleeps) make faithful scenarios slow, so a run may shrink every control-plane
//! period, delay and timeout together with the scenario's clock, keeping their ratios — and so
//! the behaviour — while the file keeps real Kubernetes values.
//!
//! Scaled: readiness probe period, HPA sync period, stabilization windows and policy periods,
//! preStop sleeps, termination grace periods, minReadySeconds, the in-app drain delay (it
//! stands in for a preStop sleep), load balancer lags, delays and health-check intervals, the
//! warm-up, the load duration, timeline times and expectation windows. Not scaled: the data
//! plane (service time, request timeout, SSE heartbeat, sidecar queue timeout and
//! readiness-on-saturation period), whose timings are the workload's own.

use std::time::Duration;

use crate::scenario::model::{Action, Metric, PreStop, Scenario, Threshold};

/// Returns `scenario` with its control plane and clock scaled by `factor` (0 < factor <= 1).
pub fn apply_time_scale(mut scenario: Scenario, factor: f64) -> Scenario {
    if (factor - 1.0).abs() < f64::EPSILON {
        return scenario;
    }
    let s = |d: &mut Duration| *d = d.mul_f64(factor);
    let svc = &mut scenario.service;
    s(&mut svc.readiness_probe.period);
    s(&mut svc.rollout.min_ready);
    s(&mut svc.termination.grace_period);
    scale_pre_stop(&mut svc.termination.pre_stop, factor);
    s(&mut svc.app.drain_delay);
    if let Some(hpa) = &mut svc.autoscaler {
        s(&mut hpa.sync_period);
        for rules in [&mut hpa.behavior.scale_up, &mut hpa.behavior.scale_down] {
            s(&mut rules.stabilization_window);
            for policy in &mut rules.policies {
                s(&mut policy.period);
            }
        }
    }
    if let Some(lb) = &mut scenario.load_balancer {
        s(&mut lb.registration_lag);
        s(&mut lb.deregistration_lag);
        s(&mut lb.deregistration_delay);
        if let Some(hc) = &mut lb.health_check {
            s(&mut hc.interval);
        }
    }
    s(&mut scenario.load.warmup);
    s(&mut scenario.load.duration);
    for g in &mut scenario.load.generators {
        s(&mut g.start_at);
    }
    for event in &mut scenario.timeline {
        s(&mut event.at);
        if let Action::Rollout(change) = &mut event.action {
            if let Some(d) = &mut change.drain_delay {
                s(d);
            }
            if let Some(g) = &mut change.grace_period {
                s(g);
            }
            if let Some(p) = &mut change.pre_stop {
                scale_pre_stop(p, factor);
            }
        }
    }
    for e in &mut scenario.expectations {
        s(&mut e.window.from);
        s(&mut e.window.to);
        // Control-plane durations scale; request latency is the data plane's and does not.
        if matches!(e.metric, Metric::RolloutDuration | Metric::TimeToScaleUp) {
            for bound in [&mut e.min, &mut e.max].into_iter().flatten() {
                if let Threshold::Latency(d) = bound {
                    *d = d.mul_f64(factor);
                }
            }
        }
    }
    scenario.time_scale = factor;
    scenario
}

fn scale_pre_stop(pre_stop: &mut PreStop, factor: f64) {
    if let PreStop::Sleep(d) = pre_stop {
        *d = d.mul_f64(factor);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::load_scenario_str;

    const SCENARIO: &str = r#"
apiVersion: harness/v1alpha1
kind: Scenario
metadata: { name: t }
cluster:
  zones: [{ name: z, nodes: [{ name: n, allocatableCpu: "4" }] }]
service:
  name: s
  replicas: 2
  serviceTime: { fixed: 20ms }
  readinessProbe: { period: 10s }
  termination: { gracePeriod: 60s, preStop: { sleep: 30s } }
load:
  duration: 10m
  requestTimeout: 5s
  generators: [{ name: g, zone: z, rate: 10 }]
timeline:
  - { at: 2m, name: roll, rollout: { restart: true } }
expect:
  - { metric: rolloutDuration, max: 5m, window: { from: roll } }
  - { metric: latencyP99, max: 500ms }
"#;

    #[test]
    fn scales_the_control_plane_and_the_clock_but_not_the_data_plane() {
        let scenario = load_scenario_str(SCENARIO, "t.yaml", None).unwrap();
        let scaled = apply_time_scale(scenario, 0.1);
        assert_eq!(scaled.time_scale, 0.1);
        assert_eq!(
            scaled.service.readiness_probe.period,
            Duration::from_secs(1)
        );
        assert_eq!(
            scaled.service.termination.grace_period,
            Duration::from_secs(6)
        );
        assert_eq!(
            scaled.service.termination.pre_stop,
            PreStop::Sleep(Duration::from_secs(3))
        );
        assert_eq!(scaled.load.duration, Duration::from_secs(60));
        assert_eq!(scaled.timeline[0].at, Duration::from_secs(12));
        assert_eq!(scaled.expectations[0].window.from, Duration::from_secs(12));
        assert_eq!(
            scaled.expectations[0].max,
            Some(Threshold::Latency(Duration::from_secs(30)))
        );
        // Data plane untouched.
        assert_eq!(scaled.load.request_timeout, Duration::from_secs(5));
        assert_eq!(
            scaled.expectations[1].max,
            Some(Threshold::Latency(Duration::from_millis(500)))
        );
    }
}

//! The load balancer's target group with the incident's deregistration lag, alone and next to
//! the kubelet's termination timeline (`kube_model`): who gets new requests while a pod shuts
//! down. The local target runs exactly these two together.

use std::time::Duration;

use kube_model::workloads::{PreStop, TerminationPlan, TerminationSpec, termination_plan};
use loadbalancer::{HealthCheckSpec, TargetGroup, TargetGroupSpec, TargetState};

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

fn alb(dereg_lag: u64) -> TargetGroup {
    TargetGroup::new(TargetGroupSpec {
        registration_lag: secs(5),
        deregistration_lag: secs(dereg_lag),
        deregistration_delay: secs(300),
        health_check: HealthCheckSpec {
            interval: secs(5),
            healthy_threshold: 2,
            unhealthy_threshold: 2,
            initial_checks: 1,
        },
        active_health_checks: false,
    })
}

/// Seconds in [from, from + span) in which the LB sends new requests to a pod whose app no
/// longer accepts them.
fn dead_routing_seconds(lb: &TargetGroup, plan: &TerminationPlan, from: u64, span: u64) -> u64 {
    (from..from + span)
        .filter(|s| lb.is_routable("a", secs(*s)) && !plan.accepts_requests(secs(*s)))
        .count() as u64
}

#[test]
fn registration_lag_delays_first_traffic() {
    let mut lb = alb(10);
    lb.on_endpoint_ready("a", secs(0));
    assert_eq!(lb.target_state("a", secs(4)), TargetState::NotRegistered);
    assert_eq!(lb.target_state("a", secs(5)), TargetState::Initial);
    assert!(lb.routable(secs(9)).is_empty());
    assert_eq!(lb.target_state("a", secs(10)), TargetState::Healthy);
    assert_eq!(lb.routable(secs(10)), ["a"]);
}

#[test]
fn incident_lb_routes_to_a_dead_pod_for_the_deregistration_lag() {
    let t = 100;
    let mut lb = alb(10);
    lb.on_endpoint_ready("a", secs(0));
    lb.on_endpoint_ready("b", secs(0));
    let plan = termination_plan(&TerminationSpec::new(secs(30), PreStop::None), secs(t));
    lb.on_endpoint_removed("a", plan.endpoint_removed_at);
    assert!(lb.is_routable("a", secs(t)));
    assert!(lb.is_routable("a", secs(t + 9)));
    assert_eq!(lb.target_state("a", secs(t + 10)), TargetState::Draining);
    assert_eq!(lb.routable(secs(t + 10)), ["b"]);
    assert_eq!(lb.target_state("a", secs(t + 310)), TargetState::Gone);
    // SIGTERM at T, deregistration at T+10: 10 s of requests to a pod that is shutting down.
    assert_eq!(dead_routing_seconds(&lb, &plan, t - 5, 60), 10);
}

#[test]
fn fix_prestop_sleep_covers_the_deregistration_lag() {
    let t = 100;
    let mut lb = alb(10);
    lb.on_endpoint_ready("a", secs(0));
    lb.on_endpoint_ready("b", secs(0));
    let spec = TerminationSpec::new(secs(60), PreStop::Sleep { seconds: 30 });
    let plan = termination_plan(&spec, secs(t));
    lb.on_endpoint_removed("a", plan.endpoint_removed_at);
    assert_eq!(lb.deregistered_at("a"), Some(secs(t + 10)));
    assert!(plan.sigterm_at >= lb.deregistered_at("a").unwrap());
    assert_eq!(dead_routing_seconds(&lb, &plan, t - 5, 60), 0);
}

#[test]
fn active_health_checks_stop_traffic_before_deregistration() {
    let t = 100;
    let mut spec = *alb(30).spec();
    spec.active_health_checks = true;
    let mut lb = TargetGroup::new(spec);
    let plan = termination_plan(&TerminationSpec::new(secs(30), PreStop::None), secs(t));
    for pod in ["a", "b"] {
        lb.on_endpoint_ready(pod, secs(0));
    }
    lb.on_endpoint_removed("a", secs(t));
    for s in (5..200).step_by(5) {
        lb.on_health_check("a", plan.accepts_requests(secs(s)), secs(s));
        lb.on_health_check("b", true, secs(s));
    }
    // Checks every 5 s; the ones at T and T+5 fail (SIGTERM at T) -> unhealthy at T+5, well
    // before the deregistration at T+30.
    assert!(lb.is_routable("a", secs(t + 4)));
    assert_eq!(lb.target_state("a", secs(t + 5)), TargetState::Unhealthy);
    assert_eq!(lb.routable(secs(t + 5)), ["b"]);
    assert_eq!(lb.target_state("a", secs(t + 30)), TargetState::Draining);
    assert_eq!(dead_routing_seconds(&lb, &plan, t - 5, 60), 5);
    // Without active checks the same pod is routed to until deregistration.
    let mut passive = alb(30);
    passive.on_endpoint_ready("a", secs(0));
    passive.on_endpoint_removed("a", secs(t));
    assert_eq!(dead_routing_seconds(&passive, &plan, t - 5, 60), 30);
}

#[test]
fn fail_open_when_every_target_is_unhealthy() {
    let mut spec = *alb(10).spec();
    spec.active_health_checks = true;
    let mut lb = TargetGroup::new(spec);
    for pod in ["a", "b"] {
        lb.on_endpoint_ready(pod, secs(0));
        for s in [5, 10, 15, 20] {
            lb.on_health_check(pod, s == 5, secs(s));
        }
    }
    assert_eq!(lb.routable(secs(10)), ["a", "b"]);
    assert_eq!(lb.target_state("a", secs(15)), TargetState::Unhealthy);
    assert_eq!(lb.routable(secs(15)), ["a", "b"]);
    // A target still in `initial` spoils the fail-open: nothing is routable.
    lb.on_endpoint_ready("c", secs(12));
    assert!(lb.routable(secs(20)).is_empty());
}

#[test]
fn readiness_flap_reregisters_the_target() {
    let mut lb = alb(2);
    lb.on_endpoint_ready("a", secs(0));
    lb.on_endpoint_removed("a", secs(50));
    lb.on_endpoint_ready("a", secs(60));
    assert_eq!(lb.target_state("a", secs(52)), TargetState::Draining);
    assert_eq!(lb.target_state("a", secs(64)), TargetState::Draining);
    assert_eq!(lb.target_state("a", secs(65)), TargetState::Initial);
    assert_eq!(lb.target_state("a", secs(70)), TargetState::Healthy);
}

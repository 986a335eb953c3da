//! The readiness gate the load balancer sets on the service's pods when the scenario sets
//! `loadBalancer.readinessGate`: the Deployment lists it, the load balancer is told its
//! condition type (`--readiness-gate`).

use harness_core::scenario::model::Scenario;

/// The readiness gate's condition type prefix (`target-health.harness.io/<service>`), after the
/// AWS Load Balancer Controller's `target-health.elbv2.k8s.aws/<target group binding>`.
pub const GATE_PREFIX: &str = "target-health.harness.io/";

/// The condition type of the service's readiness gate.
pub fn gate_condition(scenario: &Scenario) -> String {
    format!("{GATE_PREFIX}{}", scenario.service.name)
}

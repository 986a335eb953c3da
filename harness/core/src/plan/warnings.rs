//! What a reader of `harness plan` would want to know before running: a zone whose pods no
//! caller can reach through topology routing, pods that stop serving before the load balancer
//! stops sending to them, a kube-proxy view that does not apply to traffic through the load
//! balancer, and a rollout still going when the next action comes.

use std::collections::BTreeSet;
use std::time::Duration;

use super::Plan;
use crate::scenario::model::{Action, Routing, Scenario, Termination, Via};
use crate::scenario::units::format_duration;

/// The warnings for `plan` of `scenario`.
pub(super) fn warnings(scenario: &Scenario, plan: &Plan) -> Vec<String> {
    let mut out = Vec::new();
    zones_without_callers(scenario, plan, &mut out);
    pre_stop_shorter_than_the_lag(scenario, plan, &mut out);
    load_balancer_view(scenario, &mut out);
    rollouts_overlapping(scenario, plan, &mut out);
    out
}

/// Zones a kube-proxy generator runs in.
fn caller_zones(scenario: &Scenario) -> BTreeSet<&str> {
    scenario
        .load
        .generators
        .iter()
        .filter(|g| g.via == Via::KubeProxy)
        .map(|g| g.zone.as_str())
        .collect()
}

/// With topology routing, endpoints hinted for a zone nobody calls from get nothing.
fn zones_without_callers(scenario: &Scenario, plan: &Plan, out: &mut Vec<String>) {
    if scenario.service.routing == Routing::None {
        return;
    }
    let callers = caller_zones(scenario);
    if callers.is_empty() {
        return;
    }
    let Some(deploy) = plan.steps.first() else {
        return;
    };
    let zones: BTreeSet<&str> = deploy.pods.values().map(|p| p.zone.as_str()).collect();
    for zone in zones.difference(&callers) {
        let hinted: Vec<&str> = deploy
            .hints
            .iter()
            .filter(|(_, z)| z.iter().any(|z| z == zone))
            .map(|(pod, _)| pod.as_str())
            .collect();
        let consequence = if hinted.is_empty() {
            "with topology-aware routing, endpoints hinted for it would get no traffic".to_owned()
        } else {
            format!(
                "with topology-aware routing, the endpoints hinted for it ({}) get no traffic",
                hinted.join(", ")
            )
        };
        out.push(format!(
            "zone {zone} has pods at load start but no generator calls from it: {consequence}"
        ));
    }
}

/// Pods that stop serving after their deletion sooner than the load balancer stops sending.
fn pre_stop_shorter_than_the_lag(scenario: &Scenario, plan: &Plan, out: &mut Vec<String>) {
    let Some(lb) = &scenario.load_balancer else {
        return;
    };
    let via_lb = scenario
        .load
        .generators
        .iter()
        .any(|g| g.via == Via::LoadBalancer);
    let deletes = plan.steps.iter().skip(1).any(|s| !s.deleted.is_empty())
        || scenario.service.autoscaler.is_some();
    if !via_lb || !deletes {
        return;
    }
    // Each revision's termination, as rollouts change it.
    let mut termination = scenario.service.termination.clone();
    let mut drain = scenario.service.app.drain_delay;
    let mut revisions = vec![("the pods".to_owned(), termination.clone(), drain)];
    for event in &scenario.timeline {
        if let Action::Rollout(change) = &event.action {
            if let Some(p) = &change.pre_stop {
                termination.pre_stop = p.clone();
            }
            if let Some(g) = change.grace_period {
                termination.grace_period = g;
            }
            if let Some(d) = change.drain_delay {
                drain = d;
            }
            let who = format!("the pods of the rollout at {}", format_duration(event.at));
            revisions.push((who, termination.clone(), drain));
        }
    }
    let mut seen = Vec::new();
    for (who, t, drain) in revisions {
        let serving = serving_after_deletion(&t, drain);
        if serving >= lb.deregistration_lag || seen.contains(&serving) {
            continue;
        }
        seen.push(serving);
        let serves = if serving.is_zero() {
            "stop serving as soon as they are deleted".to_owned()
        } else {
            format!(
                "keep serving only {} after their deletion",
                format_duration(serving)
            )
        };
        out.push(format!(
            "{who} {serves} ({}), but the load balancer goes on sending them requests for \
             deregistrationLag {}: expect failed requests on terminating pods (a preStop sleep \
             of at least the lag fixes it)",
            serving_parts(&t, drain),
            format_duration(lb.deregistration_lag)
        ));
    }
}

/// preStop, then the app's drain after SIGTERM (both bounded by the grace period).
fn serving_after_deletion(t: &Termination, drain: Duration) -> Duration {
    (t.pre_stop.holds_for(t.image_has_shell) + drain).min(t.grace_period)
}

fn serving_parts(t: &Termination, drain: Duration) -> String {
    let hook = match (&t.pre_stop, t.image_has_shell) {
        (crate::scenario::model::PreStop::None, _) => "no preStop hook".to_owned(),
        (crate::scenario::model::PreStop::Exec(_), false) => {
            "an exec preStop hook that fails on an image without a shell".to_owned()
        }
        (p, shell) => format!("preStop {}", format_duration(p.holds_for(shell))),
    };
    format!("{hook}, drainDelay {}", format_duration(drain))
}

/// The per-zone reachability is kube-proxy's; generators through the load balancer bypass it.
fn load_balancer_view(scenario: &Scenario, out: &mut Vec<String>) {
    let through_lb: Vec<&str> = scenario
        .load
        .generators
        .iter()
        .filter(|g| g.via == Via::LoadBalancer)
        .map(|g| g.name.as_str())
        .collect();
    if through_lb.is_empty() {
        return;
    }
    out.push(format!(
        "{} {} through the load balancer, not kube-proxy: the zones' reachability below does \
         not apply to {}; the load balancer sends to every ready pod once it is registered \
         (round robin)",
        through_lb.join(", "),
        if through_lb.len() == 1 {
            "sends"
        } else {
            "send"
        },
        if through_lb.len() == 1 { "it" } else { "them" },
    ));
}

/// A rollout that outlasts the gap to the next action: the plan shows each action's steady
/// state, the run will not.
fn rollouts_overlapping(scenario: &Scenario, plan: &Plan, out: &mut Vec<String>) {
    for (i, event) in scenario.timeline.iter().enumerate() {
        let Some(rollout) = plan.steps.get(i + 1).and_then(|s| s.rollout.as_ref()) else {
            continue;
        };
        let done = event.at.as_secs_f64() + rollout.duration_s;
        if let Some(next) = scenario.timeline.get(i + 1)
            && next.at.as_secs_f64() < done
        {
            out.push(format!(
                "the rollout at {} takes about {:.1}s, so it is still going at {} (`{}`); the \
                 plan shows it completed",
                format_duration(event.at),
                rollout.duration_s,
                format_duration(next.at),
                next
            ));
        }
    }
}

//! What the kind target refuses of a scenario's `ingress` beyond the controller version
//! (`manifests::ingress::kind_support`): churn the real controller cannot follow or the
//! cluster cannot scale, and actions a shared ConfigMap cannot express.

use std::time::Duration;

use harness_core::clock::TimeScale;
use harness_core::scenario::model::{Action, IngressReplicas, Scenario};

/// The most configuration updates per second haproxy-ingress accepts for
/// `--rate-limit-update` (`pkg/controller/config/config.go` refuses more: "rate limit update
/// is too high ... (max is 10)"): two rewrites closer than this would be merged into one
/// update by the controller's rate limiter.
pub const MAX_UPDATES_PER_SECOND: f64 = 10.0;

/// The kind target's ingress refusals at `time_scale`, each naming the field and the fix.
pub fn refusals(scenario: &Scenario, time_scale: TimeScale) -> Vec<String> {
    let Some(ingress) = &scenario.ingress else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if ingress.reload_failure_rate > 0.0 && !time_scale.is_real() {
        out.push(format!(
            "ingress.churn.reloadFailureRate {} at time scale {time_scale}: on kind a failed reload \
             becomes a pod restart (the pod deleted and recreated by the StatefulSet, its \
             container started by the kubelet), which takes seconds of real time that do not \
             scale; run with --time-scale 1, or set reloadFailureRate: 0",
            ingress.reload_failure_rate
        ));
    }
    if let Some(every) = ingress.rewrite_interval {
        let wall = time_scale.wall(every);
        let fastest = Duration::from_secs_f64(1.0 / MAX_UPDATES_PER_SECOND);
        if wall < fastest {
            out.push(format!(
                "ingress.churn.rewriteInterval {every:?} at time scale {time_scale} is a rewrite \
                 every {wall:?}: haproxy-ingress applies at most {MAX_UPDATES_PER_SECOND} updates \
                 a second (--rate-limit-update), so it would merge rewrites; use an interval of \
                 at least {fastest:?} on the wall clock (a larger rewriteInterval or time scale)"
            ));
        }
    }
    for event in &scenario.timeline {
        if let Action::ReloadIngress(IngressReplicas::One(i)) = event.action {
            out.push(format!(
                "timeline at {:?}: reloadIngress: {{replica: {i}}}: on kind every replica reads \
                 the one controller ConfigMap, so a rewrite reloads them all and one replica \
                 alone cannot be reloaded; use `reloadIngress: {{}}` (every replica), or \
                 `restartIngress: {{replica: {i}}}` (its pod is deleted and recreated)",
                event.at
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness_core::testing::one_node_scenario;

    fn scenario(churn: &str, timeline: &str) -> Scenario {
        let rest = format!(
            r#"ingress:
  version: v0.16
  replicas: 2
  churn: {churn}
load:
  duration: 1m
  generators: [{{ name: g, zone: z, rate: 10, via: ingress }}]
timeline: {timeline}
"#
        );
        one_node_scenario(&["replicas: 2", "serviceTime: { fixed: 5ms }"], &rest)
    }

    #[test]
    fn restarts_are_refused_at_a_scaled_time_only() {
        let s = scenario("{ rewriteInterval: 6s, reloadFailureRate: 0.25 }", "[]");
        assert!(refusals(&s, TimeScale::REAL).is_empty());
        let refused = refusals(&s, TimeScale::new(0.1).unwrap());
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert!(
            refused[0].starts_with("ingress.churn.reloadFailureRate 0.25 at time scale 0.1")
                && refused[0].contains("pod restart")
                && refused[0].contains("--time-scale 1"),
            "{refused:?}"
        );
        // Rewrites alone scale: 0.6 s between two is within the controller's rate limit.
        let rewrites = scenario("{ rewriteInterval: 6s }", "[]");
        assert!(refusals(&rewrites, TimeScale::new(0.1).unwrap()).is_empty());
    }

    #[test]
    fn rewrites_faster_than_the_rate_limit_are_refused() {
        let s = scenario("{ rewriteInterval: 1s }", "[]");
        assert!(refusals(&s, TimeScale::new(0.1).unwrap()).is_empty());
        let refused = refusals(&s, TimeScale::new(0.05).unwrap());
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert!(
            refused[0].contains("rewriteInterval") && refused[0].contains("--rate-limit-update"),
            "{refused:?}"
        );
    }

    #[test]
    fn reloading_one_replica_is_refused_and_every_replica_is_not() {
        let s = scenario(
            "{ rewriteInterval: 6s }",
            "[{ at: 10s, reloadIngress: { replica: 1 } }, { at: 20s, reloadIngress: {} }, \
             { at: 30s, restartIngress: { replica: 0 } }]",
        );
        let refused = refusals(&s, TimeScale::REAL);
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert!(
            refused[0].contains("reloadIngress: {replica: 1}")
                && refused[0].contains("one controller ConfigMap"),
            "{refused:?}"
        );
    }
}

//! The typed model of rollouts, termination, the load balancer, the autoscaler and the time
//! scale, built from `valid-rollout.yaml` and `valid-autoscaler.yaml`: values as written,
//! Kubernetes' defaults where omitted, and variants.

use std::path::Path;
use std::time::Duration;

use harness_core::scenario::{
    Action, App, Autoscaler, Behavior, HealthCheck, IntOrPercent, LoadBalancer, Metric, PolicyKind,
    PreStop, Reporter, RolloutChange, RolloutStrategy, ScalingPolicy, ScalingRules, Scenario,
    SelectPolicy, Termination, Threshold, Via, load_scenario,
};

fn fixture(name: &str, variant: Option<&str>) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/testdata")
        .join(name);
    load_scenario(&path, variant).unwrap_or_else(|e| panic!("{e}"))
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

fn policy(kind: PolicyKind, value: u32, period: u64) -> ScalingPolicy {
    ScalingPolicy {
        kind,
        value,
        period: secs(period),
    }
}

#[test]
fn rollout_fixture_lifecycle_load_balancer_and_time_scale() {
    let s = fixture("valid-rollout.yaml", None);
    assert_eq!(s.time_scale, 0.5);
    assert_eq!(
        s.service.rollout,
        RolloutStrategy {
            max_surge: IntOrPercent::Percent(25),
            max_unavailable: IntOrPercent::Int(0),
            min_ready: secs(2),
        }
    );
    assert_eq!(s.service.termination, Termination::default());
    assert_eq!(s.service.app, App::default());
    assert_eq!(
        s.load_balancer,
        Some(LoadBalancer {
            registration_lag: secs(5),
            deregistration_lag: secs(20),
            deregistration_delay: secs(30),
            health_check: Some(HealthCheck {
                interval: secs(5),
                healthy_threshold: 2,
                unhealthy_threshold: 2,
                path: "/readyz".into(),
            }),
            readiness_gate: false,
            zone: None,
        })
    );
    let via: Vec<Via> = s.load.generators.iter().map(|g| g.via).collect();
    assert_eq!(via, vec![Via::LoadBalancer, Via::KubeProxy]);
    let actions: Vec<(Duration, Action)> = s
        .timeline
        .iter()
        .map(|e| (e.at, e.action.clone()))
        .collect();
    let set = |drain_delay, pre_stop, grace_period| {
        Action::Rollout(RolloutChange {
            restart: false,
            drain_delay,
            pre_stop,
            grace_period,
        })
    };
    assert_eq!(
        actions,
        vec![
            (
                secs(10),
                Action::Rollout(RolloutChange {
                    restart: true,
                    drain_delay: None,
                    pre_stop: None,
                    grace_period: None,
                })
            ),
            (
                secs(90),
                set(
                    Some(secs(5)),
                    Some(PreStop::Exec(vec!["sleep".into(), "20".into()])),
                    Some(secs(45))
                )
            ),
            (secs(150), set(None, Some(PreStop::None), None)),
        ]
    );
    let metrics: Vec<(Metric, Option<Threshold>)> =
        s.expectations.iter().map(|e| (e.metric, e.max)).collect();
    assert_eq!(
        metrics,
        vec![
            (Metric::TerminationErrorRate, Some(Threshold::Value(0.0))),
            (Metric::RequestsAfterRemoval, Some(Threshold::Count(0))),
            (Metric::RolloutDuration, Some(Threshold::Latency(secs(60)))),
            (Metric::ErrorRate, Some(Threshold::Value(0.001))),
        ]
    );
    assert_eq!(s.expectations[2].window.label, "deploy..redeploy");
}

#[test]
fn rollout_fixture_variants() {
    let incident = fixture("valid-rollout.yaml", Some("incident"));
    assert_eq!(incident.load_balancer.unwrap().health_check, None);

    let fixed = fixture("valid-rollout.yaml", Some("fixed"));
    assert_eq!(
        fixed.service.termination,
        Termination {
            grace_period: secs(60),
            pre_stop: PreStop::Sleep(secs(30)),
            image_has_shell: true,
        }
    );
    let distroless = fixture("valid-rollout.yaml", Some("distroless"));
    assert_eq!(
        distroless.service.termination,
        Termination {
            grace_period: secs(60),
            pre_stop: PreStop::Exec(vec!["sleep".into(), "30".into()]),
            image_has_shell: false,
        }
    );
    let drain = fixture("valid-rollout.yaml", Some("app-drain"));
    assert_eq!(drain.service.app.drain_delay, secs(30));
}

#[test]
fn autoscaler_fixture_fills_kubernetes_defaults_per_field() {
    let s = fixture("valid-autoscaler.yaml", None);
    assert_eq!(
        s.service.autoscaler,
        Some(Autoscaler {
            min_replicas: 2,
            max_replicas: 10,
            reporter: Reporter::Destination,
            target_average_value: 20.0,
            sync_period: secs(5),
            tolerance: 0.05,
            behavior: Behavior {
                scale_up: ScalingRules {
                    stabilization_window: secs(10),
                    select_policy: SelectPolicy::Max,
                    policies: vec![policy(PolicyKind::Pods, 2, 10)],
                },
                scale_down: ScalingRules {
                    stabilization_window: secs(300),
                    select_policy: SelectPolicy::Disabled,
                    policies: vec![policy(PolicyKind::Percent, 100, 15)],
                },
            },
        })
    );
    let kinds: Vec<(Metric, Option<Threshold>)> = s
        .expectations
        .iter()
        .map(|e| (e.metric, e.min.or(e.max)))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (Metric::TimeToScaleUp, Some(Threshold::Latency(secs(45)))),
            (Metric::MaxReplicas, Some(Threshold::Count(6))),
            (Metric::MinReplicas, Some(Threshold::Count(2))),
        ]
    );

    let source = fixture("valid-autoscaler.yaml", Some("source"));
    assert_eq!(
        source.service.autoscaler.unwrap().reporter,
        Reporter::Source
    );
}

#[test]
fn an_omitted_behavior_is_kubernetes_default() {
    let s = fixture("valid-autoscaler.yaml", Some("default-behavior"));
    let autoscaler = s.service.autoscaler.unwrap();
    assert_eq!(
        (
            autoscaler.min_replicas,
            autoscaler.sync_period,
            autoscaler.tolerance
        ),
        (1, secs(15), 0.1)
    );
    assert_eq!(
        autoscaler.behavior,
        Behavior {
            scale_up: ScalingRules {
                stabilization_window: Duration::ZERO,
                select_policy: SelectPolicy::Max,
                policies: vec![
                    policy(PolicyKind::Pods, 4, 15),
                    policy(PolicyKind::Percent, 100, 15),
                ],
            },
            scale_down: ScalingRules {
                stabilization_window: secs(300),
                select_policy: SelectPolicy::Max,
                policies: vec![policy(PolicyKind::Percent, 100, 15)],
            },
        }
    );
}

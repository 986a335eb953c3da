//! The typed model built from the valid fixtures: defaults, units, enums, resolved windows and
//! variant patches, asserted value by value.

use std::path::Path;
use std::time::Duration;

use harness_core::scenario::{
    Action, App, Cluster, ConnectionModel, Cost, Expectation, Generator, IntOrPercent, Load,
    Metric, Node, NodeRole, Placement, PodPick, PreStop, Rate, ReadinessProbe, RolloutChange,
    RolloutStrategy, Routing, SaturationReadiness, Scenario, Service, ServiceTime, Sidecar,
    SpreadConstraint, Sse, Startup, Termination, Threshold, TimelineEvent, TopologyKey,
    TrafficDistribution, Via, WhenUnsatisfiable, Window, ZoneSlice, load_scenario,
};

fn fixture(name: &str, variant: Option<&str>) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/testdata")
        .join(name);
    load_scenario(&path, variant).unwrap_or_else(|e| panic!("{e}"))
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

fn node(name: &str, zone: &str, millicpu: u64, ready: bool, role: NodeRole) -> Node {
    Node {
        name: name.into(),
        zone: zone.into(),
        allocatable_millicpu: millicpu,
        ready,
        role,
    }
}

#[test]
fn topology_skew_base_document() {
    let s = fixture("valid-topology-skew.yaml", None);
    let (a, c) = ("ap-northeast-2a", "ap-northeast-2c");
    let expected = Scenario {
        name: "topology-skew".into(),
        description: Some(
            "Topology Aware Routing sends all 2a traffic to the two pods hinted for 2a".into(),
        ),
        selected_variant: None,
        variant_names: vec![
            "incident".into(),
            "fixed".into(),
            "prefer-close".into(),
            "fail-fast".into(),
        ],
        cluster: Cluster {
            zones: vec![a.into(), c.into()],
            nodes: vec![
                node("cp-1", a, 2000, true, NodeRole::ControlPlane),
                node("a-1", a, 4000, true, NodeRole::Worker),
                node("a-2", a, 4000, true, NodeRole::Worker),
                node("c-1", c, 4000, true, NodeRole::Worker),
                node("c-2", c, 3500, true, NodeRole::Worker),
            ],
        },
        service: Service {
            name: "flagsvc".into(),
            replicas: 4,
            placement: Placement {
                zones: vec![c.into()],
                nodes: vec![],
                topology_spread_constraints: vec![],
            },
            routing: Routing::TopologyModeAuto,
            sidecar: Some(Sidecar {
                max_concurrency: 8,
                queue_limit: None,
                queue_timeout: None,
                readiness_on_saturation: Some(SaturationReadiness {
                    queue_above: 4,
                    sustained_for: secs(2),
                }),
            }),
            service_time: ServiceTime::Fixed(ms(20)),
            sse: Some(Sse {
                heartbeat_interval: secs(1),
            }),
            readiness_probe: ReadinessProbe {
                period: secs(1),
                initial_delay: Duration::ZERO,
                failure_threshold: 3,
                success_threshold: 1,
            },
            startup: Startup { latency: secs(2) },
            not_ready_toleration: secs(300),
            rollout: RolloutStrategy {
                max_surge: IntOrPercent::Percent(25),
                max_unavailable: IntOrPercent::Percent(25),
                min_ready: Duration::ZERO,
            },
            termination: Termination {
                grace_period: secs(30),
                pre_stop: PreStop::None,
                image_has_shell: true,
            },
            app: App {
                drain_delay: Duration::ZERO,
            },
            autoscaler: None,
        },
        load: Load {
            warmup: secs(3),
            duration: secs(40),
            request_timeout: secs(10),
            generators: vec![Generator {
                name: "ingress-a".into(),
                zone: a.into(),
                rate: Rate::PerSecond(200.0),
                connections: 16,
                connection_model: ConnectionModel::KeepAlive,
                sse_streams: 24,
                path: "/flags/checkout".into(),
                via: Via::KubeProxy,
                start_at: Duration::ZERO,
            }],
        },
        load_balancer: None,
        ingress: None,
        cost: Cost::default(),
        timeline: vec![TimelineEvent {
            at: secs(20),
            name: Some("node-change".into()),
            action: Action::AddNode {
                zone: a.into(),
                name: "a-3".into(),
                allocatable_millicpu: 8000,
                ready: true,
            },
        }],
        expectations: vec![
            Expectation {
                name: "no 5xx after the node change".into(),
                metric: Metric::Http5xxRate,
                min: None,
                max: Some(Threshold::Value(0.01)),
                window: Window {
                    from: secs(25),
                    to: secs(40),
                    label: "node-change+5s..end".into(),
                },
                zones: ZoneSlice::default(),
            },
            Expectation {
                name: "starvedPods <= 0".into(),
                metric: Metric::StarvedPods,
                min: None,
                max: Some(Threshold::Count(0)),
                window: Window {
                    from: secs(0),
                    to: secs(40),
                    label: "start..end".into(),
                },
                zones: ZoneSlice::default(),
            },
            Expectation {
                name: "latencyP99 <= 500ms".into(),
                metric: Metric::LatencyP99,
                min: None,
                max: Some(Threshold::Latency(ms(500))),
                window: Window {
                    from: secs(0),
                    to: secs(40),
                    label: "start..end".into(),
                },
                zones: ZoneSlice::default(),
            },
        ],
        time_scale: 1.0,
    };
    assert_eq!(s, expected);
}

#[test]
fn variants_merge_mappings_replace_sequences_and_delete_with_null() {
    let fixed = fixture("valid-topology-skew.yaml", Some("fixed"));
    assert_eq!(fixed.selected_variant.as_deref(), Some("fixed"));
    assert_eq!(
        fixed.service.placement,
        Placement {
            zones: vec![],
            nodes: vec![],
            topology_spread_constraints: vec![SpreadConstraint {
                max_skew: 1,
                topology_key: TopologyKey::Zone,
                when_unsatisfiable: WhenUnsatisfiable::DoNotSchedule,
            }],
        }
    );
    assert_eq!(fixed.service.routing, Routing::TopologyModeAuto);

    let close = fixture("valid-topology-skew.yaml", Some("prefer-close"));
    assert_eq!(
        close.service.routing,
        Routing::TrafficDistribution(TrafficDistribution::PreferClose)
    );

    let fail_fast = fixture("valid-topology-skew.yaml", Some("fail-fast"));
    let sidecar = fail_fast.service.sidecar.unwrap();
    assert_eq!(
        (
            sidecar.max_concurrency,
            sidecar.queue_limit,
            sidecar.queue_timeout
        ),
        (8, Some(32), Some(ms(250)))
    );
}

#[test]
fn all_actions_timeline_and_windows() {
    let s = fixture("valid-all-actions.yaml", None);
    let at = |n| secs(n);
    let events: Vec<(Duration, Option<&str>, Action)> = s
        .timeline
        .iter()
        .map(|e| (e.at, e.name.as_deref(), e.action.clone()))
        .collect();
    assert_eq!(
        events,
        vec![
            (
                at(5),
                Some("unready"),
                Action::SetNodeReady {
                    node: "a-2".into(),
                    ready: true
                }
            ),
            (
                at(10),
                Some("grow"),
                Action::AddNode {
                    zone: "zone-c".into(),
                    name: "c-1".into(),
                    allocatable_millicpu: 8000,
                    ready: false
                }
            ),
            (
                at(15),
                None,
                Action::RelabelNode {
                    node: "a-2".into(),
                    zone: "zone-c".into()
                }
            ),
            (
                at(20),
                Some("shrink"),
                Action::SetAllocatableCpu {
                    node: "a-1".into(),
                    allocatable_millicpu: 3000
                }
            ),
            (at(22), None, Action::KillPod { pod: 2 }),
            (at(25), None, Action::RemoveNode { node: "b-1".into() }),
            (at(30), Some("scale-up"), Action::Scale { replicas: 6 }),
            (
                at(35),
                None,
                Action::KillPickedPod {
                    pick: PodPick::Newest,
                    zone: None
                }
            ),
            (
                at(36),
                None,
                Action::Rollout(RolloutChange {
                    restart: true,
                    drain_delay: None,
                    pre_stop: None,
                    grace_period: None,
                })
            ),
            (
                at(38),
                Some("new-revision"),
                Action::Rollout(RolloutChange {
                    restart: false,
                    drain_delay: Some(secs(2)),
                    pre_stop: Some(PreStop::None),
                    grace_period: Some(secs(10)),
                })
            ),
            (
                at(40),
                None,
                Action::KillPickedPod {
                    pick: PodPick::Oldest,
                    zone: Some("zone-a".into())
                }
            ),
            (at(40), Some("scale-down"), Action::Scale { replicas: 0 }),
        ]
    );
    let windows: Vec<(Duration, Duration, &str)> = s
        .expectations
        .iter()
        .map(|e| (e.window.from, e.window.to, e.window.label.as_str()))
        .collect();
    assert_eq!(
        windows,
        vec![
            (at(0), at(60), "start..end"),
            (at(5), at(60), "unready..end"),
            (at(0), at(10), "start..grow"),
            (at(12), at(19), "grow+2s..shrink-1s"),
            (at(12), at(55), "12s..end-5s"),
            (at(1), at(30), "start+1s..scale-up"),
            (at(0), at(60), "start..end"),
            (at(30), at(40), "scale-up..scale-down"),
            (at(0), at(60), "start..end"),
            (at(41), at(60), "scale-down+1s..end"),
        ]
    );
    let names: Vec<&str> = s.expectations.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "errorRate <= 5%",
            "transportErrorRate <= 0 during unready..end",
            "timeoutRate <= 0.1 during start..grow",
            "skewMaxMean <= 1.5 during grow+2s..shrink-1s",
            "0 <= skewCv <= 0.5 during 12s..end-5s",
            "hintFlaps <= 2 during start+1s..scale-up",
            "maxSaturation <= 1",
            "rejectedRate <= 0.2 during scale-up..scale-down",
            "1ms <= latencyP99 <= 1s 500ms",
            "some requests fail after scaling to zero",
        ]
    );
    let latency = &s.expectations[8];
    assert_eq!(
        (latency.min, latency.max),
        (
            Some(Threshold::Latency(ms(1))),
            Some(Threshold::Latency(ms(1500)))
        )
    );
    let rates: Vec<Rate> = s.load.generators.iter().map(|g| g.rate).collect();
    assert_eq!(
        rates,
        vec![
            Rate::PerSecond(50.5),
            Rate::Ramp {
                from: 100.0,
                to: 1000.0
            },
            Rate::Max
        ]
    );
    assert_eq!(
        s.load.generators[1].connection_model,
        ConnectionModel::PerRequest
    );
    assert_eq!(
        s.service.routing,
        Routing::TrafficDistribution(TrafficDistribution::PreferSameNode)
    );
    assert_eq!(
        s.service.service_time,
        ServiceTime::Exponential { mean: ms(15) }
    );
    assert_eq!(
        s.cluster.nodes[1],
        node("a-2", "zone-a", 500, false, NodeRole::Worker)
    );
    assert_eq!(s.cluster.zones, vec!["zone-a", "zone-b", "zone-c"]);
    assert_eq!(s.cluster.nodes_in_zone("zone-c").count(), 0);
    assert_eq!(s.service.termination.pre_stop, PreStop::Sleep(secs(5)));
}

#[test]
fn minimal_scenario_gets_every_default() {
    let s = fixture("valid-minimal.yaml", None);
    assert_eq!(s.load.warmup, secs(2));
    assert_eq!(s.load.request_timeout, secs(10));
    let g = &s.load.generators[0];
    assert_eq!(
        (
            g.connections,
            g.connection_model,
            g.sse_streams,
            g.path.as_str()
        ),
        (16, ConnectionModel::KeepAlive, 0, "/flags/demo")
    );
    assert_eq!(
        s.service.readiness_probe,
        ReadinessProbe {
            period: secs(10),
            initial_delay: Duration::ZERO,
            failure_threshold: 3,
            success_threshold: 1
        }
    );
    assert_eq!(s.service.startup.latency, secs(2), "the documented default");
    assert_eq!(s.service.routing, Routing::None);
    assert_eq!(s.service.sidecar, None);
    assert_eq!(s.service.sse, None);
    assert_eq!(s.service.placement, Placement::default());
    assert_eq!(s.service.service_time, ServiceTime::Cpu(ms(5)));
    assert!(s.timeline.is_empty() && s.expectations.is_empty());
    assert_eq!(s.cluster.workers().count(), 1);
    assert_eq!(s.service.rollout, RolloutStrategy::default());
    assert_eq!(s.service.termination, Termination::default());
    assert_eq!(s.service.app, App::default());
    assert_eq!(s.service.autoscaler, None);
    assert_eq!((s.load_balancer.as_ref(), s.time_scale), (None, 1.0));
    assert_eq!(g.via, Via::KubeProxy);

    let same_zone = fixture("valid-minimal.yaml", Some("same-zone"));
    assert_eq!(
        same_zone.service.routing,
        Routing::TrafficDistribution(TrafficDistribution::PreferSameZone)
    );
    let off = fixture("valid-minimal.yaml", Some("annotation-off"));
    assert_eq!(off.service.routing, Routing::None);
    let fixed = fixture("valid-minimal.yaml", Some("fixed-time"));
    assert_eq!(
        fixed.service.service_time,
        ServiceTime::Fixed(Duration::ZERO)
    );
}

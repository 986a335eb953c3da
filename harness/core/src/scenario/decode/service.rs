//! Checks and builds `service`: placement references (zones, worker nodes), one routing mode,
//! one service-time kind, sidecar and probe durations; the lifecycle settings and the
//! autoscaler are checked in `lifecycle` and `autoscaler`.

use std::time::Duration;

use super::super::diagnostic::Problems;
use super::super::format::{self, ServiceSpec};
use super::super::model::{
    Cluster, NodeRole, Placement, ReadinessProbe, Routing, SaturationReadiness, Service,
    ServiceTime, Sidecar, SpreadConstraint, Sse, Startup,
};
use super::super::path::FieldPath;
use super::{autoscaler, duration, lifecycle, listing, positive_duration, whole_seconds};

pub(super) fn build(
    spec: &ServiceSpec,
    cluster: Option<&Cluster>,
    problems: &mut Problems<'_>,
) -> Service {
    let root = FieldPath::root().key("service");
    let placement = spec.placement.clone().unwrap_or_default();
    let placement = build_placement(&placement, &root.key("placement"), cluster, problems);
    let routing = build_routing(spec.routing.as_ref(), &root.key("routing"), problems);
    let service_time = build_service_time(&spec.service_time, &root.key("serviceTime"), problems);
    let sidecar = spec
        .sidecar
        .as_ref()
        .map(|s| build_sidecar(s, &root.key("sidecar"), problems));
    let sse = spec.sse.as_ref().map(|sse| {
        let path = root.key("sse").key("heartbeatInterval");
        Sse {
            heartbeat_interval: positive_duration(problems, &path, &sse.heartbeat_interval)
                .unwrap_or_default(),
        }
    });
    let probe = &spec.readiness_probe;
    let readiness_probe = ReadinessProbe {
        period: positive_duration(
            problems,
            &root.key("readinessProbe").key("period"),
            &probe.period,
        )
        .unwrap_or_default(),
        initial_delay: duration(
            problems,
            &root.key("readinessProbe").key("initialDelay"),
            &probe.initial_delay,
        )
        .unwrap_or_default(),
        failure_threshold: probe.failure_threshold,
        success_threshold: probe.success_threshold,
    };
    let startup = Startup {
        latency: duration(
            problems,
            &root.key("startup").key("latency"),
            &spec.startup.latency,
        )
        .unwrap_or(Startup::DEFAULT_LATENCY),
    };
    let not_ready_toleration = whole_seconds(
        problems,
        &root.key("notReadyToleration"),
        &spec.not_ready_toleration,
    )
    .unwrap_or(kube_model::node_lifecycle::DEFAULT_TOLERATION);
    let rollout = lifecycle::build_rollout(&spec.rollout, &root.key("rollout"), problems);
    let termination =
        lifecycle::build_termination(&spec.termination, &root.key("termination"), problems);
    let app = lifecycle::build_app(&spec.app, &root.key("app"), problems);
    let autoscaler = spec
        .autoscaler
        .as_ref()
        .map(|a| autoscaler::build(a, &root.key("autoscaler"), spec.sidecar.is_some(), problems));
    Service {
        name: spec.name.0.clone(),
        replicas: spec.replicas,
        placement,
        routing,
        sidecar,
        service_time: service_time.unwrap_or(ServiceTime::Fixed(Duration::ZERO)),
        sse,
        readiness_probe,
        startup,
        not_ready_toleration,
        rollout,
        termination,
        app,
        autoscaler,
    }
}

/// The placement of a `service` section that could not be read as a whole, still checked
/// against the cluster.
pub(super) fn placement_only(
    doc: &serde_json::Value,
    structure: &super::super::schema::Structure,
    cluster: Option<&Cluster>,
    problems: &mut Problems<'_>,
) {
    let path = FieldPath::root().key("service").key("placement");
    let Some(value) = doc.get("service").and_then(|s| s.get("placement")) else {
        return;
    };
    if let Some(spec) = super::decode_at::<format::PlacementSpec>(value, &path, structure, problems)
    {
        build_placement(&spec, &path, cluster, problems);
    }
}

fn build_placement(
    spec: &format::PlacementSpec,
    path: &FieldPath,
    cluster: Option<&Cluster>,
    problems: &mut Problems<'_>,
) -> Placement {
    let zones: Vec<String> = spec.zones.iter().map(|z| z.0.clone()).collect();
    let nodes: Vec<String> = spec.nodes.iter().map(|n| n.0.clone()).collect();
    if let Some(cluster) = cluster {
        for (i, zone) in zones.iter().enumerate() {
            if !cluster.zones.contains(zone) {
                problems.at(
                    &path.key("zones").index(i),
                    format!(
                        "zone `{zone}` is not a cluster zone; cluster zones are: {}",
                        cluster.zones.join(", ")
                    ),
                );
            }
        }
        let workers: Vec<String> = cluster.workers().map(|n| n.name.clone()).collect();
        for (i, name) in nodes.iter().enumerate() {
            let message = match cluster.node(name) {
                Some(node) if node.role == NodeRole::ControlPlane => {
                    format!(
                        "node `{name}` is a control-plane node; service pods are not scheduled there"
                    )
                }
                Some(_) => continue,
                None => format!(
                    "node `{name}` is not a worker node of the cluster; worker nodes are: {}",
                    listing(&workers, "(none)")
                ),
            };
            problems.at(&path.key("nodes").index(i), message);
        }
        let allowed = cluster.workers().any(|n| {
            (zones.is_empty() || zones.contains(&n.zone))
                && (nodes.is_empty() || nodes.contains(&n.name))
        });
        let known = nodes.iter().all(|n| cluster.node(n).is_some())
            && zones.iter().all(|z| cluster.zones.contains(z));
        if !allowed && known && (!zones.is_empty() || !nodes.is_empty()) {
            problems.at(
                path,
                "no worker node satisfies both `zones` and `nodes`: pods could never be scheduled",
            );
        }
    }
    let constraints_path = path.key("topologySpreadConstraints");
    let mut topology_spread_constraints: Vec<SpreadConstraint> = Vec::new();
    for (i, c) in spec.topology_spread_constraints.iter().enumerate() {
        let constraint = SpreadConstraint {
            max_skew: c.max_skew,
            topology_key: c.topology_key,
            when_unsatisfiable: c.when_unsatisfiable,
        };
        if topology_spread_constraints.iter().any(|o| {
            (o.topology_key, o.when_unsatisfiable) == (c.topology_key, c.when_unsatisfiable)
        }) {
            problems.at(
                &constraints_path.index(i),
                "duplicate constraint: another constraint already has this topologyKey and whenUnsatisfiable (Kubernetes rejects such pairs)",
            );
        }
        topology_spread_constraints.push(constraint);
    }
    Placement {
        zones,
        nodes,
        topology_spread_constraints,
    }
}

fn build_routing(
    spec: Option<&format::RoutingSpec>,
    path: &FieldPath,
    problems: &mut Problems<'_>,
) -> Routing {
    let Some(spec) = spec else {
        return Routing::None;
    };
    match (spec.topology_mode, spec.traffic_distribution) {
        (Some(format::TopologyMode::Auto), None) => Routing::TopologyModeAuto,
        (Some(format::TopologyMode::Disabled), None) => Routing::None,
        (None, Some(distribution)) => Routing::TrafficDistribution(distribution),
        (Some(_), Some(_)) => {
            problems.at(
                path,
                "set only one of `topologyMode` and `trafficDistribution`",
            );
            Routing::None
        }
        (None, None) => {
            problems.at(
                path,
                "set one of `topologyMode` or `trafficDistribution`, or remove `routing` for no topology routing",
            );
            Routing::None
        }
    }
}

fn build_service_time(
    spec: &format::ServiceTimeSpec,
    path: &FieldPath,
    problems: &mut Problems<'_>,
) -> Option<ServiceTime> {
    let set: Vec<&str> = [
        ("fixed", spec.fixed.is_some()),
        ("exponential", spec.exponential.is_some()),
        ("cpu", spec.cpu.is_some()),
    ]
    .into_iter()
    .filter_map(|(name, present)| present.then_some(name))
    .collect();
    if set.len() != 1 {
        let found = if set.is_empty() {
            "none".to_owned()
        } else {
            set.join(", ")
        };
        problems.at(
            path,
            format!("set exactly one of `fixed`, `exponential`, `cpu`; found {found}"),
        );
        return None;
    }
    if let Some(fixed) = &spec.fixed {
        return duration(problems, &path.key("fixed"), fixed).map(ServiceTime::Fixed);
    }
    if let Some(exponential) = &spec.exponential {
        let mean = positive_duration(
            problems,
            &path.key("exponential").key("mean"),
            &exponential.mean,
        )?;
        return Some(ServiceTime::Exponential { mean });
    }
    let cpu = spec.cpu.as_ref()?;
    positive_duration(problems, &path.key("cpu"), cpu).map(ServiceTime::Cpu)
}

fn build_sidecar(
    spec: &format::SidecarSpec,
    path: &FieldPath,
    problems: &mut Problems<'_>,
) -> Sidecar {
    let queue_timeout = duration(problems, &path.key("queueTimeout"), &spec.queue_timeout);
    let readiness_on_saturation =
        spec.readiness_on_saturation
            .as_ref()
            .map(|r| SaturationReadiness {
                queue_above: r.queue_above,
                sustained_for: duration(
                    problems,
                    &path.key("readinessOnSaturation").key("for"),
                    &r.r#for,
                )
                .unwrap_or_default(),
            });
    Sidecar {
        max_concurrency: spec.max_concurrency,
        queue_limit: (spec.queue_size > 0).then_some(spec.queue_size),
        queue_timeout: queue_timeout.filter(|t| !t.is_zero()),
        readiness_on_saturation,
    }
}

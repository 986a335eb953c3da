//! Random *valid* scenarios, as data: what the generator draws (zones, nodes, the service,
//! the load, a load balancer, an ingress, an autoscaler, timeline choices) and the proptest
//! strategy that draws it. Shrinking works on these fields; `render` turns a spec into a
//! scenario file, resolving each timeline choice against the cluster as it is at that moment.

use proptest::collection::vec;
use proptest::prelude::*;

/// Kubernetes seconds between two timeline entries: long enough for a rollout's waves (maxSurge
/// 50%, pods ready 1 s after start-up plus a probe period of at most 2 s) or a replacement pod
/// to settle, so each entry's outcome can be compared with `harness plan`'s.
pub const SLOT_S: u32 = 20;
/// Kubernetes seconds before the first entry and after the last.
pub const LEAD_S: u32 = 10;
/// Every generated scenario runs at this time scale.
pub const TIME_SCALE: f64 = 0.1;

#[derive(Debug, Clone)]
pub struct Spec {
    /// Per zone, the allocatable CPU of each of its nodes at the start.
    pub zones: Vec<Vec<u32>>,
    pub replicas: u32,
    pub placement: Placement,
    pub routing: Routing,
    pub sidecar: Option<Sidecar>,
    pub service_ms: u32,
    pub sse: bool,
    pub probe_period_s: u32,
    pub not_ready_toleration_s: u32,
    pub generators: Vec<Generator>,
    pub load_balancer: Option<LoadBalancer>,
    pub ingress: Option<Ingress>,
    pub autoscaler: Option<Autoscaler>,
    pub actions: Vec<Choice>,
}

#[derive(Debug, Clone, Copy)]
pub enum Placement {
    Anywhere,
    /// The first `n` zones.
    FirstZones(usize),
    /// A spread constraint: by zone (else by node), DoNotSchedule (else ScheduleAnyway).
    Spread {
        by_zone: bool,
        hard: bool,
    },
}

#[derive(Debug, Clone, Copy)]
pub enum Routing {
    None,
    Auto,
    PreferClose,
    PreferSameZone,
}

#[derive(Debug, Clone, Copy)]
pub struct Sidecar {
    pub max_concurrency: u32,
    pub queue_size: u32,
    pub queue_timeout_ms: u32,
}

#[derive(Debug, Clone, Copy)]
pub enum Via {
    KubeProxy,
    LoadBalancer,
    Ingress,
}

#[derive(Debug, Clone, Copy)]
pub struct Generator {
    pub zone: usize,
    pub rate: u32,
    pub connections: u32,
    pub per_request: bool,
    pub via: Via,
    pub sse_streams: u32,
}

#[derive(Debug, Clone, Copy)]
pub struct LoadBalancer {
    pub registration_lag_s: u32,
    pub deregistration_lag_s: u32,
}

#[derive(Debug, Clone, Copy)]
pub struct Ingress {
    pub v0_16: bool,
    pub replicas: u32,
}

#[derive(Debug, Clone, Copy)]
pub struct Autoscaler {
    pub max_replicas: u32,
    pub destination: bool,
    pub target_rps: u32,
}

/// One timeline choice; `render` resolves the indices against the nodes and zones that exist
/// at its moment (a choice that fits nothing is left out).
#[derive(Debug, Clone, Copy)]
pub enum Choice {
    /// `setNodeReady: false` on a node, `true` one slot later.
    NodeOutage {
        node: usize,
    },
    AddNode {
        zone: usize,
        cpu: u32,
    },
    RemoveNode {
        node: usize,
    },
    KillPod {
        newest: bool,
        zone: Option<usize>,
    },
    Scale {
        replicas: u32,
    },
    Rollout,
    /// `relabelNode` into another zone, and back one slot later.
    Relabel {
        node: usize,
        zone: usize,
    },
    /// `zoneNetwork` from one zone to another (`None`: to all): a delay with jitter and loss
    /// (`partition` false) or a partition, cleared one slot later.
    ZoneNetwork {
        from: usize,
        to: Option<usize>,
        partition: bool,
        delay_ms: u32,
        loss_percent: u32,
    },
}

fn placement() -> impl Strategy<Value = Placement> {
    prop_oneof![
        3 => Just(Placement::Anywhere),
        1 => (1usize..=3).prop_map(Placement::FirstZones),
        2 => (any::<bool>(), any::<bool>())
            .prop_map(|(by_zone, hard)| Placement::Spread { by_zone, hard }),
    ]
}

fn routing() -> impl Strategy<Value = Routing> {
    prop_oneof![
        Just(Routing::None),
        Just(Routing::Auto),
        Just(Routing::PreferClose),
        Just(Routing::PreferSameZone),
    ]
}

fn sidecar() -> impl Strategy<Value = Option<Sidecar>> {
    prop::option::weighted(
        0.6,
        (
            1u32..=16,
            prop_oneof![Just(0u32), 1u32..=32],
            prop_oneof![Just(0u32), Just(50), Just(250)],
        )
            .prop_map(|(max_concurrency, queue_size, queue_timeout_ms)| Sidecar {
                max_concurrency,
                queue_size,
                queue_timeout_ms,
            }),
    )
}

fn generator() -> impl Strategy<Value = Generator> {
    (
        0usize..4,
        5u32..=40,
        1u32..=8,
        prop::bool::weighted(0.25),
        prop_oneof![6 => Just(Via::KubeProxy), 2 => Just(Via::LoadBalancer), 1 => Just(Via::Ingress)],
        prop_oneof![3 => Just(0u32), 1 => 1u32..=4],
    )
        .prop_map(|(zone, rate, connections, per_request, via, sse_streams)| Generator {
            zone,
            rate,
            connections,
            per_request,
            via,
            sse_streams,
        })
}

fn choice() -> impl Strategy<Value = Choice> {
    prop_oneof![
        2 => (0usize..12).prop_map(|node| Choice::NodeOutage { node }),
        1 => (0usize..4, 1u32..=8).prop_map(|(zone, cpu)| Choice::AddNode { zone, cpu }),
        1 => (0usize..12).prop_map(|node| Choice::RemoveNode { node }),
        2 => (any::<bool>(), prop::option::of(0usize..4))
            .prop_map(|(newest, zone)| Choice::KillPod { newest, zone }),
        1 => (1u32..=12).prop_map(|replicas| Choice::Scale { replicas }),
        2 => Just(Choice::Rollout),
        1 => (0usize..12, 0usize..4).prop_map(|(node, zone)| Choice::Relabel { node, zone }),
        2 => (0usize..4, prop::option::of(0usize..4), prop::bool::weighted(0.3), 1u32..=40, 0u32..=5)
            .prop_map(|(from, to, partition, delay_ms, loss_percent)| Choice::ZoneNetwork {
                from,
                to,
                partition,
                delay_ms,
                loss_percent,
            }),
    ]
}

/// Random valid scenarios: zones 1–4, 1–3 nodes each, 1–30 replicas (mostly few: every pod is
/// two processes here), both routing modes, sidecar limits and queues, SSE, generator mixes
/// and connection models, a load balancer, an ingress, an autoscaler, and up to four timeline
/// choices (zone network faults among them).
pub fn spec() -> impl Strategy<Value = Spec> {
    let cluster = vec(vec(1u32..=8, 1..=3), 1..=4);
    let service = (
        prop_oneof![4 => 1u32..=6, 2 => 7u32..=14, 1 => 15u32..=30],
        placement(),
        routing(),
        sidecar(),
        1u32..=20,
        prop::bool::weighted(0.2),
        1u32..=2,
        prop_oneof![Just(10u32), Just(15), Just(300)],
    );
    let extras = (
        vec(generator(), 1..=3),
        prop::option::weighted(
            0.3,
            (1u32..=5, 1u32..=10).prop_map(|(registration_lag_s, deregistration_lag_s)| {
                LoadBalancer {
                    registration_lag_s,
                    deregistration_lag_s,
                }
            }),
        ),
        prop::option::weighted(
            0.15,
            (any::<bool>(), 1u32..=2).prop_map(|(v0_16, replicas)| Ingress { v0_16, replicas }),
        ),
        prop::option::weighted(
            0.2,
            (2u32..=12, any::<bool>(), 3u32..=20).prop_map(
                |(max_replicas, destination, target_rps)| Autoscaler {
                    max_replicas,
                    destination,
                    target_rps,
                },
            ),
        ),
        vec(choice(), 0..=4),
    );
    (cluster, service, extras).prop_map(
        |(
            zones,
            (replicas, placement, routing, sidecar, service_ms, sse, probe_period_s, tol),
            (generators, load_balancer, ingress, autoscaler, actions),
        )| Spec {
            zones,
            replicas,
            placement,
            routing,
            sidecar,
            service_ms,
            sse,
            probe_period_s,
            not_ready_toleration_s: tol,
            generators,
            load_balancer,
            ingress,
            autoscaler,
            actions,
        },
    )
}

//! A [`Spec`] as a scenario file: every choice is made valid here (a generator through a load
//! balancer only when there is one, SSE streams only with `service.sse`, a timeline entry only
//! on a node that exists then), so every rendered file must load; `every_spec_renders_a_valid_scenario`
//! proves it on many specs without running them.

use std::fmt::Write;

use super::spec::{Choice, LEAD_S, Placement, Routing, SLOT_S, Spec, TIME_SCALE, Via};

/// A rendered scenario and what the checks need to know about it.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub yaml: String,
    /// Whether `harness plan`'s reachability can be held against the run's: not with an
    /// autoscaler, whose decisions follow the measured load.
    pub plan_comparable: bool,
    /// The timeline, one line per entry, for reports.
    pub timeline: Vec<String>,
}

const ZONES: [&str; 4] = ["zone-a", "zone-b", "zone-c", "zone-d"];

struct Node {
    name: String,
    zone: usize,
    present: bool,
}

pub fn render(spec: &Spec) -> Rendered {
    let zone_count = spec.zones.len();
    let mut nodes: Vec<Node> = Vec::new();
    let mut y = String::from(
        "apiVersion: harness/v1alpha1\nkind: Scenario\nmetadata: { name: random }\ncluster:\n  zones:\n",
    );
    for (z, cpus) in spec.zones.iter().enumerate() {
        let _ = writeln!(y, "    - name: {}\n      nodes:", ZONES[z]);
        for (i, cpu) in cpus.iter().enumerate() {
            let name = format!("{}-{}", &ZONES[z][5..], i + 1);
            let _ = writeln!(y, "        - {{ name: {name}, allocatableCpu: \"{cpu}\" }}");
            nodes.push(Node {
                name,
                zone: z,
                present: true,
            });
        }
    }
    service(&mut y, spec, zone_count);
    let (timeline, slots) = timeline(spec, &mut nodes, zone_count);
    let duration_s = LEAD_S + slots * SLOT_S + SLOT_S;
    load(&mut y, spec, zone_count, duration_s);
    if let Some(lb) = spec.load_balancer {
        let _ = writeln!(
            y,
            "loadBalancer: {{ registrationLag: {}s, deregistrationLag: {}s, deregistrationDelay: 5s }}",
            lb.registration_lag_s, lb.deregistration_lag_s
        );
    }
    if let Some(ingress) = spec.ingress {
        let version = if ingress.v0_16 { "v0.16" } else { "v0.11" };
        let _ = writeln!(
            y,
            "ingress: {{ version: {version}, replicas: {} }}",
            ingress.replicas
        );
    }
    let _ = writeln!(y, "timeScale: {TIME_SCALE}");
    if !timeline.is_empty() {
        y.push_str("timeline:\n");
        for entry in &timeline {
            let _ = writeln!(y, "  - {entry}");
        }
    }
    y.push_str("expect:\n  - { metric: errorRate, max: 1 }\n");
    Rendered {
        yaml: y,
        plan_comparable: spec.autoscaler.is_none(),
        timeline,
    }
}

fn service(y: &mut String, spec: &Spec, zone_count: usize) {
    let _ = writeln!(y, "service:\n  name: svc\n  replicas: {}", spec.replicas);
    match spec.placement {
        Placement::Anywhere => {}
        Placement::FirstZones(n) => {
            let zones: Vec<&str> = ZONES[..n.min(zone_count)].to_vec();
            let _ = writeln!(y, "  placement: {{ zones: [{}] }}", zones.join(", "));
        }
        Placement::Spread { by_zone, hard } => {
            let _ = writeln!(
                y,
                "  placement:\n    topologySpreadConstraints:\n      - {{ maxSkew: 1, topologyKey: {}, whenUnsatisfiable: {} }}",
                if by_zone {
                    "topology.kubernetes.io/zone"
                } else {
                    "kubernetes.io/hostname"
                },
                if hard {
                    "DoNotSchedule"
                } else {
                    "ScheduleAnyway"
                }
            );
        }
    }
    match spec.routing {
        Routing::None => {}
        Routing::Auto => y.push_str("  routing: { topologyMode: Auto }\n"),
        Routing::PreferClose => y.push_str("  routing: { trafficDistribution: PreferClose }\n"),
        Routing::PreferSameZone => {
            y.push_str("  routing: { trafficDistribution: PreferSameZone }\n")
        }
    }
    if let Some(s) = spec.sidecar {
        let _ = writeln!(
            y,
            "  sidecar: {{ maxConcurrency: {}, queueSize: {}, queueTimeout: {}ms }}",
            s.max_concurrency, s.queue_size, s.queue_timeout_ms
        );
    }
    let _ = writeln!(y, "  serviceTime: {{ fixed: {}ms }}", spec.service_ms);
    if spec.sse {
        y.push_str("  sse: { heartbeatInterval: 1s }\n");
    }
    let _ = writeln!(
        y,
        "  readinessProbe: {{ period: {}s }}\n  startup: {{ latency: 1s }}\n  rollout: {{ maxSurge: 50%, maxUnavailable: 50% }}\n  termination: {{ gracePeriod: 10s }}\n  notReadyToleration: {}s",
        spec.probe_period_s, spec.not_ready_toleration_s
    );
    if let Some(a) = spec.autoscaler {
        let min = spec.replicas.min(a.max_replicas).max(1);
        let _ = writeln!(
            y,
            "  autoscaler:\n    minReplicas: {min}\n    maxReplicas: {}\n    metric: {{ reporter: {}, targetAverageValue: {} }}\n    syncPeriod: 15s",
            a.max_replicas.max(min),
            // The destination side is what the sidecars admit: only with a sidecar.
            if a.destination && spec.sidecar.is_some() {
                "destination"
            } else {
                "source"
            },
            a.target_rps
        );
    }
}

fn load(y: &mut String, spec: &Spec, zone_count: usize, duration_s: u32) {
    let _ = writeln!(
        y,
        "load:\n  warmup: 2s\n  duration: {duration_s}s\n  requestTimeout: 2s\n  generators:"
    );
    for (i, g) in spec.generators.iter().enumerate() {
        let via = match g.via {
            Via::LoadBalancer if spec.load_balancer.is_some() => "loadBalancer",
            Via::Ingress if spec.ingress.is_some() => "ingress",
            _ => "kubeProxy",
        };
        let model = if g.per_request {
            "perRequest"
        } else {
            "keepAlive"
        };
        let sse = if spec.sse { g.sse_streams } else { 0 };
        let _ = writeln!(
            y,
            "    - {{ name: gen-{i}, zone: {}, rate: {}, connections: {}, connectionModel: {model}, via: {via}, sseStreams: {sse} }}",
            ZONES[g.zone % zone_count],
            g.rate,
            g.connections
        );
    }
}

/// The timeline entries and the slots they take.
fn timeline(spec: &Spec, nodes: &mut Vec<Node>, zone_count: usize) -> (Vec<String>, u32) {
    let mut entries = Vec::new();
    let mut slot = 0u32;
    let at = |slot: u32| LEAD_S + slot * SLOT_S;
    for (k, choice) in spec.actions.iter().enumerate() {
        // An outage or relabel ends (its second entry) before the next choice's slot.
        let free: Vec<usize> = (0..nodes.len()).filter(|&i| nodes[i].present).collect();
        let present = nodes.iter().filter(|n| n.present).count();
        match *choice {
            Choice::NodeOutage { node } if !free.is_empty() => {
                let name = nodes[free[node % free.len()]].name.clone();
                entries.push(format!(
                    "{{ at: {}s, name: e{k}-down, setNodeReady: {{ node: {name}, ready: false }} }}",
                    at(slot)
                ));
                entries.push(format!(
                    "{{ at: {}s, name: e{k}-up, setNodeReady: {{ node: {name}, ready: true }} }}",
                    at(slot + 1)
                ));
                slot += 2;
            }
            Choice::AddNode { zone, cpu } => {
                let name = format!("new-{k}");
                entries.push(format!(
                    "{{ at: {}s, name: e{k}-add, addNode: {{ zone: {}, name: {name}, allocatableCpu: \"{cpu}\" }} }}",
                    at(slot),
                    ZONES[zone % zone_count]
                ));
                nodes.push(Node {
                    name,
                    zone: zone % zone_count,
                    present: true,
                });
                slot += 1;
            }
            Choice::RemoveNode { node } if !free.is_empty() && present > 1 => {
                let i = free[node % free.len()];
                nodes[i].present = false;
                entries.push(format!(
                    "{{ at: {}s, name: e{k}-remove, removeNode: {{ node: {} }} }}",
                    at(slot),
                    nodes[i].name
                ));
                slot += 1;
            }
            Choice::KillPod { newest, zone } => {
                let pick = if newest { "newest" } else { "oldest" };
                let zone = zone
                    .map(|z| format!(", zone: {}", ZONES[z % zone_count]))
                    .unwrap_or_default();
                entries.push(format!(
                    "{{ at: {}s, name: e{k}-kill, killPod: {{ pick: {pick}{zone} }} }}",
                    at(slot)
                ));
                slot += 1;
            }
            Choice::Scale { replicas } if spec.autoscaler.is_none() => {
                entries.push(format!(
                    "{{ at: {}s, name: e{k}-scale, scale: {{ replicas: {replicas} }} }}",
                    at(slot)
                ));
                slot += 1;
            }
            Choice::Rollout => {
                entries.push(format!(
                    "{{ at: {}s, name: e{k}-rollout, rollout: {{ restart: true }} }}",
                    at(slot)
                ));
                slot += 1;
            }
            Choice::Relabel { node, zone } if !free.is_empty() && zone_count > 1 => {
                let i = free[node % free.len()];
                let home = nodes[i].zone;
                let other = if zone % zone_count == home {
                    (home + 1) % zone_count
                } else {
                    zone % zone_count
                };
                let name = nodes[i].name.clone();
                entries.push(format!(
                    "{{ at: {}s, name: e{k}-relabel, relabelNode: {{ node: {name}, zone: {} }} }}",
                    at(slot),
                    ZONES[other]
                ));
                entries.push(format!(
                    "{{ at: {}s, name: e{k}-back, relabelNode: {{ node: {name}, zone: {} }} }}",
                    at(slot + 1),
                    ZONES[home]
                ));
                slot += 2;
            }
            Choice::ZoneNetwork {
                from,
                to,
                partition,
                delay_ms,
                loss_percent,
            } if zone_count > 1 => {
                let from = from % zone_count;
                let to = match to {
                    None => "all".to_owned(),
                    Some(z) if z % zone_count == from => ZONES[(from + 1) % zone_count].to_owned(),
                    Some(z) => ZONES[z % zone_count].to_owned(),
                };
                let fault = if partition {
                    "partition: true".to_owned()
                } else {
                    format!(
                        "delay: {delay_ms}ms, jitter: {}ms, loss: {}",
                        delay_ms / 4,
                        f64::from(loss_percent) / 100.0
                    )
                };
                entries.push(format!(
                    "{{ at: {}s, name: e{k}-net, zoneNetwork: {{ from: {}, to: {to}, {fault} }} }}",
                    at(slot),
                    ZONES[from]
                ));
                entries.push(format!(
                    "{{ at: {}s, name: e{k}-healed, zoneNetwork: {{ from: {}, to: {to}, clear: true }} }}",
                    at(slot + 1),
                    ZONES[from]
                ));
                slot += 2;
            }
            _ => {}
        }
    }
    (entries, slot)
}

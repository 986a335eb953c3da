//! What a scenario needs of this machine on the local target, estimated before anything starts,
//! and the machine's limits it is measured against: processes and their threads, file
//! descriptors of the harness (two per connection its kube-proxy forwarders carry, plus each
//! child's pipes) and of the busiest load generator, listening ports, memory (the workloads'
//! resident size, measured, and the per-second samples the harness keeps for every pod), and
//! the disk `timeline.jsonl` takes. Past a limit the run is refused with the numbers
//! ([`Budget::refusals`]); within a fifth of it, or when the CPU the load needs approaches
//! the machine's, it is warned about ([`Budget::warnings`]), as is a load far longer than a
//! scenario needs.
//!
//! The per-process figures were measured on the workloads (VmRSS of running processes, debug
//! builds, 2026-12-02): flagsvc 8 MiB, sidecar 9 MiB, loadgen 11 MiB, the harness 44 MiB with
//! 4 pods; HAProxy's master and worker about 10 MiB each. They are rounded up here.

use std::time::Duration;

use harness_core::scenario::model::{Action, ConnectionModel, Rate, Scenario, Via, hops};

/// Resident MiB per process kind (rounded up from the measurements above).
const FLAGSVC_MIB: f64 = 10.0;
const SIDECAR_MIB: f64 = 12.0;
const LOADGEN_MIB: f64 = 14.0;
const HAPROXY_MIB: f64 = 24.0;
const HARNESS_MIB: f64 = 64.0;
/// Bytes the harness keeps per pod sample (one a second) in memory, and per line of
/// `timeline.jsonl` on disk.
const SAMPLE_BYTES: f64 = 200.0;
/// Threads of one workload process (tokio's workers on this machine plus its own).
const THREADS_PER_PROCESS: u64 = 4;
/// CPU-seconds one request costs across loadgen, forwarder, sidecar and flagsvc, from
/// `make bench` (results/bench/): about 60 µs; rounded up.
const CPU_PER_REQUEST_S: f64 = 100e-6;
/// Loads longer than this are warned about: the shipped scenarios run under two minutes.
const LONG_LOAD: Duration = Duration::from_secs(3600);

/// The scenario's needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Needs {
    /// The most pods alive at once (replicas, scale actions, the autoscaler's maximum, a
    /// rollout's surge).
    pub peak_pods: u64,
    pub processes: u64,
    pub threads: u64,
    /// The harness's own descriptors at the peak.
    pub harness_fds: u64,
    /// The busiest load generator's descriptors.
    pub loadgen_fds: u64,
    pub listening_ports: u64,
    pub memory_mib: f64,
    pub timeline_mib: f64,
    /// Cores the load keeps busy at its peak rate (`None` for a closed loop: as many as there
    /// are).
    pub cpu_cores: Option<f64>,
    pub load: Duration,
}

/// This machine's limits (`None`: could not be read; that limit is not checked).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Machine {
    pub cpus: u64,
    pub memory_available_mib: Option<f64>,
    /// The soft RLIMIT_NOFILE the harness and its children start with.
    pub open_files: Option<u64>,
    /// The hard RLIMIT_NOFILE (the soft one can be raised to it: `ulimit -n`).
    pub open_files_hard: Option<u64>,
    /// `kernel.threads-max` and RLIMIT_NPROC, the lower.
    pub threads: Option<u64>,
    /// Ports of `net.ipv4.ip_local_port_range`.
    pub ephemeral_ports: Option<u64>,
    /// Free MiB where the run writes.
    pub disk_free_mib: Option<f64>,
}

/// A scenario's needs against a machine.
#[derive(Debug, Clone, PartialEq)]
pub struct Budget {
    pub needs: Needs,
    pub machine: Machine,
}

/// Estimates `scenario`'s needs at `time_scale` (the load's wall length is scaled).
pub fn needs(scenario: &Scenario, time_scale: f64) -> Needs {
    let service = &scenario.service;
    let mut base = u64::from(service.replicas);
    if let Some(a) = &service.autoscaler {
        base = base.max(u64::from(a.max_replicas));
    }
    let mut rollout = false;
    for event in &scenario.timeline {
        match &event.action {
            Action::Scale { replicas } => base = base.max(u64::from(*replicas)),
            Action::Rollout(_) => rollout = true,
            _ => {}
        }
    }
    let surge = if rollout {
        u64::from(
            service
                .rollout
                .max_surge
                .scaled(base.min(u64::from(u32::MAX)) as u32, true),
        )
    } else {
        0
    };
    let peak_pods = base + surge;
    let per_pod_processes = 1 + u64::from(service.sidecar.is_some());
    let generators = scenario.load.generators.len() as u64;
    let ingress = scenario
        .ingress
        .as_ref()
        .map_or(0, |i| u64::from(i.replicas));
    let lb = u64::from(scenario.load_balancer.is_some());
    let processes = peak_pods * per_pod_processes + generators + 2 * ingress + lb;
    let timeout_s = scenario.load.request_timeout.as_secs_f64();
    let connections: Vec<u64> = scenario
        .load
        .generators
        .iter()
        .map(|g| {
            let open = match (g.connection_model, g.rate) {
                (ConnectionModel::KeepAlive, _) | (_, Rate::Max) => u64::from(g.connections),
                (ConnectionModel::PerRequest, rate) => {
                    // At most `connections` open; fewer when the rate cannot fill them.
                    let in_flight = (peak_rate(rate) * timeout_s).ceil() as u64;
                    u64::from(g.connections).min(in_flight.max(1))
                }
            };
            open + u64::from(g.sse_streams)
        })
        .collect();
    let client_connections: u64 = connections.iter().sum();
    let relays = relays(scenario, peak_pods, rollout, &connections);
    // Each connection through a forwarder is two descriptors in the harness; each child has
    // its output pipes; each pod is probed and scraped (a connection each, transient).
    let harness_fds = 2 * client_connections + 3 * processes + 2 * peak_pods + 64 + relays.fds;
    let loadgen_fds = connections.iter().max().copied().unwrap_or(0) + 32;
    let listening_ports =
        peak_pods * (2 * per_pod_processes) + 2 * ingress + 2 * lb + 8 + relays.listeners;
    let load = scale(scenario.load.warmup + scenario.load.duration, time_scale);
    let samples = peak_pods as f64 * load.as_secs_f64() * SAMPLE_BYTES / MIB;
    let memory_mib = peak_pods as f64
        * (FLAGSVC_MIB
            + if service.sidecar.is_some() {
                SIDECAR_MIB
            } else {
                0.0
            })
        + generators as f64 * LOADGEN_MIB
        + ingress as f64 * HAPROXY_MIB
        + HARNESS_MIB
        + samples;
    let cpu_cores = scenario
        .load
        .generators
        .iter()
        .map(|g| match g.rate {
            Rate::Max => None,
            rate => Some(peak_rate(rate) * CPU_PER_REQUEST_S),
        })
        .sum::<Option<f64>>();
    Needs {
        peak_pods,
        processes,
        threads: processes * THREADS_PER_PROCESS + 16,
        harness_fds,
        loadgen_fds,
        listening_ports,
        memory_mib,
        timeline_mib: samples,
        cpu_cores,
        load,
    }
}

/// What the zone relays add (crate::zone_relays): nothing without a `zoneNetwork` action.
#[derive(Debug, Default)]
struct Relays {
    listeners: u64,
    fds: u64,
}

/// With zone faults, one relay for each zone a load balancer or ingress replica runs in and
/// each pod ever started (a rollout's new pods too), the generators' relays to the balancer
/// and one spreader per zone; each connection of a generator through them is carried once
/// more (two descriptors a hop).
fn relays(scenario: &Scenario, peak_pods: u64, rollout: bool, connections: &[u64]) -> Relays {
    if !scenario.has_zone_faults() {
        return Relays::default();
    }
    let zones = scenario.cluster.zones.len() as u64;
    let lb = u64::from(scenario.load_balancer.is_some());
    let ingress_zones = scenario.ingress.as_ref().map_or(0, |i| {
        u64::from(i.replicas).min(hops::worker_zones(&scenario.cluster).len() as u64)
    });
    let pods_ever = if rollout { 2 * peak_pods } else { peak_pods };
    let listeners = (lb + ingress_zones) * pods_ever + (lb + u64::from(ingress_zones > 0)) * zones;
    let proxied: u64 = scenario
        .load
        .generators
        .iter()
        .zip(connections)
        .filter(|(g, _)| g.via != Via::KubeProxy)
        .map(|(_, n)| *n)
        .sum();
    Relays {
        listeners,
        fds: listeners + 2 * 2 * proxied,
    }
}

const MIB: f64 = 1024.0 * 1024.0;

fn scale(d: Duration, time_scale: f64) -> Duration {
    Duration::from_secs_f64(d.as_secs_f64() * time_scale)
}

fn peak_rate(rate: Rate) -> f64 {
    match rate {
        Rate::PerSecond(r) => r,
        Rate::Ramp { from, to } => from.max(to),
        Rate::Max => 0.0,
    }
}

impl Budget {
    /// What cannot fit: each a sentence with the need, the limit and the fix.
    pub fn refusals(&self) -> Vec<String> {
        self.checks()
            .into_iter()
            .filter(|c| c.need > c.limit)
            .map(|c| {
                format!(
                    "{} beyond this machine: about {} needed, {} available ({}); {}",
                    c.what,
                    whole(c.need),
                    whole(c.limit),
                    c.limit_name,
                    c.fix
                )
            })
            .collect()
    }

    /// What fits but comes within a fifth of a limit, a load that will keep every core busy,
    /// and a load far longer than a scenario needs.
    pub fn warnings(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .checks()
            .into_iter()
            .filter(|c| c.need <= c.limit && c.need > 0.8 * c.limit)
            .map(|c| {
                format!(
                    "{}: about {} of the {} available ({}): close to this machine's limit",
                    c.what,
                    whole(c.need),
                    whole(c.limit),
                    c.limit_name
                )
            })
            .collect();
        if let Some(cores) = self
            .needs
            .cpu_cores
            .filter(|c| *c > 0.8 * self.machine.cpus as f64)
        {
            out.push(format!(
                "the load needs about {cores:.1} of this machine's {} CPUs at its peak rate: the workloads will compete for them and the latencies will measure this machine, not the scenario",
                self.machine.cpus
            ));
        }
        if self.needs.load > LONG_LOAD {
            out.push(format!(
                "the load runs {} (warm-up included): far beyond what a scenario needs (the shipped ones run under two minutes); the run keeps about {:.0} MiB of per-pod samples",
                humantime::format_duration(Duration::from_secs(self.needs.load.as_secs())),
                self.needs.timeline_mib
            ));
        }
        out
    }

    fn checks(&self) -> Vec<Check> {
        let n = &self.needs;
        let m = &self.machine;
        let mut checks = Vec::new();
        if let Some(limit) = m.memory_available_mib {
            checks.push(Check {
                what: format!("memory for {} pods' processes and the harness's samples (MiB)", n.peak_pods),
                need: n.memory_mib,
                limit,
                limit_name: "MemAvailable in /proc/meminfo",
                fix: "lower service.replicas (or the autoscaler's maxReplicas), or shorten load.duration",
            });
        }
        if let Some(limit) = m.disk_free_mib {
            checks.push(Check {
                what: "disk for timeline.jsonl (MiB)".into(),
                need: n.timeline_mib,
                limit,
                limit_name: "free space where the run writes",
                fix: "shorten load.duration or write elsewhere with --out",
            });
        }
        if let Some(limit) = m.open_files_hard {
            checks.push(Check {
                what: "open files of the harness (forwarded connections, pods, pipes)".into(),
                need: n.harness_fds as f64,
                limit: limit as f64,
                limit_name: "the hard RLIMIT_NOFILE, `ulimit -Hn`",
                fix: "lower the generators' connections and sseStreams, or service.replicas",
            });
            checks.push(Check {
                what: "open files of the busiest load generator".into(),
                need: n.loadgen_fds as f64,
                limit: limit as f64,
                limit_name: "the hard RLIMIT_NOFILE, `ulimit -Hn`",
                fix: "lower that generator's connections and sseStreams",
            });
        }
        if let Some(limit) = m.threads {
            checks.push(Check {
                what: format!("threads of {} processes", n.processes),
                need: n.threads as f64,
                limit: limit as f64,
                limit_name: "kernel.threads-max and RLIMIT_NPROC",
                fix: "lower service.replicas or the autoscaler's maxReplicas",
            });
        }
        if let Some(limit) = m.ephemeral_ports {
            checks.push(Check {
                what: "listening ports (two per workload process)".into(),
                need: n.listening_ports as f64,
                limit: limit as f64,
                limit_name: "net.ipv4.ip_local_port_range",
                fix: "lower service.replicas or the autoscaler's maxReplicas",
            });
        }
        checks
    }
}

struct Check {
    what: String,
    need: f64,
    limit: f64,
    limit_name: &'static str,
    fix: &'static str,
}

fn whole(v: f64) -> String {
    harness_core::text::thousands(v.ceil() as u64)
}

/// This machine's limits, read from /proc and getrlimit; `out` is where the run writes.
pub fn machine(out: &std::path::Path) -> Machine {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let memory_available_mib = read("/proc/meminfo").and_then(|text| {
        text.lines()
            .find_map(|l| l.strip_prefix("MemAvailable:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map(|kb| kb / 1024.0)
    });
    let nofile = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE).ok();
    let nproc = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NPROC)
        .ok()
        .map(|(soft, _)| soft);
    let threads_max =
        read("/proc/sys/kernel/threads-max").and_then(|t| t.trim().parse::<u64>().ok());
    let threads = match (threads_max, nproc) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let ephemeral_ports = read("/proc/sys/net/ipv4/ip_local_port_range").and_then(|t| {
        let mut it = t.split_whitespace().filter_map(|w| w.parse::<u64>().ok());
        Some(it.next_back()? - it.next()? + 1)
    });
    let existing = out
        .ancestors()
        .find(|p| p.exists())
        .unwrap_or(std::path::Path::new("."));
    let disk_free_mib = nix::sys::statvfs::statvfs(existing)
        .ok()
        .map(|s| s.blocks_available() as f64 * s.fragment_size() as f64 / MIB);
    Machine {
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u64),
        memory_available_mib,
        open_files: nofile.map(|(soft, _)| soft),
        open_files_hard: nofile.map(|(_, hard)| hard),
        threads,
        ephemeral_ports,
        disk_free_mib,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(replicas: u32, duration: &str, extra: &str) -> Scenario {
        let text = format!(
            "apiVersion: harness/v1alpha1\nkind: Scenario\nmetadata: {{name: big}}\ncluster:\n  zones:\n    - name: a\n      nodes: [{{name: a-1, allocatableCpu: \"4\"}}]\nservice:\n  name: svc\n  replicas: {replicas}\n  sidecar: {{maxConcurrency: 4}}\n  serviceTime: {{fixed: 10ms}}\n  sse: {{heartbeatInterval: 1s}}\n{extra}load:\n  warmup: 0s\n  duration: {duration}\n  generators:\n    - {{name: g, zone: a, rate: 100, connections: 16, sseStreams: 4}}\n"
        );
        harness_core::scenario::load_scenario_str(&text, "big.yaml", None).unwrap()
    }

    fn roomy() -> Machine {
        Machine {
            cpus: 2,
            memory_available_mib: Some(20_000.0),
            open_files: Some(1024),
            open_files_hard: Some(524_288),
            threads: Some(100_000),
            ephemeral_ports: Some(28_232),
            disk_free_mib: Some(50_000.0),
        }
    }

    #[test]
    fn zone_faults_add_the_relays_of_the_hops_through_the_load_balancer() {
        let text = |timeline: &str| {
            format!(
                "apiVersion: harness/v1alpha1\nkind: Scenario\nmetadata: {{name: r}}\ncluster:\n  zones:\n    - {{name: a, nodes: [{{name: a-1, allocatableCpu: \"4\"}}]}}\n    - {{name: b, nodes: [{{name: b-1, allocatableCpu: \"4\"}}]}}\nservice:\n  name: svc\n  replicas: 4\n  serviceTime: {{fixed: 10ms}}\nloadBalancer: {{}}\nload:\n  duration: 10s\n  generators:\n    - {{name: g, zone: b, rate: 100, connections: 16, via: loadBalancer}}\n{timeline}"
            )
        };
        let load = |t: &str| harness_core::scenario::load_scenario_str(t, "r.yaml", None).unwrap();
        let calm = needs(&load(&text("")), 1.0);
        let faulted = needs(
            &load(&text(
                "timeline:\n  - { at: 1s, zoneNetwork: { from: a, to: b, delay: 5ms } }\n",
            )),
            1.0,
        );
        // The balancer's zone (a) to each of 4 pods, and one relay per zone to the balancer;
        // the generator's 16 connections carried once more, two descriptors a hop.
        let listeners = 4 + 2;
        assert_eq!(faulted.listening_ports, calm.listening_ports + listeners);
        assert_eq!(faulted.harness_fds, calm.harness_fds + listeners + 4 * 16);
    }

    #[test]
    fn worked_numbers_for_four_pods() {
        let n = needs(&scenario(4, "40s", ""), 1.0);
        assert_eq!(n.peak_pods, 4);
        // 4 × (flagsvc + sidecar) + 1 loadgen.
        assert_eq!(n.processes, 9);
        // 16 keep-alive connections + 4 streams, twice in the harness; pipes; probes.
        assert_eq!(n.harness_fds, 2 * 20 + 3 * 9 + 2 * 4 + 64);
        assert_eq!(n.loadgen_fds, 20 + 32);
        assert_eq!(n.listening_ports, 4 * 4 + 8);
        let samples = 4.0 * 40.0 * SAMPLE_BYTES / MIB;
        assert!((n.memory_mib - (4.0 * 22.0 + 14.0 + 64.0 + samples)).abs() < 1e-9);
        assert_eq!(n.cpu_cores, Some(100.0 * CPU_PER_REQUEST_S));
        let b = Budget {
            needs: n,
            machine: roomy(),
        };
        assert!(
            b.refusals().is_empty() && b.warnings().is_empty(),
            "{:?}",
            b.warnings()
        );
    }

    #[test]
    fn a_thousand_pods_for_a_thousand_hours_is_refused_with_the_numbers() {
        let b = Budget {
            needs: needs(&scenario(1000, "1000h", ""), 1.0),
            machine: roomy(),
        };
        let refused = b.refusals().join("\n");
        assert!(
            refused.contains(
                "memory for 1000 pods' processes and the harness's samples (MiB) beyond this machine: about "
            ),
            "{refused}"
        );
        assert!(
            refused.contains("available (MemAvailable in /proc/meminfo)"),
            "{refused}"
        );
        assert!(
            refused.contains("disk for timeline.jsonl (MiB)"),
            "{refused}"
        );
        assert!(
            b.warnings()
                .iter()
                .any(|w| w.contains("far beyond what a scenario needs"))
        );
        // A time scale shortens the wall-clock load and what it keeps.
        let scaled = needs(&scenario(4, "1000h", ""), 0.001);
        assert_eq!(scaled.load, Duration::from_secs(3600));
    }

    #[test]
    fn the_peak_counts_scale_actions_the_autoscaler_and_a_rollouts_surge() {
        let autoscaled = needs(
            &scenario(
                2,
                "40s",
                "  autoscaler: {maxReplicas: 30, metric: {reporter: source, targetAverageValue: 10}}\n",
            ),
            1.0,
        );
        assert_eq!(autoscaled.peak_pods, 30);
        let rolled = needs(&scenario(8, "40s", "  rollout: {maxSurge: 50%}\n"), 1.0);
        assert_eq!(rolled.peak_pods, 8, "no rollout action, no surge");
    }

    proptest::proptest! {
        /// More replicas never need less; a limit is refused exactly when a need exceeds it,
        /// warned about within a fifth under it.
        #[test]
        fn needs_grow_with_replicas_and_refusals_follow_the_limits(
            replicas in 1u32..3_000, more in 1u32..1_000, memory in 100.0f64..50_000.0,
        ) {
            let small = needs(&scenario(replicas, "60s", ""), 1.0);
            let big = needs(&scenario(replicas + more, "60s", ""), 1.0);
            proptest::prop_assert!(big.memory_mib > small.memory_mib);
            proptest::prop_assert!(big.processes > small.processes && big.harness_fds > small.harness_fds);
            let machine = Machine { memory_available_mib: Some(memory), ..roomy() };
            let b = Budget { needs: small.clone(), machine };
            let refused = b.refusals().iter().any(|r| r.starts_with("memory"));
            proptest::prop_assert_eq!(refused, small.memory_mib > memory);
            let warned = b.warnings().iter().any(|w| w.starts_with("memory"));
            proptest::prop_assert_eq!(warned, small.memory_mib <= memory && small.memory_mib > 0.8 * memory);
        }
    }
}

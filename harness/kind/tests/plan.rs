//! The kind cluster plan: which nodes, labels, CPU and flags a scenario gets, and that the zone
//! CPU ratios the EndpointSlice controller computes are the scenario's on hosts of 2 to 64 CPUs.

#[path = "support/files.rs"]
mod files;

use std::collections::BTreeMap;
use std::time::Duration;

use files::{load, repo};
use harness_core::scenario::{Action, NodeRole, Scenario, load_scenario_str};
use harness_kind::cluster::{
    ClusterPlan, KINDNET_CPU_REQUEST_MILLICPU, KindRole, NodeCpu, PlanError, Purpose,
};

fn scenario(path: &str) -> Scenario {
    load(path, None)
}

fn allocatable(plan: &ClusterPlan, name: &str) -> u64 {
    match plan.node(name).unwrap().cpu {
        NodeCpu::Shaped {
            allocatable_millicpu,
            ..
        } => allocatable_millicpu,
        NodeCpu::Host => panic!("{name} is not shaped"),
    }
}

#[test]
fn topology_skew_on_an_eight_cpu_host() {
    let plan = ClusterPlan::new(&scenario("scenarios/topology-skew.yaml"), 8).unwrap();
    assert_eq!(plan.cluster_name, "harness-topology-skew");
    assert_eq!(plan.context_name(), "kind-harness-topology-skew");
    assert!(plan.cpu_scale.is_identity());
    let summary: Vec<(Option<&str>, &str, KindRole, Option<&str>)> = plan
        .nodes
        .iter()
        .map(|n| {
            (
                n.scenario_name.as_deref(),
                n.kind_name.as_str(),
                n.role,
                n.zone.as_deref(),
            )
        })
        .collect();
    let cp = KindRole::ControlPlane;
    let w = KindRole::Worker;
    let (za, zc) = (Some("ap-northeast-2a"), Some("ap-northeast-2c"));
    assert_eq!(
        summary,
        [
            (Some("cp-1"), "harness-topology-skew-control-plane", cp, za),
            (Some("a-1"), "harness-topology-skew-worker", w, za),
            (Some("a-2"), "harness-topology-skew-worker2", w, za),
            (Some("c-1"), "harness-topology-skew-worker3", w, zc),
            (Some("c-2"), "harness-topology-skew-worker4", w, zc),
            (Some("a-3"), "harness-topology-skew-worker5", w, za),
        ]
    );
    assert_eq!(plan.node("cp-1").unwrap().cpu, NodeCpu::Host);
    assert_eq!(
        plan.node("a-1").unwrap().cpu,
        NodeCpu::Shaped {
            scenario_millicpu: 4000,
            allocatable_millicpu: 4000,
            reserved_millicpu: 4000
        }
    );
    assert_eq!(
        plan.node("a-3").unwrap().cpu,
        NodeCpu::Shaped {
            scenario_millicpu: 8000,
            allocatable_millicpu: 8000,
            reserved_millicpu: 0
        }
    );
    let spare = plan.node_added_at(Duration::from_secs(12)).unwrap();
    assert_eq!(spare.scenario_name.as_deref(), Some("a-3"));
    assert_eq!(spare.labels["harness/spare"], "true");
    assert_eq!(
        spare.labels["topology.kubernetes.io/zone"],
        "ap-northeast-2a"
    );
    assert!(
        !plan
            .node("a-1")
            .unwrap()
            .labels
            .contains_key("harness/spare")
    );
    // Nothing in topology-skew needs a controller-manager flag.
    assert!(plan.controller_manager_flags.is_empty());
}

/// Upstream's ratio computation (topologycache.go `SetNodes`): per zone, the sum of the ready
/// workers' allocatable millicores over the sum of all, as f64.
fn ratios(nodes: &[(String, u64)]) -> BTreeMap<String, f64> {
    let total: u64 = nodes.iter().map(|(_, cpu)| cpu).sum();
    let mut by_zone: BTreeMap<String, u64> = BTreeMap::new();
    for (zone, cpu) in nodes {
        *by_zone.entry(zone.clone()).or_default() += cpu;
    }
    by_zone
        .into_iter()
        .map(|(zone, cpu)| (zone, cpu as f64 / total as f64))
        .collect()
}

/// Workers as (zone, allocatable millicores).
type Workers = Vec<(String, u64)>;

/// Every set of workers the timeline goes through, in scenario terms and in kind terms.
fn worker_sets(scenario: &Scenario, plan: &ClusterPlan) -> Vec<(Workers, Workers)> {
    let mut current: Vec<(String, String, u64)> = scenario
        .cluster
        .nodes
        .iter()
        .filter(|n| n.role == NodeRole::Worker)
        .map(|n| (n.name.clone(), n.zone.clone(), n.allocatable_millicpu))
        .collect();
    let kind = |cpu: u64| plan.cpu_scale.allocatable(cpu);
    let snapshot = |nodes: &[(String, String, u64)]| {
        (
            nodes
                .iter()
                .map(|(_, z, c)| (z.clone(), *c))
                .collect::<Vec<_>>(),
            nodes
                .iter()
                .map(|(_, z, c)| (z.clone(), kind(*c)))
                .collect::<Vec<_>>(),
        )
    };
    let mut sets = vec![snapshot(&current)];
    for event in &scenario.timeline {
        match &event.action {
            Action::AddNode {
                zone,
                name,
                allocatable_millicpu,
                ..
            } => current.push((name.clone(), zone.clone(), *allocatable_millicpu)),
            Action::RemoveNode { node } => current.retain(|(n, _, _)| n != node),
            Action::SetAllocatableCpu {
                node,
                allocatable_millicpu,
            } => {
                for entry in current.iter_mut().filter(|(n, _, _)| n == node) {
                    entry.2 = *allocatable_millicpu;
                }
            }
            _ => continue,
        }
        sets.push(snapshot(&current));
    }
    sets
}

#[test]
fn zone_ratios_are_exact_on_hosts_from_2_to_64_cpus() {
    for path in [
        "scenarios/topology-skew.yaml",
        "scenarios/rollout-502.yaml",
        "scenarios/autoscaler-blind-spot.yaml",
        "harness/kind/tests/fixtures/node-churn.yaml",
    ] {
        let scenario = scenario(path);
        let largest = worker_sets(&scenario, &ClusterPlan::new(&scenario, 64).unwrap())
            .iter()
            .flat_map(|(s, _)| s.iter().map(|(_, c)| *c))
            .max()
            .unwrap();
        for host in 2..=64u32 {
            let plan = ClusterPlan::new(&scenario, host).unwrap();
            let host_m = u64::from(host) * 1000;
            assert!(plan.cpu_scale.is_exact(), "{path} on {host} CPUs");
            assert_eq!(
                plan.cpu_scale.is_identity(),
                largest <= host_m,
                "{path} on {host} CPUs: scaled only when the host is smaller than the largest node"
            );
            if largest > host_m {
                // The factor is the largest that keeps the values whole: one step more would
                // overflow the host or break a value.
                assert!(plan.cpu_scale.factor() * largest as f64 <= host_m as f64 + 1e-9);
            }
            for (scenario_set, kind_set) in worker_sets(&scenario, &plan) {
                assert_eq!(
                    ratios(&scenario_set),
                    ratios(&kind_set),
                    "{path} on {host} CPUs: zone ratios must be bit-identical"
                );
                for (_, cpu) in &kind_set {
                    assert!(*cpu <= host_m && *cpu >= KINDNET_CPU_REQUEST_MILLICPU);
                }
            }
            for node in &plan.nodes {
                if let NodeCpu::Shaped {
                    allocatable_millicpu,
                    reserved_millicpu,
                    ..
                } = node.cpu
                {
                    assert_eq!(allocatable_millicpu + reserved_millicpu, host_m);
                }
            }
        }
    }
}

#[test]
fn topology_skew_scales_by_a_quarter_on_two_cpus() {
    let plan = ClusterPlan::new(&scenario("scenarios/topology-skew.yaml"), 2).unwrap();
    assert_eq!(plan.cpu_scale.factor(), 0.25);
    assert_eq!(allocatable(&plan, "a-1"), 1000);
    assert_eq!(allocatable(&plan, "a-3"), 2000);
    // 4 + 4 vs 4 + 4 CPUs: 0.5 / 0.5, and 0.6667 / 0.3333 with the added node, as the
    // scenario's own numbers give.
    assert_eq!(
        plan.node("c-1").unwrap().cpu,
        NodeCpu::Shaped {
            scenario_millicpu: 4000,
            allocatable_millicpu: 1000,
            reserved_millicpu: 1000,
        }
    );
}

#[test]
fn node_churn_gets_flags_and_one_spare_per_distinct_addition() {
    let churn = scenario("harness/kind/tests/fixtures/node-churn.yaml");
    let plan = ClusterPlan::new(&churn, 8).unwrap();
    // 12 CPUs (the setAllocatableCpu target) exceed 8; values 3, 7, 12 have gcd 1000m, so the
    // step is floor(8000 / 12) = 666m per core.
    assert_eq!(allocatable(&plan, "a-1"), 1998);
    assert_eq!(allocatable(&plan, "a-2"), 4662);
    assert_eq!(plan.cpu_scale.allocatable(12_000), 7992);
    assert_eq!(
        plan.controller_manager_flags,
        BTreeMap::from([("node-monitor-grace-period".to_owned(), "20s".to_owned())])
    );
    // The control plane the scenario does not declare: no zone, no labels.
    let cp = &plan.nodes[0];
    assert_eq!(
        (cp.role, cp.scenario_name.as_deref(), cp.zone.as_deref()),
        (KindRole::ControlPlane, None, None)
    );
    assert!(cp.labels.is_empty());
    let secs = |s: &[u64]| {
        s.iter()
            .map(|s| Duration::from_secs(*s))
            .collect::<Vec<_>>()
    };
    let spares: Vec<(&str, Option<&str>, Vec<Duration>)> = plan
        .nodes
        .iter()
        .filter(|n| n.purpose == Purpose::Spare)
        .map(|n| (n.kind_name.as_str(), n.zone.as_deref(), n.added_at.clone()))
        .collect();
    assert_eq!(
        spares,
        [
            (
                "harness-node-churn-worker4",
                Some("zone-b"),
                secs(&[15, 25])
            ),
            ("harness-node-churn-worker5", Some("zone-a"), secs(&[35])),
        ]
    );
    assert_eq!(
        plan.node_added_at(Duration::from_secs(25))
            .unwrap()
            .kind_name,
        "harness-node-churn-worker4"
    );
}

#[test]
fn a_removed_node_added_back_unchanged_is_the_same_kind_node() {
    let scenario = churn_with(
        "    addNode: { zone: zone-a, name: b-2, allocatableCpu: \"3\" }",
        "    addNode: { zone: zone-a, name: b-2, allocatableCpu: \"3\" }\n  - at: 36s\n    removeNode: { node: a-1 }\n  - at: 37s\n    addNode: { zone: zone-a, name: a-1, allocatableCpu: \"3\" }",
    );
    let plan = ClusterPlan::new(&scenario, 8).unwrap();
    let a1 = plan.node_added_at(Duration::from_secs(37)).unwrap();
    assert_eq!(a1.kind_name, "harness-node-churn-worker");
    assert_eq!(a1.purpose, Purpose::Initial);
    assert_eq!(
        plan.nodes
            .iter()
            .filter(|n| n.purpose == Purpose::Spare)
            .count(),
        2
    );
}

#[test]
fn the_autoscaler_sets_the_hpa_flags() {
    let plan = ClusterPlan::new(&scenario("scenarios/autoscaler-blind-spot.yaml"), 4).unwrap();
    assert_eq!(
        plan.controller_manager_flags,
        BTreeMap::from([
            (
                "horizontal-pod-autoscaler-sync-period".to_owned(),
                "15s".to_owned()
            ),
            (
                "horizontal-pod-autoscaler-tolerance".to_owned(),
                "0.1".to_owned()
            ),
        ])
    );
}

fn churn_with(replace: &str, with: &str) -> Scenario {
    let text = std::fs::read_to_string(repo("harness/kind/tests/fixtures/node-churn.yaml"))
        .unwrap()
        .replace(replace, with);
    assert!(text.contains(with));
    load_scenario_str(&text, "node-churn.yaml", None).unwrap()
}

#[test]
fn nodes_kind_cannot_represent_are_refused_with_the_reason() {
    let zero = churn_with(
        r#"{ name: a-1, allocatableCpu: "3" }"#,
        r#"{ name: a-1, allocatableCpu: "0" }"#,
    );
    let err = ClusterPlan::new(&zero, 8).unwrap_err();
    assert_eq!(
        err,
        PlanError::ZeroCpu {
            what: "worker node `a-1`".to_owned()
        }
    );
    assert!(err.to_string().contains("kindnet"));

    // 200m beside a 400-CPU target: on 2 CPUs the small node would get 1m, on 64 CPUs 32m.
    let text = std::fs::read_to_string(repo("harness/kind/tests/fixtures/node-churn.yaml"))
        .unwrap()
        .replace(r#"allocatableCpu: "12""#, r#"allocatableCpu: "400""#)
        .replace(
            r#"{ name: a-1, allocatableCpu: "3" }"#,
            r#"{ name: a-1, allocatableCpu: "200m" }"#,
        );
    let skewed = load_scenario_str(&text, "node-churn.yaml", None).unwrap();
    match ClusterPlan::new(&skewed, 2).unwrap_err() {
        PlanError::BelowKindnet {
            what,
            allocatable,
            host_cpus,
            ..
        } => {
            assert_eq!(what, "worker node `a-1`");
            assert_eq!((allocatable, host_cpus), (1, 2));
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(ClusterPlan::new(&skewed, 64).is_err());

    assert_eq!(
        ClusterPlan::new(&skewed, 0).unwrap_err(),
        PlanError::NoHostCpus
    );
}

#[test]
fn node_names_that_are_not_label_values_are_refused() {
    let long = "n".repeat(64);
    let scenario = churn_with("name: a-1,", &format!("name: {long},"));
    match ClusterPlan::new(&scenario, 8).unwrap_err() {
        PlanError::Label { node, .. } => assert_eq!(node, "harness-node-churn-worker"),
        other => panic!("unexpected {other:?}"),
    }
}

/// `--cluster NAME`: the nodes of a cluster created under another name are named after it.
#[test]
fn a_reused_cluster_names_the_nodes_after_itself() {
    let plan = ClusterPlan::new(&scenario("scenarios/topology-skew.yaml"), 8).unwrap();
    let renamed = plan.renamed("harness-mine").unwrap();
    assert_eq!(renamed.cluster_name, "harness-mine");
    assert_eq!(renamed.context_name(), "kind-harness-mine");
    assert_eq!(
        renamed.node("cp-1").unwrap().kind_name,
        "harness-mine-control-plane"
    );
    assert_eq!(
        renamed.node("a-3").unwrap().kind_name,
        "harness-mine-worker5"
    );
    assert_eq!(renamed.nodes.len(), plan.nodes.len());
    assert!(
        plan.renamed(&format!("harness-{}", "x".repeat(60)))
            .is_err()
    );
}

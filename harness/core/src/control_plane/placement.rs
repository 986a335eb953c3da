//! Where the scheduler puts a new pod: node pinning (a nodeSelector / node-affinity stand-in),
//! the PodTopologySpread plugin's filter and score, and a least-allocated CPU score.
//!
//! Ported from kubernetes/kubernetes v1.34.0
//! `pkg/scheduler/framework/plugins/podtopologyspread/{plugin.go,filtering.go,scoring.go}`:
//! - hard constraints (`DoNotSchedule`) filter: for the node's domain,
//!   `skew = podsInDomain + 1 - min(podsInDomain over eligible domains)` must be `<= maxSkew`;
//!   eligible domains are those of nodes that pass the pod's node pinning and carry the key;
//! - soft constraints (`ScheduleAnyway`) score: `Σ podsInDomain × log(domains + 2)`, lower is
//!   better, normalised to 0..100 as upstream's NormalizeScore does (`100 × (max + min − s) / max`);
//! - with no constraints on the pod the system defaults apply (plugin.go
//!   `systemDefaultConstraints`): hostname maxSkew 3 and zone maxSkew 5, both ScheduleAnyway.
//!
//! The other default score plugins are reduced to NodeResourcesFit's LeastAllocated on CPU
//! (each pod requests [`POD_CPU_REQUEST_MILLIS`]); plugin weights are upstream's defaults
//! (PodTopologySpread 2, NodeResourcesFit 1). Ties between equal nodes are broken by a seeded
//! random choice, as `selectHost` picks uniformly among the best.

use std::collections::{BTreeMap, BTreeSet};

use rand::Rng;

/// CPU each pod requests, for the least-allocated score.
pub const POD_CPU_REQUEST_MILLIS: u64 = 100;

/// Node label keys a spread constraint can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpreadKey {
    /// `topology.kubernetes.io/zone`
    Zone,
    /// `kubernetes.io/hostname`
    Hostname,
}

/// One topologySpreadConstraint (the label selector is the Service's own pods).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spread {
    pub max_skew: u32,
    pub key: SpreadKey,
    /// `DoNotSchedule` (true) or `ScheduleAnyway` (false).
    pub hard: bool,
}

/// What the scheduler sees of a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CandidateNode {
    pub name: String,
    pub zone: String,
    pub allocatable_cpu_millis: u64,
    /// NotReady nodes carry the `node.kubernetes.io/not-ready:NoSchedule` taint.
    pub ready: bool,
    /// Control-plane nodes carry the `node-role.kubernetes.io/control-plane:NoSchedule` taint.
    pub control_plane: bool,
}

/// The pod's placement rules.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlacementRules {
    /// Only nodes in these zones (empty = any zone).
    pub zones: Vec<String>,
    /// Only these nodes (empty = any node).
    pub nodes: Vec<String>,
    /// The pod's topologySpreadConstraints; empty means the system defaults.
    pub spread: Vec<Spread>,
}

/// Why a pod could not be placed (the pod would stay Pending).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("0/{nodes} nodes are available: {reasons}")]
pub struct Unschedulable {
    pub nodes: usize,
    pub reasons: String,
}

fn system_defaults() -> Vec<Spread> {
    vec![
        Spread {
            max_skew: 3,
            key: SpreadKey::Hostname,
            hard: false,
        },
        Spread {
            max_skew: 5,
            key: SpreadKey::Zone,
            hard: false,
        },
    ]
}

fn domain(node: &CandidateNode, key: SpreadKey) -> &str {
    match key {
        SpreadKey::Zone => &node.zone,
        SpreadKey::Hostname => &node.name,
    }
}

/// Picks the node for one new pod. `existing` maps node name → the Service's pods already on it.
pub fn place_pod(
    nodes: &[CandidateNode],
    existing: &BTreeMap<String, u32>,
    rules: &PlacementRules,
    rng: &mut impl Rng,
) -> Result<String, Unschedulable> {
    let pinned = |n: &CandidateNode| {
        (rules.zones.is_empty() || rules.zones.contains(&n.zone))
            && (rules.nodes.is_empty() || rules.nodes.contains(&n.name))
    };
    let constraints = if rules.spread.is_empty() {
        system_defaults()
    } else {
        rules.spread.clone()
    };
    // Pods per domain, counted over nodes passing the pod's node pinning (nodeInclusionPolicy
    // Honor for affinity, the default), for each constraint.
    let eligible: Vec<&CandidateNode> = nodes.iter().filter(|n| pinned(n)).collect();
    let counts: Vec<BTreeMap<&str, u32>> = constraints
        .iter()
        .map(|c| {
            let mut per_domain = BTreeMap::new();
            for n in &eligible {
                *per_domain.entry(domain(n, c.key)).or_insert(0) +=
                    existing.get(&n.name).copied().unwrap_or(0);
            }
            per_domain
        })
        .collect();

    let mut reasons = BTreeSet::new();
    let mut feasible = Vec::new();
    for node in nodes {
        if node.control_plane {
            reasons
                .insert("node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }");
        } else if !node.ready {
            reasons.insert("node(s) had untolerated taint {node.kubernetes.io/not-ready: }");
        } else if !pinned(node) {
            reasons.insert("node(s) didn't match Pod's node affinity/selector");
        } else if !constraints.iter().zip(&counts).all(|(c, per_domain)| {
            !c.hard || {
                let min = per_domain.values().copied().min().unwrap_or(0);
                per_domain[domain(node, c.key)] + 1 - min <= c.max_skew
            }
        }) {
            reasons.insert("node(s) didn't match pod topology spread constraints");
        } else {
            feasible.push(node);
        }
    }
    if feasible.is_empty() {
        return Err(Unschedulable {
            nodes: nodes.len(),
            reasons: reasons.into_iter().collect::<Vec<_>>().join(", "),
        });
    }

    let spread_raw: Vec<f64> = feasible
        .iter()
        .map(|node| {
            constraints
                .iter()
                .zip(&counts)
                .filter(|(c, _)| !c.hard)
                .map(|(c, per_domain)| {
                    let weight = ((per_domain.len() + 2) as f64).ln();
                    f64::from(per_domain[domain(node, c.key)]) * weight
                })
                .sum()
        })
        .collect();
    let (min, max) = spread_raw
        .iter()
        .fold((f64::INFINITY, 0.0_f64), |(lo, hi), s| {
            (lo.min(*s), hi.max(*s))
        });
    let scores: Vec<f64> = feasible
        .iter()
        .zip(&spread_raw)
        .map(|(node, raw)| {
            let spread = if max == 0.0 {
                100.0
            } else {
                100.0 * (max + min - raw) / max
            };
            let requested = f64::from(existing.get(&node.name).copied().unwrap_or(0) + 1)
                * POD_CPU_REQUEST_MILLIS as f64;
            let alloc = node.allocatable_cpu_millis.max(1) as f64;
            let least_allocated = (100.0 * (alloc - requested) / alloc).max(0.0);
            2.0 * spread.round() + least_allocated.round()
        })
        .collect();
    let best = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let top: Vec<&&CandidateNode> = feasible
        .iter()
        .zip(&scores)
        .filter(|(_, s)| **s == best)
        .map(|(n, _)| n)
        .collect();
    Ok(top[rng.random_range(0..top.len())].name.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::SmallRng;

    fn node(name: &str, zone: &str) -> CandidateNode {
        CandidateNode {
            name: name.into(),
            zone: zone.into(),
            allocatable_cpu_millis: 4000,
            ready: true,
            control_plane: false,
        }
    }

    fn place_all(nodes: &[CandidateNode], rules: &PlacementRules, n: u32) -> BTreeMap<String, u32> {
        let mut rng = SmallRng::seed_from_u64(3);
        let mut existing = BTreeMap::new();
        for _ in 0..n {
            let chosen = place_pod(nodes, &existing, rules, &mut rng).unwrap();
            *existing.entry(chosen).or_insert(0) += 1;
        }
        existing
    }

    fn per_zone(nodes: &[CandidateNode], placed: &BTreeMap<String, u32>) -> BTreeMap<String, u32> {
        let mut out = BTreeMap::new();
        for n in nodes {
            *out.entry(n.zone.clone()).or_insert(0) += placed.get(&n.name).copied().unwrap_or(0);
        }
        out
    }

    #[test]
    fn zone_pinning_keeps_every_pod_in_the_zone() {
        let nodes = [
            node("a-1", "a"),
            node("a-2", "a"),
            node("c-1", "c"),
            node("c-2", "c"),
        ];
        let rules = PlacementRules {
            zones: vec!["c".into()],
            ..PlacementRules::default()
        };
        let placed = place_all(&nodes, &rules, 4);
        assert_eq!(per_zone(&nodes, &placed)["c"], 4);
        // System default hostname spreading: 2 + 2, not 4 + 0.
        assert_eq!(placed["c-1"], 2);
        assert_eq!(placed["c-2"], 2);
    }

    #[test]
    fn hard_zone_spread_balances_within_max_skew() {
        let nodes = [node("a-1", "a"), node("b-1", "b"), node("c-1", "c")];
        let rules = PlacementRules {
            spread: vec![Spread {
                max_skew: 1,
                key: SpreadKey::Zone,
                hard: true,
            }],
            ..PlacementRules::default()
        };
        let placed = place_all(&nodes, &rules, 7);
        let zones = per_zone(&nodes, &placed);
        let (lo, hi) = (zones.values().min().unwrap(), zones.values().max().unwrap());
        assert!(hi - lo <= 1, "{zones:?}");
        assert_eq!(zones.values().sum::<u32>(), 7);
    }

    #[test]
    fn hard_spread_filters_the_full_domain() {
        // Zone a already has 2 pods, zone c none: with maxSkew 1 only zone c is feasible.
        let nodes = [node("a-1", "a"), node("c-1", "c")];
        let existing = BTreeMap::from([("a-1".to_string(), 2)]);
        let rules = PlacementRules {
            spread: vec![Spread {
                max_skew: 1,
                key: SpreadKey::Zone,
                hard: true,
            }],
            ..PlacementRules::default()
        };
        for seed in 0..20 {
            let mut rng = SmallRng::seed_from_u64(seed);
            assert_eq!(
                place_pod(&nodes, &existing, &rules, &mut rng).unwrap(),
                "c-1"
            );
        }
    }

    #[test]
    fn unschedulable_lists_the_reasons() {
        let mut down = node("a-1", "a");
        down.ready = false;
        let mut cp = node("cp", "a");
        cp.control_plane = true;
        let rules = PlacementRules {
            zones: vec!["z".into()],
            ..PlacementRules::default()
        };
        let err = place_pod(
            &[down, cp, node("b-1", "b")],
            &BTreeMap::new(),
            &rules,
            &mut SmallRng::seed_from_u64(1),
        )
        .unwrap_err();
        assert_eq!(err.nodes, 3);
        assert!(err.reasons.contains("not-ready"), "{err}");
        assert!(err.reasons.contains("control-plane"), "{err}");
        assert!(err.reasons.contains("node affinity/selector"), "{err}");
    }
}

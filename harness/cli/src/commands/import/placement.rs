//! Where the Deployment's pods may run, as `service.placement`: the worker nodes its pod
//! template's `nodeSelector`, required node affinity and tolerations admit (a node's
//! `NoSchedule`/`NoExecute` taints the pods do not tolerate, or a cordoned node, keep them off),
//! written as `zones` when whole zones are in or out and as `nodes` otherwise; and its
//! `topologySpreadConstraints` on the zone or hostname key. What the scheduler model does not
//! read (preferred affinity, pod anti-affinity, other topology keys) is noted.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::bail;
use k8s_openapi::api::core::v1::{Node, NodeSelectorRequirement, PodSpec, Taint, Toleration};

use super::select::{requirement_matches, selector_matches};
use super::text::{Field, Note, NoteKind};

/// Taints the modelled control plane already stands for (readiness, the control-plane role).
const MODELLED_TAINTS: [&str; 4] = [
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
    "node-role.kubernetes.io/control-plane",
    "node-role.kubernetes.io/master",
];

/// A worker node as the placement sees it.
pub struct Worker<'a> {
    pub object: &'a Node,
    pub name: String,
    pub zone: String,
}

/// `service.placement`, or `None` when the pods may run anywhere, with notes.
pub fn placement(
    workers: &[Worker<'_>],
    pod: &PodSpec,
    pod_labels: &BTreeMap<String, String>,
    notes: &mut Vec<Note>,
) -> anyhow::Result<Option<Field>> {
    let mut parts = Vec::new();
    let eligible: Vec<&Worker> = workers.iter().filter(|w| admits(pod, w.object)).collect();
    if eligible.is_empty() {
        bail!(
            "no worker node admits the Deployment's pods (its nodeSelector, required node affinity and tolerations against the nodes' labels, taints and cordons): the scenario could schedule nothing"
        );
    }
    if eligible.len() < workers.len() {
        let zones_in: BTreeSet<&str> = eligible.iter().map(|w| w.zone.as_str()).collect();
        let whole_zones = workers.iter().all(|w| {
            zones_in.contains(w.zone.as_str()) == eligible.iter().any(|e| e.name == w.name)
        });
        if whole_zones {
            let list: Vec<&str> = zones_in.into_iter().collect();
            parts.push(format!("zones: [{}]", list.join(", ")));
        } else {
            parts.push("nodes:".to_owned());
            parts.extend(eligible.iter().map(|w| format!("  - {}", w.name)));
        }
        notes.push(Note {
            kind: NoteKind::Approximation,
            field: "service.placement".into(),
            text: format!(
                "{} of {} worker nodes admit the pods (nodeSelector, required node affinity, untolerated NoSchedule/NoExecute taints, cordons), written as the nodes or zones they may use",
                eligible.len(),
                workers.len()
            ),
        });
    }
    if let Some(affinity) = &pod.affinity {
        let preferred = affinity.node_affinity.as_ref().is_some_and(|a| {
            a.preferred_during_scheduling_ignored_during_execution
                .is_some()
        });
        if preferred || affinity.pod_affinity.is_some() || affinity.pod_anti_affinity.is_some() {
            notes.push(Note {
                kind: NoteKind::NotReproduced,
                field: "service.placement".into(),
                text: "preferred node affinity and pod (anti-)affinity are not modelled: the scheduler model spreads by topologySpreadConstraints (or Kubernetes' default spreading) and least-allocated CPU".into(),
            });
        }
    }
    let spread = spread_constraints(pod, pod_labels, notes);
    if !spread.is_empty() {
        parts.push("topologySpreadConstraints:".to_owned());
        parts.extend(spread.iter().map(|c| format!("  - {c}")));
    }
    Ok((!parts.is_empty()).then(|| Field::block("placement", parts)))
}

fn spread_constraints(
    pod: &PodSpec,
    pod_labels: &BTreeMap<String, String>,
    notes: &mut Vec<Note>,
) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for c in pod.topology_spread_constraints.iter().flatten() {
        let key_ok = matches!(
            c.topology_key.as_str(),
            "topology.kubernetes.io/zone" | "kubernetes.io/hostname"
        );
        if !key_ok {
            notes.push(Note {
                kind: NoteKind::NotReproduced,
                field: "service.placement.topologySpreadConstraints".into(),
                text: format!(
                    "the constraint on {} is left out: the scenario spreads by zone or hostname only",
                    c.topology_key
                ),
            });
            continue;
        }
        if !seen.insert((c.topology_key.clone(), c.when_unsatisfiable.clone())) {
            continue;
        }
        let own_pods = c
            .label_selector
            .as_ref()
            .is_none_or(|s| selector_matches(s, pod_labels));
        let extras = c.min_domains.is_some()
            || c.node_affinity_policy.is_some()
            || c.node_taints_policy.is_some()
            || c.match_label_keys.is_some();
        if !own_pods || extras {
            notes.push(Note {
                kind: NoteKind::Approximation,
                field: "service.placement.topologySpreadConstraints".into(),
                text: format!(
                    "the constraint on {} counts the Service's own pods with Kubernetes' default policies (its labelSelector, minDomains, nodeAffinityPolicy, nodeTaintsPolicy and matchLabelKeys are not read)",
                    c.topology_key
                ),
            });
        }
        out.push(format!(
            "{{ maxSkew: {}, topologyKey: {}, whenUnsatisfiable: {} }}",
            c.max_skew, c.topology_key, c.when_unsatisfiable
        ));
    }
    out
}

/// Whether the pod can be scheduled on `node` (labels, name, taints, cordon).
pub fn admits(pod: &PodSpec, node: &Node) -> bool {
    let labels = node.metadata.labels.clone().unwrap_or_default();
    let name = node.metadata.name.clone().unwrap_or_default();
    let selector_ok = pod
        .node_selector
        .as_ref()
        .is_none_or(|sel| sel.iter().all(|(k, v)| labels.get(k) == Some(v)));
    let required = pod
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|a| {
            a.required_during_scheduling_ignored_during_execution
                .as_ref()
        });
    let affinity_ok = required.is_none_or(|r| {
        r.node_selector_terms.iter().any(|term| {
            let exprs_ok = term
                .match_expressions
                .iter()
                .flatten()
                .all(|e| matches_requirement(e, &labels));
            let fields = BTreeMap::from([("metadata.name".to_owned(), name.clone())]);
            let fields_ok = term
                .match_fields
                .iter()
                .flatten()
                .all(|e| matches_requirement(e, &fields));
            exprs_ok && fields_ok
        })
    });
    let spec = node.spec.clone().unwrap_or_default();
    let cordoned = spec.unschedulable == Some(true);
    let taints_ok = spec
        .taints
        .iter()
        .flatten()
        .filter(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
        .filter(|t| !MODELLED_TAINTS.contains(&t.key.as_str()))
        .all(|t| {
            pod.tolerations
                .iter()
                .flatten()
                .any(|tol| tolerates(tol, t))
        });
    selector_ok && affinity_ok && taints_ok && !cordoned
}

fn matches_requirement(e: &NodeSelectorRequirement, labels: &BTreeMap<String, String>) -> bool {
    requirement_matches(&e.key, &e.operator, e.values.as_deref(), labels)
}

/// `Toleration.ToleratesTaint` (staging/src/k8s.io/api/core/v1/toleration.go, v1.34): an
/// empty effect or key matches any; then `Exists` tolerates whatever the value, `Equal` (also
/// the empty operator) compares the values, any other operator tolerates nothing.
pub fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    let effect_ok = toleration
        .effect
        .as_deref()
        .is_none_or(|e| e.is_empty() || e == taint.effect);
    let key = toleration.key.as_deref().unwrap_or("");
    let operator = toleration.operator.as_deref().unwrap_or("");
    let key_ok = key.is_empty() || key == taint.key;
    let value_ok = match operator {
        "Exists" => true,
        "Equal" | "" => {
            toleration.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or("")
        }
        _ => false,
    };
    effect_ok && key_ok && value_ok
}

//! The imported scenario checked before it is written: it must load as any scenario does (a
//! failure here is the import's bug, reported whole), and the scheduler model's placement at
//! load start is compared with where the cluster's EndpointSlices have ready endpoints, zone by
//! zone — hints and reachability depend on those counts, so a difference is said, not hidden.

use std::collections::BTreeMap;

use anyhow::anyhow;
use harness_core::plan::plan;
use harness_core::scenario::load_scenario_str;

use super::mapping::Imported;
use super::text::{Note, NoteKind};

/// The seed `harness plan` and `harness run` use by default.
const DEFAULT_SEED: u64 = 1;

/// Loads `text` and compares the model's placement with `imported.observed_endpoints`; returns
/// the note to add when they differ.
pub fn check(text: &str, imported: &Imported) -> anyhow::Result<Option<Note>> {
    let scenario = load_scenario_str(text, "<imported scenario>", None).map_err(|e| {
        anyhow!("the imported scenario does not load (a bug in `harness import`; please report it with the objects):\n{e}")
    })?;
    let planned = plan(&scenario, DEFAULT_SEED)
        .map_err(|e| anyhow!("the imported scenario cannot place its pods: {e}"))?;
    if imported.observed_endpoints.is_empty() {
        return Ok(None);
    }
    let mut modelled: BTreeMap<String, usize> = BTreeMap::new();
    if let Some(first) = planned.steps.first() {
        for pod in first.pods.values() {
            *modelled.entry(pod.zone.clone()).or_default() += 1;
        }
    }
    if modelled == imported.observed_endpoints {
        return Ok(None);
    }
    let show = |counts: &BTreeMap<String, usize>| {
        let zones: Vec<String> = counts.iter().map(|(z, n)| format!("{z} {n}")).collect();
        zones.join(", ")
    };
    Ok(Some(Note {
        kind: NoteKind::Approximation,
        field: "service.placement".into(),
        text: format!(
            "at load start the scheduler model places the pods as {} (seed {DEFAULT_SEED}) where the EndpointSlices have ready endpoints {}: zone CPU ratios match, but hints and reachability follow the pods per zone, so they will differ; pin the pods with placement.nodes or a zone spread constraint",
            show(&modelled),
            show(&imported.observed_endpoints)
        ),
    }))
}

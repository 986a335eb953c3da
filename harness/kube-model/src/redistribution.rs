// Ported from kubernetes/kubernetes v1.34 (release-1.34 line; source read at utils.go @40d99474ca4d).
// staging/src/k8s.io/endpointslice/topologycache/utils.go
// (getGivingAndReceivingZones, getMost, redistributeHints, getHintsByZone, serviceOverloaded,
// RemoveHintsFromSlices).
//! The arithmetic between the per-zone allocations and the hints on endpoints: which zones
//! give endpoints away and which receive them, moving hints from giving to receiving zones,
//! checking whether an existing slice's hints are still acceptable, and whether a Service is
//! overloaded under new zone ratios.
//!
//! Determinism: upstream iterates Go maps (random order) when it picks the zone with the most
//! surplus or need (`getMost`, ties) and when it picks which receiving zone an endpoint goes to.
//! Here every map is a `BTreeMap`, so ties go to the lexicographically first zone and receiving
//! zones are served in name order. The number of hints each zone ends up with is what upstream
//! guarantees (and what its tests assert) whenever no two zones tie exactly; with an exact tie
//! upstream may pick either zone on a given run, this model always picks the first by name.

use std::collections::BTreeMap;

use super::topology_cache::{Allocation, OVERLOAD_THRESHOLD};
use super::types::{EndpointSlice, Hints, SliceInfo};

/// Hints (or ready endpoints) counted per zone (upstream `EndpointZoneInfo`).
pub type EndpointZoneInfo = BTreeMap<String, i64>;

/// How many endpoints each zone should give away and how many each should receive, from the
/// desired allocations and the hints allocated so far (upstream `getGivingAndReceivingZones`).
pub fn giving_and_receiving_zones(
    allocations: &BTreeMap<String, Allocation>,
    allocated: &EndpointZoneInfo,
) -> (BTreeMap<String, usize>, BTreeMap<String, usize>) {
    // 1. The exact surplus or need of every zone.
    let mut giving_desired: BTreeMap<String, f64> = BTreeMap::new();
    let mut receiving_desired: BTreeMap<String, f64> = BTreeMap::new();
    for (zone, allocation) in allocations {
        let have = allocated.get(zone).copied().unwrap_or(0) as f64;
        let target = allocation.desired;
        if have > target {
            giving_desired.insert(zone.clone(), have - target);
        } else if have < target {
            receiving_desired.insert(zone.clone(), target - have);
        }
    }
    // 2. Turn them into whole endpoints: repeatedly move one endpoint from the zone with the
    //    largest surplus to the zone with the largest need, until either side runs short.
    let mut giving = BTreeMap::new();
    let mut receiving = BTreeMap::new();
    while let (Some((give_zone, to_give)), Some((receive_zone, to_receive))) =
        (most(&giving_desired), most(&receiving_desired))
    {
        if (to_give < 1.0 && to_receive < 1.0) || to_give < 0.5 || to_receive < 0.5 {
            break;
        }
        *giving.entry(give_zone.clone()).or_insert(0) += 1;
        *giving_desired
            .get_mut(&give_zone)
            .expect("zone came from this map") -= 1.0;
        *receiving.entry(receive_zone.clone()).or_insert(0) += 1;
        *receiving_desired
            .get_mut(&receive_zone)
            .expect("zone came from this map") -= 1.0;
    }
    (giving, receiving)
}

/// The zone with the largest strictly positive value (upstream `getMost`; ties: first by name).
fn most(zones: &BTreeMap<String, f64>) -> Option<(String, f64)> {
    let mut best: Option<(&String, f64)> = None;
    for (zone, &value) in zones {
        if value > best.map_or(0.0, |(_, v)| v) {
            best = Some((zone, value));
        }
    }
    best.map(|(z, v)| (z.clone(), v))
}

/// Re-points same-zone hints of ready endpoints in giving zones to receiving zones, walking
/// the slices and their endpoints in order (upstream `redistributeHints`). Returns the change
/// in hint count per zone. Hints of not-ready endpoints are left as they are: upstream assigns
/// `nil` to the loop's copy of the endpoint, which does not touch the slice.
pub fn redistribute_hints<'a>(
    slices: impl IntoIterator<Item = &'a mut EndpointSlice>,
    giving: &mut BTreeMap<String, usize>,
    receiving: &mut BTreeMap<String, usize>,
) -> BTreeMap<String, i64> {
    let mut changes: BTreeMap<String, i64> = BTreeMap::new();
    for slice in slices {
        for endpoint in &mut slice.endpoints {
            if !endpoint.controller_ready() {
                continue;
            }
            if giving.is_empty() || receiving.is_empty() {
                return changes;
            }
            let Some(zone) = endpoint.zone.clone().filter(|z| !z.is_empty()) else {
                // AddHints already rejected endpoints without a zone.
                continue;
            };
            let Some(&to_give) = giving.get(&zone) else {
                continue;
            };
            if to_give == 0 {
                continue;
            }
            let Some((receive_zone, &to_receive)) = receiving.iter().find(|(_, n)| **n > 0) else {
                continue;
            };
            let receive_zone = receive_zone.clone();
            endpoint.hints = Some(Hints::zone(&receive_zone));
            decrement_or_remove(giving, &zone, to_give);
            decrement_or_remove(receiving, &receive_zone, to_receive);
            *changes.entry(receive_zone).or_insert(0) += 1;
            *changes.entry(zone).or_insert(0) -= 1;
        }
    }
    changes
}

fn decrement_or_remove(map: &mut BTreeMap<String, usize>, zone: &str, current: usize) {
    if current == 1 {
        map.remove(zone);
    } else if let Some(n) = map.get_mut(zone) {
        *n -= 1;
    }
}

/// Hints per zone carried by an existing slice, or `None` when the slice must be rewritten
/// (upstream `getHintsByZone`): a ready endpoint without zone hints, a hint for a zone that no
/// longer gets an allocation, or hints that would push a zone past its maximum.
pub fn hints_by_zone(
    slice: &EndpointSlice,
    allocated: &EndpointZoneInfo,
    allocations: &BTreeMap<String, Allocation>,
) -> Option<EndpointZoneInfo> {
    let mut by_zone = EndpointZoneInfo::new();
    for endpoint in slice.endpoints.iter().filter(|e| e.controller_ready()) {
        let zones = endpoint.for_zones();
        if zones.is_empty() {
            return None;
        }
        for zone in zones {
            if !allocations.contains_key(zone) {
                return None;
            }
            *by_zone.entry(zone.clone()).or_insert(0) += 1;
        }
    }
    for (zone, hints) in &by_zone {
        let already = allocated.get(zone).copied().unwrap_or(0);
        match allocations.get(zone) {
            Some(allocation) if hints + already <= allocation.maximum => {}
            _ => return None,
        }
    }
    Some(by_zone)
}

/// Whether a Service's hint counts leave some zone below its minimum under `ratios`
/// (upstream `serviceOverloaded`). An empty count never is; empty ratios always are.
pub fn service_overloaded(counts: &EndpointZoneInfo, ratios: &BTreeMap<String, f64>) -> bool {
    if counts.is_empty() {
        return false;
    }
    if ratios.is_empty() {
        return true;
    }
    let total: f64 = counts.values().map(|&n| n as f64).sum();
    ratios.iter().any(|(zone, ratio)| match counts.get(zone) {
        None => true,
        Some(&have) => {
            let minimum = (total * ratio * (1.0 / (1.0 + OVERLOAD_THRESHOLD))).ceil();
            (have as f64) < minimum
        }
    })
}

/// Removes every hint from the slices about to be created or updated, and moves unchanged
/// slices that carry any hint into the update list with their hints removed (upstream
/// `RemoveHintsFromSlices`).
pub fn remove_hints_from_slices(si: &mut SliceInfo) {
    for endpoint in si
        .allocatable_slices_mut()
        .flat_map(|s| s.endpoints.iter_mut())
    {
        endpoint.hints = None;
    }
    let unchanged = std::mem::take(&mut si.unchanged);
    for mut slice in unchanged {
        if slice.endpoints.iter().any(|e| e.hints.is_some()) {
            for endpoint in &mut slice.endpoints {
                endpoint.hints = None;
            }
            si.to_update.push(slice);
        } else {
            si.unchanged.push(slice);
        }
    }
}

// Ported from kubernetes/kubernetes v1.34 (release-1.34 line; source read at topologycache.go @40d99474ca4d, sliceinfo.go @008b3652959c).
// staging/src/k8s.io/endpointslice/topologycache/topologycache.go (AddHints) and
// staging/src/k8s.io/endpointslice/topologycache/sliceinfo.go (getAllocatedHintsByZone).
//! Assigning `hints.forZones` for `service.kubernetes.io/topology-mode: Auto`: compute the
//! allocations, keep existing slices whose hints are still acceptable, give every ready
//! endpoint of the other slices a hint for its own zone, then move surplus hints from zones
//! with too many endpoints to zones with too few. Any failure removes all hints and yields a
//! `TopologyAwareHintsDisabled` event; hints appearing for a Service that had none yields
//! `TopologyAwareHintsEnabled`.

use super::events::{Event, messages};
use super::redistribution::{
    EndpointZoneInfo, giving_and_receiving_zones, hints_by_zone, redistribute_hints,
    remove_hints_from_slices,
};
use super::topology_cache::{Allocation, TopologyCache};
use super::types::{Hints, SliceInfo};
use std::collections::BTreeMap;

impl TopologyCache {
    /// Adds or updates zone hints on the slices of `si` (upstream `AddHints`). The slices are
    /// modified in place: unchanged slices whose hints must change move to `to_update`.
    /// Returns the events the controller records on the Service, messages already carrying the
    /// `", addressType: X"` suffix.
    pub fn add_hints(&mut self, si: &mut SliceInfo) -> Vec<Event> {
        let total_ready = si.total_ready_endpoints();
        let allocations = match self.allocations(total_ready) {
            Ok(allocations) => allocations,
            Err(event) => return self.disable(si, event),
        };

        let mut allocated = allocated_hints_by_zone(si, &allocations);

        // Step 1: every ready endpoint of the slices being created or updated starts with a
        // hint for its own zone. (Hints on not-ready endpoints are left untouched: upstream
        // clears a loop copy, not the slice.)
        let mut missing_zone = false;
        for endpoint in si
            .allocatable_slices_mut()
            .flat_map(|s| s.endpoints.iter_mut())
        {
            if !endpoint.controller_ready() {
                continue;
            }
            let Some(zone) = endpoint.zone.clone().filter(|z| !z.is_empty()) else {
                missing_zone = true;
                break;
            };
            *allocated.entry(zone.clone()).or_insert(0) += 1;
            endpoint.hints = Some(Hints::zone(&zone));
        }
        if missing_zone {
            return self.disable(si, Event::disabled(messages::NO_ZONE_SPECIFIED));
        }

        // Step 2: which zones have endpoints to spare and which need more.
        let (mut giving, mut receiving) = giving_and_receiving_zones(&allocations, &allocated);

        // Step 3: move hints accordingly.
        let changes = redistribute_hints(si.allocatable_slices_mut(), &mut giving, &mut receiving);
        for (zone, diff) in changes {
            *allocated.entry(zone).or_insert(0) += diff;
        }

        if allocated.is_empty() {
            return self.disable(si, Event::disabled(messages::NO_ALLOCATED_HINTS_FOR_ZONES));
        }

        let had_hints = self.has_populated_hints(&si.service_key);
        self.set_hints(&si.service_key, si.address_type, allocated);
        if had_hints {
            Vec::new()
        } else {
            vec![
                Event::enabled(messages::TOPOLOGY_AWARE_HINTS_ENABLED)
                    .with_address_type(si.address_type),
            ]
        }
    }

    /// The common failure path: record the event, forget the Service's hints, strip the slices.
    fn disable(&mut self, si: &mut SliceInfo, event: Event) -> Vec<Event> {
        self.remove_hints(&si.service_key, si.address_type);
        remove_hints_from_slices(si);
        vec![event.with_address_type(si.address_type)]
    }
}

/// Sums the hints of unchanged slices that may keep them, and moves every unchanged slice
/// whose hints are no longer acceptable into `to_update` (upstream `getAllocatedHintsByZone`).
fn allocated_hints_by_zone(
    si: &mut SliceInfo,
    allocations: &BTreeMap<String, Allocation>,
) -> EndpointZoneInfo {
    let mut allocated = EndpointZoneInfo::new();
    let unchanged = std::mem::take(&mut si.unchanged);
    for slice in unchanged {
        match hints_by_zone(&slice, &allocated, allocations) {
            None => si.to_update.push(slice),
            Some(by_zone) => {
                for (zone, n) in by_zone {
                    *allocated.entry(zone).or_insert(0) += n;
                }
                si.unchanged.push(slice);
            }
        }
    }
    allocated
}

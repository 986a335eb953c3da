//! Sweeps the first zone's share of allocatable CPU and runs the topology-hints model at each
//! step, to show where Topology Aware Routing switches hints on and off for a fixed layout of
//! ready endpoints across zones: the flapping bands of the skew incident.
//!
//! Each step builds one ready worker node per zone: the first zone gets `share` of the total
//! allocatable CPU, the other zones split the rest evenly (remainder millicores go to the
//! earliest zones). Ratios then come out of the same millicore division the controller does,
//! so a step reproduces exactly what a cluster with that CPU layout would get. Each step is a
//! fresh controller reconciling slices without hints, with `topology-mode: Auto`.

use std::collections::BTreeMap;

use serde::Serialize;
use thiserror::Error;

use super::reconcile::{ControllerOptions, HintsInput, ServiceTopology, compute_hints};
use super::topology_cache::minimum_endpoints;
use super::types::{AddressType, Endpoint, EndpointSlice, Node};

/// Total allocatable CPU of the synthetic cluster, in millicores (a million cores, so shares
/// down to 1e-9 map to whole millicores).
const TOTAL_CPU_MILLIS: u64 = 1_000_000_000_000;

/// Why a sweep cannot run.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SweepError {
    #[error("at least two zones are needed, got {0}")]
    TooFewZones(usize),
    #[error("zone {0:?} is listed twice")]
    DuplicateZone(String),
    #[error("zone names must not be empty")]
    EmptyZone,
    #[error("endpoints are placed in zone {0:?}, which is not among the zones")]
    UnknownZone(String),
    #[error("step must be greater than 0 and at most 0.5, got {0}")]
    BadStep(f64),
}

/// The model's answer at one share of the first zone.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SweepPoint {
    /// The first zone's share of allocatable CPU.
    pub share: f64,
    pub hints_enabled: bool,
    /// How many ready endpoints are hinted for each zone (empty when hints are off).
    pub hints_per_zone: BTreeMap<String, usize>,
    /// Each zone's minimum, `ceil(ratio * endpoints / 1.2)`, from the ratios the model used.
    pub minimums: BTreeMap<String, i64>,
    /// The event the reconcile records (reason and message), if any.
    pub reason: Option<String>,
    pub message: Option<String>,
}

/// Consecutive sweep points with the same answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Band {
    pub from: f64,
    pub to: f64,
    pub hints_enabled: bool,
    pub hints_per_zone: BTreeMap<String, usize>,
    pub minimums: BTreeMap<String, i64>,
    pub reason: Option<String>,
    pub message: Option<String>,
}

/// Runs the model for shares `step, 2*step, ...` below 1 of the first zone in `zones`.
pub fn sweep_first_zone_share(
    zones: &[String],
    endpoints_per_zone: &BTreeMap<String, usize>,
    step: f64,
) -> Result<Vec<SweepPoint>, SweepError> {
    validate(zones, endpoints_per_zone, step)?;
    let slices = vec![EndpointSlice::new(
        "sweep",
        layout(zones, endpoints_per_zone),
    )];
    let total: usize = endpoints_per_zone.values().sum();
    let service = ServiceTopology::topology_auto();
    let mut points = Vec::new();
    let mut i = 1u64;
    loop {
        let share = round9(i as f64 * step);
        if share >= 1.0 - 1e-9 {
            break;
        }
        let nodes = nodes_for_share(zones, share);
        let outcome = compute_hints(HintsInput {
            nodes: &nodes,
            service_key: "sweep/svc",
            service: &service,
            address_type: AddressType::IPv4,
            slices: slices.clone(),
            previously_populated: false,
            options: ControllerOptions::default(),
        });
        let event = outcome.events.first();
        let minimums = outcome
            .zone_cpu_ratios
            .iter()
            .flatten()
            .map(|(zone, ratio)| (zone.clone(), minimum_endpoints(*ratio, total)))
            .collect();
        points.push(SweepPoint {
            minimums,
            share,
            hints_enabled: outcome.hints_enabled,
            hints_per_zone: if outcome.hints_enabled {
                outcome.hints_per_zone()
            } else {
                BTreeMap::new()
            },
            reason: event.map(|e| e.reason.clone()),
            message: event.map(|e| e.message.clone()),
        });
        i += 1;
    }
    Ok(points)
}

/// Groups consecutive points with the same state, hint counts and event into bands.
pub fn bands(points: &[SweepPoint]) -> Vec<Band> {
    let mut bands: Vec<Band> = Vec::new();
    for p in points {
        match bands.last_mut() {
            Some(b)
                if b.hints_enabled == p.hints_enabled
                    && b.hints_per_zone == p.hints_per_zone
                    && b.minimums == p.minimums
                    && b.message == p.message =>
            {
                b.to = p.share;
            }
            _ => bands.push(Band {
                from: p.share,
                to: p.share,
                hints_enabled: p.hints_enabled,
                hints_per_zone: p.hints_per_zone.clone(),
                minimums: p.minimums.clone(),
                reason: p.reason.clone(),
                message: p.message.clone(),
            }),
        }
    }
    bands
}

/// Ranges of the share where hints are on (`true`) or off (`false`), ignoring counts.
pub fn on_off_ranges(points: &[SweepPoint]) -> Vec<(f64, f64, bool)> {
    let mut ranges: Vec<(f64, f64, bool)> = Vec::new();
    for p in points {
        match ranges.last_mut() {
            Some(r) if r.2 == p.hints_enabled => r.1 = p.share,
            _ => ranges.push((p.share, p.share, p.hints_enabled)),
        }
    }
    ranges
}

fn validate(
    zones: &[String],
    endpoints: &BTreeMap<String, usize>,
    step: f64,
) -> Result<(), SweepError> {
    if zones.len() < 2 {
        return Err(SweepError::TooFewZones(zones.len()));
    }
    for (i, zone) in zones.iter().enumerate() {
        if zone.is_empty() {
            return Err(SweepError::EmptyZone);
        }
        if zones[..i].contains(zone) {
            return Err(SweepError::DuplicateZone(zone.clone()));
        }
    }
    if let Some(unknown) = endpoints.keys().find(|z| !zones.contains(z)) {
        return Err(SweepError::UnknownZone(unknown.clone()));
    }
    if !(step > 0.0 && step <= 0.5) {
        return Err(SweepError::BadStep(step));
    }
    Ok(())
}

fn round9(x: f64) -> f64 {
    (x * 1e9).round() / 1e9
}

/// Ready endpoints, `n` per zone in zone order, named 10.0.<zone>.<n>.
fn layout(zones: &[String], endpoints: &BTreeMap<String, usize>) -> Vec<Endpoint> {
    let mut out = Vec::new();
    for (zi, zone) in zones.iter().enumerate() {
        for n in 0..endpoints.get(zone).copied().unwrap_or(0) {
            out.push(Endpoint::new(
                &format!("10.{}.{}.{}", zi / 256, zi % 256, n + 1),
                Some(zone),
                true,
            ));
        }
    }
    out
}

/// One node per zone: the first holds `share` of the CPU, the rest split the remainder.
fn nodes_for_share(zones: &[String], share: f64) -> Vec<Node> {
    let first = (share * TOTAL_CPU_MILLIS as f64).round() as u64;
    let rest = TOTAL_CPU_MILLIS - first;
    let others = (zones.len() - 1) as u64;
    zones
        .iter()
        .enumerate()
        .map(|(i, zone)| {
            let cpu = if i == 0 {
                first
            } else {
                rest / others + u64::from(((i - 1) as u64) < rest % others)
            };
            Node::worker(&format!("node-{zone}"), zone, cpu)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zones(z: &[&str]) -> Vec<String> {
        z.iter().map(|s| s.to_string()).collect()
    }

    fn layout(pairs: &[(&str, usize)]) -> BTreeMap<String, usize> {
        pairs.iter().map(|(z, n)| (z.to_string(), *n)).collect()
    }

    #[test]
    fn four_endpoints_two_zones_flap_in_the_incident_bands() {
        let points = sweep_first_zone_share(
            &zones(&["2a", "2c"]),
            &layout(&[("2a", 2), ("2c", 2)]),
            0.01,
        )
        .unwrap();
        assert_eq!(points.len(), 99);
        let ranges = on_off_ranges(&points);
        assert_eq!(
            ranges,
            vec![
                (0.01, 0.09, false),
                (0.1, 0.3, true),
                (0.31, 0.39, false),
                (0.4, 0.6, true),
                (0.61, 0.69, false),
                (0.7, 0.9, true),
                (0.91, 0.99, false),
            ]
        );
        let at = |share: f64| {
            points
                .iter()
                .find(|p| (p.share - share).abs() < 1e-9)
                .unwrap()
        };
        assert_eq!(
            at(0.65).minimums,
            layout(&[("2a", 3), ("2c", 2)])
                .into_iter()
                .map(|(z, n)| (z, n as i64))
                .collect()
        );
        assert_eq!(at(0.5).hints_per_zone, layout(&[("2a", 2), ("2c", 2)]));
        assert_eq!(at(0.8).hints_per_zone, layout(&[("2a", 3), ("2c", 1)]));
        assert!(
            at(0.65)
                .message
                .as_deref()
                .unwrap()
                .ends_with("(4 endpoints, 2 zones), addressType: IPv4")
        );
    }

    #[test]
    fn all_pods_in_one_zone_hands_some_to_the_other() {
        // The incident's layout: every pod in 2c; at 50/50 two of them are hinted for 2a.
        let points =
            sweep_first_zone_share(&zones(&["2a", "2c"]), &layout(&[("2c", 4)]), 0.05).unwrap();
        let half = points
            .iter()
            .find(|p| (p.share - 0.5).abs() < 1e-9)
            .unwrap();
        assert!(half.hints_enabled);
        assert_eq!(half.hints_per_zone, layout(&[("2a", 2), ("2c", 2)]));
    }

    #[test]
    fn three_zones_split_the_rest_evenly() {
        let points = sweep_first_zone_share(
            &zones(&["a", "b", "c"]),
            &layout(&[("a", 2), ("b", 2), ("c", 2)]),
            0.1,
        )
        .unwrap();
        let third = points
            .iter()
            .find(|p| (p.share - 0.3).abs() < 1e-9)
            .unwrap();
        assert!(third.hints_enabled);
        assert_eq!(
            third.minimums,
            BTreeMap::from([("a".into(), 2), ("b".into(), 2), ("c".into(), 2)])
        );
        let nodes = nodes_for_share(&zones(&["a", "b", "c"]), 0.3);
        assert_eq!(
            nodes
                .iter()
                .map(|n| n.allocatable_cpu_millis.unwrap())
                .sum::<u64>(),
            TOTAL_CPU_MILLIS
        );
    }

    #[test]
    fn rejects_layouts_it_cannot_sweep() {
        let two = zones(&["a", "b"]);
        assert_eq!(
            sweep_first_zone_share(&zones(&["a"]), &layout(&[]), 0.1),
            Err(SweepError::TooFewZones(1))
        );
        assert_eq!(
            sweep_first_zone_share(&zones(&["a", "a"]), &layout(&[]), 0.1),
            Err(SweepError::DuplicateZone("a".into()))
        );
        assert_eq!(
            sweep_first_zone_share(&two, &layout(&[("c", 1)]), 0.1),
            Err(SweepError::UnknownZone("c".into()))
        );
        assert_eq!(
            sweep_first_zone_share(&two, &layout(&[]), 0.0),
            Err(SweepError::BadStep(0.0))
        );
        assert_eq!(
            sweep_first_zone_share(&two, &layout(&[]), 0.6),
            Err(SweepError::BadStep(0.6))
        );
    }
}

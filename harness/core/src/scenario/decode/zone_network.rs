//! Checks and builds a `zoneNetwork` action: `from` a cluster zone, `to` another or `all`;
//! exactly one of a degradation (`delay` with optional `jitter` ≤ `delay`, and/or `loss` in
//! [0, 1)), `partition: true` or `clear: true`; no fault on a link that already has one (clear
//! it first), and no `clear` where nothing is active. The active faults are carried along the
//! timeline by the caller.

use std::collections::BTreeMap;
use std::time::Duration;

use super::super::diagnostic::Problems;
use super::super::format::ZoneNetworkSpec;
use super::super::model::{Action, Link, ZoneFault, ZoneNetworkChange, ZoneScope};
use super::super::path::FieldPath;
use super::duration;

/// The faults active on each link, with the time of the entry that set them.
pub(super) type ActiveFaults = BTreeMap<Link, String>;

/// Builds the action at `at` (its text); `zones` is `None` when `cluster` could not be read.
pub(super) fn build(
    spec: &ZoneNetworkSpec,
    path: &FieldPath,
    at: &str,
    zones: Option<&[String]>,
    active: &mut ActiveFaults,
    problems: &mut Problems<'_>,
) -> Option<Action> {
    let from = spec.from.0.clone();
    let to = match spec.to.0.as_str() {
        "all" => ZoneScope::All,
        zone => ZoneScope::Zone(zone.to_owned()),
    };
    if let Some(zones) = zones {
        let known = |zone: &str| zones.iter().any(|z| z == zone);
        if !known(&from) {
            problems.at(
                &path.key("from"),
                format!(
                    "zone `{from}` is not a cluster zone; cluster zones are: {}",
                    zones.join(", ")
                ),
            );
        }
        if zones.iter().any(|z| z == "all") {
            problems.at(
                &path.key("to"),
                "a cluster zone is named `all`, which `to: all` means every other zone: rename the zone",
            );
        }
        match &to {
            ZoneScope::Zone(z) if z == &from => problems.at(
                &path.key("to"),
                format!("`to` is `from` ({from}): a fault is between two zones; name another zone or `all`"),
            ),
            ZoneScope::Zone(z) if !known(z) => problems.at(
                &path.key("to"),
                format!(
                    "zone `{z}` is not a cluster zone; cluster zones are: {}, or `all` for every zone but `from`",
                    zones.join(", ")
                ),
            ),
            ZoneScope::All if zones.len() < 2 => problems.at(
                &path.key("to"),
                "`all` needs another zone: the cluster has one",
            ),
            _ => {}
        }
    }
    let fault = fault(spec, path, problems)?;
    let change = ZoneNetworkChange { from, to, fault };
    if let Some(zones) = zones {
        let links = change.links(zones);
        let busy: Vec<String> = links
            .iter()
            .filter_map(|l| {
                active
                    .get(l)
                    .map(|since| format!("{} ↔ {} (since {since})", l.0, l.1))
            })
            .collect();
        match fault {
            ZoneFault::Clear if busy.is_empty() => problems.at(
                &path.key("clear"),
                format!(
                    "no fault is active between {} and {} at {at}: nothing to clear",
                    change.from, change.to
                ),
            ),
            ZoneFault::Clear => {
                for l in &links {
                    active.remove(l);
                }
            }
            _ if !busy.is_empty() => problems.at(
                path,
                format!(
                    "overlapping faults: {} already {} a fault; end it first with `zoneNetwork: {{ from: …, to: …, clear: true }}`",
                    busy.join(", "),
                    if busy.len() == 1 { "has" } else { "have" }
                ),
            ),
            _ => {
                for l in links {
                    active.insert(l, at.to_owned());
                }
            }
        }
    }
    Some(Action::ZoneNetwork(change))
}

fn fault(
    spec: &ZoneNetworkSpec,
    path: &FieldPath,
    problems: &mut Problems<'_>,
) -> Option<ZoneFault> {
    let degrade = spec.delay.is_some() || spec.jitter.is_some() || spec.loss.is_some();
    let partition = spec.partition == Some(true);
    let clear = spec.clear == Some(true);
    let chosen = [degrade, partition, clear].iter().filter(|b| **b).count();
    if chosen != 1 {
        problems.at(
            path,
            if chosen == 0 {
                "say what happens: `delay` (with optional `jitter`) and/or `loss`, or `partition: true`, or `clear: true`"
            } else {
                "one fault per entry: a degradation (`delay`, `jitter`, `loss`), `partition: true` or `clear: true`, not several"
            },
        );
        return None;
    }
    if partition {
        return Some(ZoneFault::Partition);
    }
    if clear {
        return Some(ZoneFault::Clear);
    }
    let delay = match &spec.delay {
        Some(text) => duration(problems, &path.key("delay"), text)?,
        None => Duration::ZERO,
    };
    let jitter = match &spec.jitter {
        Some(text) => duration(problems, &path.key("jitter"), text)?,
        None => Duration::ZERO,
    };
    if jitter > delay {
        problems.at(
            &path.key("jitter"),
            "jitter is at most `delay` (a packet is never sent before it was): raise delay or lower jitter",
        );
    }
    let loss = spec.loss.unwrap_or(0.0);
    if !(0.0..1.0).contains(&loss) {
        problems.at(
            &path.key("loss"),
            format!("{loss} is not a share of packets: write a number from 0 up to (not including) 1, e.g. 0.01 for 1%"),
        );
        return None;
    }
    if delay.is_zero() && loss == 0.0 {
        problems.at(
            path,
            "a degradation of nothing: give `delay` above 0s or `loss` above 0",
        );
        return None;
    }
    Some(ZoneFault::Degrade {
        delay,
        jitter,
        loss_ppm: (loss * 1e6).round() as u32,
    })
}

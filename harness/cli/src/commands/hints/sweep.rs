//! `harness hints sweep`: for a fixed layout of ready endpoints across zones, sweeps the first
//! zone's share of allocatable CPU and prints where Topology Aware Routing (topology-mode Auto)
//! switches hints on and off, with the per-zone minimums that decide it and the hint counts.

use std::collections::BTreeMap;
use std::fmt::Write;

use anyhow::{anyhow, bail};
use kube_model::OVERLOAD_THRESHOLD;
use kube_model::sweep::{Band, SweepPoint, bands, on_off_ranges, sweep_first_zone_share};
use serde::Serialize;

use super::render::table;

/// Parses `a=2,b=2` into zone -> count.
pub fn parse_endpoints(spec: &str) -> anyhow::Result<BTreeMap<String, usize>> {
    let mut out = BTreeMap::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (zone, count) = part
            .split_once('=')
            .ok_or_else(|| anyhow!("--endpoints: {part:?} is not ZONE=COUNT (e.g. 2a=2,2c=2)"))?;
        let count: usize = count.trim().parse().map_err(|_| {
            anyhow!("--endpoints: count {count:?} for zone {zone:?} is not a whole number")
        })?;
        if out.insert(zone.trim().to_owned(), count).is_some() {
            bail!("--endpoints: zone {zone:?} is given twice");
        }
    }
    Ok(out)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Range {
    from: f64,
    to: f64,
    hints_enabled: bool,
}

/// The sweep result as printed with `--output json`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SweepReport {
    zones: Vec<String>,
    endpoints: BTreeMap<String, usize>,
    step: f64,
    overload_threshold: f64,
    ranges: Vec<Range>,
    bands: Vec<Band>,
    points: Vec<SweepPoint>,
}

/// Runs the sweep; errors are about the arguments.
pub fn build(
    zones: Vec<String>,
    endpoints: BTreeMap<String, usize>,
    step: f64,
) -> anyhow::Result<SweepReport> {
    let points = sweep_first_zone_share(&zones, &endpoints, step).map_err(|e| anyhow!("{e}"))?;
    let ranges = on_off_ranges(&points)
        .into_iter()
        .map(|(from, to, hints_enabled)| Range {
            from,
            to,
            hints_enabled,
        })
        .collect();
    Ok(SweepReport {
        zones,
        endpoints,
        step,
        overload_threshold: OVERLOAD_THRESHOLD,
        ranges,
        bands: bands(&points),
        points,
    })
}

/// Renders the sweep as text.
pub fn text(r: &SweepReport) -> String {
    let mut out = String::new();
    let layout: Vec<String> = r
        .zones
        .iter()
        .map(|z| format!("{z}={}", r.endpoints.get(z).copied().unwrap_or(0)))
        .collect();
    let total: usize = r.endpoints.values().sum();
    let first = &r.zones[0];
    let _ = writeln!(
        out,
        "Topology Aware Routing (topology-mode: Auto), ready endpoints {} ({total} in all)",
        layout.join(", ")
    );
    let _ = writeln!(
        out,
        "Swept: {first}'s share of allocatable CPU in steps of {}; {}.",
        r.step,
        if r.zones.len() == 2 {
            "the other zone has the rest"
        } else {
            "the other zones split the rest evenly"
        }
    );
    let _ = writeln!(
        out,
        "Each zone needs minimum = ceil(share x {total} / {}); hints are removed when the minimums add up to more than {total}.",
        1.0 + r.overload_threshold
    );
    out.push('\n');
    let rows: Vec<[String; 5]> = r
        .bands
        .iter()
        .map(|b| {
            let share = if b.from == b.to {
                fmt(b.from)
            } else {
                format!("{} - {}", fmt(b.from), fmt(b.to))
            };
            let count = |m: &BTreeMap<String, i64>, z: &String| m.get(z).copied().unwrap_or(0);
            let mins: Vec<String> = r
                .zones
                .iter()
                .map(|z| format!("{z}={}", count(&b.minimums, z)))
                .collect();
            let sum: i64 = b.minimums.values().sum();
            let hints: Vec<String> = r
                .zones
                .iter()
                .map(|z| format!("{z}={}", b.hints_per_zone.get(z).copied().unwrap_or(0)))
                .collect();
            [
                share,
                if b.hints_enabled {
                    "on".into()
                } else {
                    "off".into()
                },
                format!("{} (sum {sum})", mins.join(" ")),
                if b.hints_enabled {
                    hints.join(" ")
                } else {
                    "-".into()
                },
                b.message.clone().unwrap_or_default(),
            ]
        })
        .collect();
    let header = format!("{first} SHARE");
    table(
        &mut out,
        [
            header.as_str(),
            "HINTS",
            "MINIMUMS",
            "FOR-ZONES COUNT",
            "EVENT (fresh controller)",
        ],
        &rows,
    );
    out.push('\n');
    let summary = |on: bool| {
        r.ranges
            .iter()
            .filter(|x| x.hints_enabled == on)
            .map(|x| {
                if x.from == x.to {
                    fmt(x.from)
                } else {
                    format!("{}-{}", fmt(x.from), fmt(x.to))
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(out, "hints on:  {}", summary(true));
    let _ = writeln!(out, "hints off: {}", summary(false));
    out
}

fn fmt(x: f64) -> String {
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0');
    let s = s.strip_suffix('.').unwrap_or(s);
    if s.contains('.') && s.len() - s.find('.').unwrap_or(0) < 3 {
        format!("{x:.2}")
    } else {
        s.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_endpoint_layouts() {
        let parsed = parse_endpoints("2a=2, 2c=3").unwrap();
        assert_eq!(
            parsed,
            BTreeMap::from([("2a".to_owned(), 2), ("2c".to_owned(), 3)])
        );
        assert!(
            parse_endpoints("2a")
                .unwrap_err()
                .to_string()
                .contains("ZONE=COUNT")
        );
        assert!(
            parse_endpoints("2a=x")
                .unwrap_err()
                .to_string()
                .contains("not a whole number")
        );
        assert!(
            parse_endpoints("2a=1,2a=2")
                .unwrap_err()
                .to_string()
                .contains("twice")
        );
    }

    #[test]
    fn formats_shares_with_at_least_two_decimals() {
        assert_eq!(fmt(0.1), "0.10");
        assert_eq!(fmt(0.61), "0.61");
        assert_eq!(fmt(0.125), "0.125");
    }
}

//! Checks and builds `load`: durations, generator names, generator zones, rates. When the
//! section cannot be read as a whole (say `duration: 30`), its generators are still read one
//! by one and checked.

use std::time::Duration;

use super::super::diagnostic::Problems;
use serde_json::Value as Json;

use super::super::format::{GeneratorSpec, LoadSpec};
use super::super::model::{Cluster, Generator, Load, Rate};
use super::super::path::FieldPath;
use super::super::schema::Structure;
use super::super::units;
use super::{check_unique, duration, listing, positive_duration};

pub(super) fn build(
    spec: &LoadSpec,
    cluster: Option<&Cluster>,
    problems: &mut Problems<'_>,
) -> Load {
    let root = FieldPath::root().key("load");
    let warmup = duration(problems, &root.key("warmup"), &spec.warmup).unwrap_or_default();
    let load_duration = positive_duration(problems, &root.key("duration"), &spec.duration);
    let request_timeout =
        positive_duration(problems, &root.key("requestTimeout"), &spec.request_timeout)
            .unwrap_or_default();

    let indexed: Vec<(usize, &GeneratorSpec)> = spec.generators.iter().enumerate().collect();
    let generators = build_generators(&indexed, cluster, load_duration, problems);
    Load {
        warmup,
        duration: load_duration.unwrap_or(Duration::ZERO),
        request_timeout,
        generators,
    }
}

/// The generators of a `load` section that could not be read as a whole, each read and checked
/// on its own (for the references and cross checks; the load itself is not built).
pub(super) fn generators_only(
    doc: &Json,
    structure: &Structure,
    cluster: Option<&Cluster>,
    problems: &mut Problems<'_>,
) -> Option<Load> {
    let path = FieldPath::root().key("load").key("generators");
    let Json::Array(items) = doc.get("load")?.get("generators")? else {
        return None;
    };
    let specs: Vec<(usize, GeneratorSpec)> = items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| {
            super::decode_at(item, &path.index(i), structure, problems).map(|g| (i, g))
        })
        .collect();
    let indexed: Vec<(usize, &GeneratorSpec)> = specs.iter().map(|(i, g)| (*i, g)).collect();
    Some(Load {
        warmup: Duration::ZERO,
        duration: Duration::ZERO,
        request_timeout: Duration::ZERO,
        generators: build_generators(&indexed, cluster, None, problems),
    })
}

/// Checks and builds the generators (with their index in the file): unique names, zones,
/// rates, start times within the load (when its duration is known).
fn build_generators(
    specs: &[(usize, &GeneratorSpec)],
    cluster: Option<&Cluster>,
    load_duration: Option<Duration>,
    problems: &mut Problems<'_>,
) -> Vec<Generator> {
    let generators_path = FieldPath::root().key("load").key("generators");
    check_unique(
        problems,
        "generator",
        specs
            .iter()
            .map(|(i, g)| (generators_path.index(*i).key("name"), g.name.0.as_str())),
    );
    let mut generators = Vec::new();
    for (i, g) in specs {
        let path = generators_path.index(*i);
        if let Some(cluster) = cluster
            && !cluster.zones.contains(&g.zone.0)
        {
            problems.at(
                &path.key("zone"),
                format!(
                    "generator `{}`: zone `{}` is not a cluster zone; cluster zones are: {}",
                    g.name.0,
                    g.zone.0,
                    listing(&cluster.zones, "(none)")
                ),
            );
        }
        let rate = units::parse_rate(&g.rate.0)
            .map_err(|message| {
                problems.at(
                    &path.key("rate"),
                    format!("generator `{}`: {message}", g.name.0),
                )
            })
            .unwrap_or(Rate::Max);
        let start_at = g
            .start_at
            .as_ref()
            .and_then(|text| duration(problems, &path.key("startAt"), text))
            .unwrap_or_default();
        if let Some(total) = load_duration
            && start_at >= total
        {
            problems.at(
                &path.key("startAt"),
                format!(
                    "generator `{}`: startAt {} is not before the end of the load ({})",
                    g.name.0,
                    units::format_duration(start_at),
                    units::format_duration(total)
                ),
            );
        }
        generators.push(Generator {
            name: g.name.0.clone(),
            zone: g.zone.0.clone(),
            rate,
            connections: g.connections,
            connection_model: g.connection_model,
            sse_streams: g.sse_streams,
            path: g.path.0.clone(),
            via: g.via,
            start_at,
        });
    }
    generators
}

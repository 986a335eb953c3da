//! Checks and builds `load`: durations, generator names, generator zones, rates.

use std::time::Duration;

use super::super::diagnostic::Problems;
use super::super::format::LoadSpec;
use super::super::model::{Cluster, Generator, Load, Rate};
use super::super::path::FieldPath;
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

    let generators_path = root.key("generators");
    check_unique(
        problems,
        "generator",
        spec.generators
            .iter()
            .enumerate()
            .map(|(i, g)| (generators_path.index(i).key("name"), g.name.0.as_str())),
    );
    let mut generators = Vec::new();
    for (i, g) in spec.generators.iter().enumerate() {
        let path = generators_path.index(i);
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
    Load {
        warmup,
        duration: load_duration.unwrap_or(Duration::ZERO),
        request_timeout,
        generators,
    }
}

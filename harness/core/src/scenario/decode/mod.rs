//! From a (patched) document tree to the typed [`Scenario`]: `apiVersion`/`kind` first, then
//! the schema check, then each section is decoded and checked on its own (references,
//! uniqueness, units, ranges), so one broken section does not hide the problems of the others.
//! A scenario is returned only when no problem was found.

mod autoscaler;
mod cluster;
mod cost;
mod cross;
mod expect;
mod ingress;
mod lifecycle;
mod load;
mod load_balancer;
mod pod_names;
mod rollout_action;
mod service;
mod timeline;
mod zone_network;

use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::Value as Json;

use super::diagnostic::{Problem, Problems};
use super::format::{self, CpuText, DurationText};
use super::model::{Scenario, Via};
use super::patch::Deletion;
use super::path::{FieldPath, Segment};
use super::schema::{self, Structure};
use super::tree::{Node, render_json};
use super::units;

/// Checks a whole document and builds the scenario it describes.
pub(crate) fn evaluate(
    tree: &Node,
    deletions: &[Deletion],
    variant_names: &[String],
    selected_variant: Option<&str>,
) -> Result<Scenario, Vec<Problem>> {
    let mut problems = Problems::new(tree, deletions);
    let scenario = build(tree, variant_names, selected_variant, &mut problems);
    match scenario {
        Some(scenario) if problems.is_empty() => Ok(scenario),
        _ => Err(problems.into_sorted()),
    }
}

fn build(
    tree: &Node,
    variant_names: &[String],
    selected_variant: Option<&str>,
    problems: &mut Problems<'_>,
) -> Option<Scenario> {
    if !check_header(tree, problems) {
        return None;
    }
    if variant_names.iter().any(|n| n == super::BASE_VARIANT) {
        problems.at_key(
            &FieldPath::root().key("variants"),
            super::BASE_VARIANT,
            format!(
                "`{}` names the base document (`--variant {}`); give this variant another name",
                super::BASE_VARIANT,
                super::BASE_VARIANT
            ),
        );
    }
    let mut doc = tree.to_json();
    let structure = schema::check(&doc, problems);
    problems.seal();
    for (path, key) in &structure.unknown_fields {
        if let Some(Json::Object(map)) = json_at(&mut doc, path) {
            map.remove(key);
        }
    }

    let metadata: Option<format::Metadata> = decode(&doc, "metadata", &structure, problems);
    let cluster_spec: Option<format::ClusterSpec> = decode(&doc, "cluster", &structure, problems);
    let service_spec: Option<format::ServiceSpec> = decode(&doc, "service", &structure, problems);
    let load_spec: Option<format::LoadSpec> = decode(&doc, "load", &structure, problems);
    let load_balancer_spec: Option<Option<format::LoadBalancerSpec>> =
        decode_optional(&doc, "loadBalancer", &structure, problems);
    let ingress_spec: Option<Option<format::IngressSpec>> =
        decode_optional(&doc, "ingress", &structure, problems);
    let time_scale: Option<Option<f64>> = decode_optional(&doc, "timeScale", &structure, problems);
    let cost_spec: Option<Option<format::CostSpec>> =
        decode_optional(&doc, "cost", &structure, problems);
    let timeline_entries = decode_timeline(&doc, &structure, problems);
    let expect_spec = decode_each::<format::ExpectationSpec>(&doc, "expect", &structure, problems);

    // A section that cannot be read as a whole still lends what it holds to the other
    // sections' reference checks: the cluster its names, the load its generators.
    let cluster = cluster_spec.map(|spec| cluster::build(&spec, problems));
    let cluster_refs = cluster
        .clone()
        .or_else(|| doc.get("cluster").and_then(cluster::names_only));
    let service = service_spec.map(|spec| service::build(&spec, cluster_refs.as_ref(), problems));
    if service.is_none() {
        service::placement_only(&doc, &structure, cluster_refs.as_ref(), problems);
    }
    let load = load_spec.map(|spec| load::build(&spec, cluster_refs.as_ref(), problems));
    let load_refs = load
        .clone()
        .or_else(|| load::generators_only(&doc, &structure, cluster_refs.as_ref(), problems));
    let load_balancer = load_balancer_spec
        .map(|spec| spec.map(|spec| load_balancer::build(&spec, cluster_refs.as_ref(), problems)));
    let ingress = ingress_spec.map(|spec| spec.map(|spec| ingress::build(&spec, problems)));
    // The replica count the timeline's ingress actions are checked against (`None`: no
    // `ingress` section; unknown when it cannot be read).
    let ingress_replicas = match doc.get("ingress") {
        None => Some(None),
        Some(_) => ingress
            .as_ref()
            .and_then(|i| i.as_ref().map(|i| Some(i.replicas))),
    };
    let duration = load.as_ref().map(|l| l.duration).filter(|d| !d.is_zero());
    let has_rollout = timeline_entries
        .as_ref()
        .map(|entries| entries.iter().any(timeline_has_rollout));
    let timeline = timeline_entries.map(|entries| {
        timeline::build(
            &entries,
            cluster_refs.as_ref(),
            service.as_ref(),
            ingress_replicas,
            duration,
            problems,
        )
    });
    let named_events = timeline.as_ref().map(|t| &t.named);
    let expectations = expect_spec.map(|spec| {
        let sides = expect::Sides {
            sidecar: service.as_ref().map(|s| s.sidecar.is_some()),
            rollout: has_rollout,
            load_balancer: doc.get("loadBalancer").is_some(),
            via_load_balancer: load_refs
                .as_ref()
                .map(|l| l.generators.iter().any(|g| g.via == Via::LoadBalancer)),
            ingress: doc.get("ingress").is_some(),
            zones: cluster_refs.as_ref().map(|c| c.zones.clone()),
            generator_zones: load_refs
                .as_ref()
                .map(|l| l.generators.iter().map(|g| g.zone.clone()).collect()),
        };
        expect::build(&spec, named_events, duration, sides, problems)
    });

    if let (Some(service), Some(load)) = (&service, &load_refs) {
        cross::check_sse(service, load, problems);
    }
    if let Some(load) = &load_refs {
        cross::check_via(load, doc.get("loadBalancer").is_some(), problems);
        cross::check_via_ingress(load, doc.get("ingress").is_some(), problems);
    }
    let cost = cost_spec.map(|spec| cost::build(spec.as_ref(), problems));
    let metadata = metadata?;
    Some(Scenario {
        name: metadata.name.0,
        description: metadata.description,
        selected_variant: selected_variant.map(str::to_owned),
        variant_names: variant_names.to_vec(),
        cluster: cluster?,
        service: service?,
        load: load?,
        load_balancer: load_balancer?,
        ingress: ingress?,
        cost: cost?,
        timeline: timeline?.events,
        expectations: expectations?,
        time_scale: time_scale?.unwrap_or(1.0),
    })
}

/// The document must be a mapping with the right `apiVersion` and `kind`; otherwise nothing
/// else is checked (a different version may mean a different format).
fn check_header(tree: &Node, problems: &mut Problems<'_>) -> bool {
    if tree.entries().is_none() {
        problems.at(
            &FieldPath::root(),
            format!(
                "a scenario file must be a mapping starting with `apiVersion: {}` and `kind: {}`",
                format::API_VERSION,
                format::KIND
            ),
        );
        return false;
    }
    let mut ok = true;
    for (key, expected) in [("apiVersion", format::API_VERSION), ("kind", format::KIND)] {
        let path = FieldPath::root().key(key);
        match tree.get(key).map(|n| n.to_json()) {
            Some(Json::String(s)) if s == expected => {}
            Some(other) => {
                ok = false;
                problems.at(
                    &path,
                    format!(
                        "unsupported {key} `{}`; expected `{expected}`",
                        render_json(&other)
                    ),
                );
            }
            None => {
                ok = false;
                problems.at(
                    &path,
                    format!("missing required field `{key}`; expected `{key}: {expected}`"),
                );
            }
        }
    }
    ok
}

fn json_at<'a>(doc: &'a mut Json, path: &FieldPath) -> Option<&'a mut Json> {
    path.segments()
        .iter()
        .try_fold(doc, |node, segment| match segment {
            Segment::Key(key) => node.get_mut(key.as_str()),
            Segment::Index(i) => node.get_mut(*i),
        })
}

/// Decodes the value at `path` unless the structural check found it undecodable. A decoding
/// failure is reported only where the structural check found nothing (it should not happen).
pub(super) fn decode_at<T: DeserializeOwned>(
    value: &Json,
    path: &FieldPath,
    structure: &Structure,
    problems: &mut Problems<'_>,
) -> Option<T> {
    if structure.is_broken(path) {
        return None;
    }
    match serde_json::from_value(value.clone()) {
        Ok(decoded) => Some(decoded),
        Err(_) if structure.is_troubled(path) => None,
        Err(e) => {
            problems.at(path, format!("cannot read this value: {e}"));
            None
        }
    }
}

/// Decodes a top-level section, if present.
fn decode<T: DeserializeOwned>(
    doc: &Json,
    key: &str,
    structure: &Structure,
    problems: &mut Problems<'_>,
) -> Option<T> {
    decode_at(
        doc.get(key)?,
        &FieldPath::root().key(key),
        structure,
        problems,
    )
}

/// Each entry of a top-level list decoded on its own, with its index and raw value (`None`:
/// it cannot be decoded; its problems are reported). `None` when the key holds no list.
fn decode_items<'d, T: DeserializeOwned>(
    doc: &'d Json,
    key: &str,
    structure: &Structure,
    problems: &mut Problems<'_>,
) -> Option<Vec<(usize, &'d Json, Option<T>)>> {
    let path = FieldPath::root().key(key);
    let items = match doc.get(key) {
        None => return Some(Vec::new()),
        Some(Json::Array(items)) => items,
        Some(_) => return None,
    };
    let decoded = items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            (
                i,
                item,
                decode_at(item, &path.index(i), structure, problems),
            )
        })
        .collect();
    Some(decoded)
}

/// Decodes each entry of a top-level list on its own, keeping its index; entries that cannot
/// be decoded are left out (their problems are already reported).
fn decode_each<T: DeserializeOwned>(
    doc: &Json,
    key: &str,
    structure: &Structure,
    problems: &mut Problems<'_>,
) -> Option<Vec<(usize, T)>> {
    let items = decode_items(doc, key, structure, problems)?;
    Some(
        items
            .into_iter()
            .filter_map(|(i, _, decoded)| decoded.map(|v| (i, v)))
            .collect(),
    )
}

/// Decodes an optional top-level key: `Some(None)` when it is absent, `None` when it cannot be
/// decoded.
fn decode_optional<T: DeserializeOwned>(
    doc: &Json,
    key: &str,
    structure: &Structure,
    problems: &mut Problems<'_>,
) -> Option<Option<T>> {
    match doc.get(key) {
        None => Some(None),
        Some(_) => decode(doc, key, structure, problems).map(Some),
    }
}

/// The timeline's entries, each decoded on its own: one that cannot be read keeps its raw
/// value (its problems are reported) so the others are still checked. `None` when `timeline`
/// is not a list.
fn decode_timeline(
    doc: &Json,
    structure: &Structure,
    problems: &mut Problems<'_>,
) -> Option<Vec<timeline::Entry>> {
    let items = decode_items(doc, "timeline", structure, problems)?;
    let entries = items
        .into_iter()
        .map(|(_, raw, decoded)| match decoded {
            Some(entry) => timeline::Entry::Read(Box::new(entry)),
            None => timeline::Entry::Unreadable(raw.clone()),
        })
        .collect();
    Some(entries)
}

fn timeline_has_rollout(entry: &timeline::Entry) -> bool {
    match entry {
        timeline::Entry::Read(e) => e.rollout.is_some(),
        timeline::Entry::Unreadable(raw) => raw.get("rollout").is_some(),
    }
}

/// Parses a duration, reporting a problem at `path` if it is invalid.
fn duration(
    problems: &mut Problems<'_>,
    path: &FieldPath,
    text: &DurationText,
) -> Option<Duration> {
    units::parse_duration(&text.0)
        .map_err(|message| problems.at(path, message))
        .ok()
}

/// Parses a duration that must not be zero.
fn positive_duration(
    problems: &mut Problems<'_>,
    path: &FieldPath,
    text: &DurationText,
) -> Option<Duration> {
    let d = duration(problems, path, text)?;
    if d.is_zero() {
        problems.at(
            path,
            format!("must be longer than zero, found `{}`", text.0),
        );
        return None;
    }
    Some(d)
}

/// Parses a duration that Kubernetes holds in whole seconds (`tolerationSeconds`).
fn whole_seconds(
    problems: &mut Problems<'_>,
    path: &FieldPath,
    text: &DurationText,
) -> Option<Duration> {
    let d = duration(problems, path, text)?;
    if d.subsec_nanos() != 0 {
        problems.at(
            path,
            format!(
                "Kubernetes keeps this in whole seconds; found `{}` ({} s): write e.g. `{}s`",
                text.0,
                d.as_secs_f64(),
                d.as_secs_f64().round() as u64
            ),
        );
        return None;
    }
    Some(d)
}

/// Parses a CPU quantity into millicores.
fn cpu(problems: &mut Problems<'_>, path: &FieldPath, value: &CpuText) -> Option<u64> {
    units::parse_cpu_millis(&value.0)
        .map_err(|message| problems.at(path, message))
        .ok()
}

/// Reports every name that appears twice, pointing at the repeat and naming the first line.
fn check_unique<'n>(
    problems: &mut Problems<'_>,
    what: &str,
    names: impl IntoIterator<Item = (FieldPath, &'n str)>,
) {
    let mut seen: Vec<(&str, FieldPath)> = Vec::new();
    for (path, name) in names {
        match seen.iter().find(|(n, _)| *n == name) {
            Some((_, first)) => {
                let line = problems.line_of(first);
                problems.at(
                    &path,
                    format!("duplicate {what} `{name}`; it is already defined at line {line}"),
                );
            }
            None => seen.push((name, path)),
        }
    }
}

/// "a, b, c", or a phrase for an empty list.
fn listing(items: &[String], empty: &str) -> String {
    if items.is_empty() {
        empty.to_owned()
    } else {
        items.join(", ")
    }
}

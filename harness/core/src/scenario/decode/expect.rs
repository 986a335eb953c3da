//! Checks and builds `expect`: thresholds of the kind each metric takes, `min <= max`, window
//! bounds resolved against the timeline, the zones of `originZone`/`destinationZone` and the
//! metrics they apply to, unique names (given or derived).

use std::collections::BTreeMap;
use std::time::Duration;

use super::super::diagnostic::Problems;
use super::super::format::{ExpectationSpec, Scalar, ThresholdText};
use super::super::model::{Expectation, Metric, MetricKind, Threshold, Window, ZoneSlice};
use super::super::path::FieldPath;
use super::super::units::{format_duration, parse_duration};
use super::super::window::parse_bound;
use super::check_unique;

/// What the rest of the scenario has that some metrics need; `None` where the section could
/// not be read.
pub(super) struct Sides {
    /// `service.sidecar` is set.
    pub sidecar: Option<bool>,
    /// The timeline has a `rollout` entry.
    pub rollout: Option<bool>,
    /// The document has a top-level `loadBalancer`.
    pub load_balancer: bool,
    /// Some generator sends `via: loadBalancer`.
    pub via_load_balancer: Option<bool>,
    /// The document has a top-level `ingress`.
    pub ingress: bool,
    /// The cluster's zones, in file order.
    pub zones: Option<Vec<String>>,
    /// The zones the load generators run in.
    pub generator_zones: Option<Vec<String>>,
}

/// `specs` are the decodable entries with their index in the file.
pub(super) fn build(
    specs: &[(usize, ExpectationSpec)],
    named_events: Option<&BTreeMap<String, Duration>>,
    load_duration: Option<Duration>,
    sides: Sides,
    problems: &mut Problems<'_>,
) -> Vec<Expectation> {
    let root = FieldPath::root().key("expect");
    let mut expectations = Vec::new();
    let mut name_paths = Vec::new();
    for (i, spec) in specs {
        let path = root.index(*i);
        let metric = spec.metric;
        if let Some(missing) = missing_side(metric, &sides) {
            problems.at(&path.key("metric"), missing);
        }
        let max = spec
            .max
            .as_ref()
            .and_then(|t| threshold(metric, t, &path.key("max"), problems));
        let min = spec
            .min
            .as_ref()
            .and_then(|t| threshold(metric, t, &path.key("min"), problems));
        if spec.max.is_none() && spec.min.is_none() {
            problems.at(&path, "set at least one of `max` and `min`");
        }
        if let (Some(min), Some(max)) = (min, max)
            && min.as_f64() > max.as_f64()
        {
            problems.at(
                &path.key("min"),
                format!(
                    "min ({}) is greater than max ({})",
                    shown(spec.min.as_ref()),
                    shown(spec.max.as_ref())
                ),
            );
        }
        let window = build_window(
            spec,
            &path.key("window"),
            named_events,
            load_duration,
            problems,
        );
        let zones = build_slice(spec, &path, &sides, problems);
        let name = spec
            .name
            .clone()
            .unwrap_or_else(|| default_name(spec, &window.label, &zones));
        name_paths.push(if spec.name.is_some() {
            path.key("name")
        } else {
            path
        });
        expectations.push(Expectation {
            name,
            metric,
            min,
            max,
            window,
            zones,
        });
    }
    check_unique(
        problems,
        "expectation name",
        name_paths
            .into_iter()
            .zip(expectations.iter().map(|e| e.name.as_str())),
    );
    expectations
}

/// Why `metric` cannot be measured in this scenario, if it cannot.
fn missing_side(metric: Metric, sides: &Sides) -> Option<String> {
    let name = metric.as_str();
    match metric {
        Metric::MaxSaturation | Metric::RejectedRate if sides.sidecar == Some(false) => Some(
            format!("{name} is measured by the sidecar, but `service.sidecar` is not set"),
        ),
        Metric::RolloutDuration if sides.rollout == Some(false) => Some(
            "rolloutDuration is measured from a `rollout` timeline action, but the timeline has none"
                .to_owned(),
        ),
        Metric::MinRoutableTargets if !sides.load_balancer => Some(
            "minRoutableTargets counts the load balancer's routable targets, but there is no \
             top-level `loadBalancer`; add one"
                .to_owned(),
        ),
        Metric::RequestsAfterRemoval | Metric::TerminationErrorRate if !sides.load_balancer => {
            Some(format!(
                "{name} is measured by the load balancer (only it knows which pod every request \
                 went to), but there is no top-level `loadBalancer`; add one and send a generator \
                 `via: loadBalancer`"
            ))
        }
        Metric::RequestsAfterRemoval | Metric::TerminationErrorRate
            if sides.via_load_balancer == Some(false) =>
        {
            Some(format!(
                "{name} is measured by the load balancer, but no generator sends \
                 `via: loadBalancer`"
            ))
        }
        Metric::PositionRankCorrelation | Metric::FirstPositionsShare | Metric::IngressRestarts
            if !sides.ingress =>
        {
            Some(format!(
                "{name} is measured on the ingress replicas' rendered lists, but there is no \
                 top-level `ingress`; add one and send a generator `via: ingress`"
            ))
        }
        _ => None,
    }
}

/// The metrics `originZone` restricts: those measured from the generators' own counts.
const BY_ORIGIN: &[Metric] = &[
    Metric::ErrorRate,
    Metric::Http5xxRate,
    Metric::TransportErrorRate,
    Metric::TimeoutRate,
    Metric::LatencyP99,
    Metric::CrossZoneShare,
];

/// The metrics `destinationZone` restricts: those the generators attribute to a pod.
const BY_DESTINATION: &[Metric] = &[
    Metric::ErrorRate,
    Metric::LatencyP99,
    Metric::CrossZoneShare,
];

fn metric_list(metrics: &[Metric]) -> String {
    metrics
        .iter()
        .map(|m| m.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `originZone` and `destinationZone`: zones of the cluster (the origin one with a generator
/// in it), on a metric they apply to; `latencyP99` by destination zone has no window (the
/// per-pod histograms cover the generators' whole runs).
fn build_slice(
    spec: &ExpectationSpec,
    path: &FieldPath,
    sides: &Sides,
    problems: &mut Problems<'_>,
) -> ZoneSlice {
    let metric = spec.metric;
    let mut check = |zone: &Option<super::super::format::ZoneName>,
                     key: &str,
                     applies: &[Metric]|
     -> Option<String> {
        let zone = zone.as_ref()?.0.clone();
        let at = path.key(key);
        if !applies.contains(&metric) {
            problems.at(
                &at,
                format!(
                    "`{key}` applies to {}, not to {}",
                    metric_list(applies),
                    metric.as_str()
                ),
            );
        }
        if let Some(zones) = &sides.zones
            && !zones.contains(&zone)
        {
            problems.at(
                &at,
                format!(
                    "zone `{zone}` is not a cluster zone; cluster zones are: {}",
                    zones.join(", ")
                ),
            );
        } else if key == "originZone"
            && let Some(generators) = &sides.generator_zones
            && !generators.contains(&zone)
        {
            let mut zones = generators.clone();
            zones.sort();
            zones.dedup();
            problems.at(
                &at,
                format!(
                    "no load generator runs in zone `{zone}`, so no caller is there; generators \
                     run in: {}",
                    zones.join(", ")
                ),
            );
        }
        Some(zone)
    };
    let origin = check(&spec.origin_zone, "originZone", BY_ORIGIN);
    let destination = check(&spec.destination_zone, "destinationZone", BY_DESTINATION);
    if destination.is_some() && metric == Metric::LatencyP99 && spec.window.is_some() {
        problems.at(
            &path.key("window"),
            "latencyP99 by `destinationZone` is measured over the generators' whole runs (from \
             the per-pod latency histograms, which have no time axis): remove `window`, or use \
             `originZone`, which has one",
        );
    }
    ZoneSlice {
        origin,
        destination,
    }
}

fn shown(text: Option<&ThresholdText>) -> String {
    text.map(|t| t.0.to_string()).unwrap_or_default()
}

fn threshold(
    metric: Metric,
    text: &ThresholdText,
    path: &FieldPath,
    problems: &mut Problems<'_>,
) -> Option<Threshold> {
    let name = metric.as_str();
    let parsed = match (metric.kind(), &text.0) {
        (MetricKind::Latency, Scalar::Text(t)) => parse_duration(t).map(Threshold::Latency),
        (MetricKind::Latency, Scalar::Number(n)) => Err(format!(
            "{name} takes a duration such as \"500ms\", found the number `{n}`"
        )),
        (MetricKind::Fraction, Scalar::Text(t)) => match percent(t) {
            Some(p) if (0.0..=100.0).contains(&p) => Ok(Threshold::Value(p / 100.0)),
            _ => Err(format!(
                "{name} takes a fraction from 0 to 1 such as 0.01, or a percentage such as \
                 \"1%\", found `{t}`"
            )),
        },
        (_, Scalar::Text(t)) => Err(format!("{name} takes a number, found `{t}`")),
        (MetricKind::Fraction, Scalar::Number(n)) => match n.as_f64() {
            Some(v) if (0.0..=1.0).contains(&v) => Ok(Threshold::Value(v)),
            _ => Err(format!(
                "{name} takes a fraction from 0 to 1 such as 0.01, or a percentage such as \
                 \"1%\", found `{n}`"
            )),
        },
        (MetricKind::Correlation, Scalar::Number(n)) => match n.as_f64() {
            Some(v) if (-1.0..=1.0).contains(&v) => Ok(Threshold::Value(v)),
            _ => Err(format!("{name} takes a number from -1 to 1, found `{n}`")),
        },
        (MetricKind::Ratio, Scalar::Number(n)) => match n.as_f64() {
            Some(v) if v >= 0.0 => Ok(Threshold::Value(v)),
            _ => Err(format!("{name} takes a number of 0 or more, found `{n}`")),
        },
        (MetricKind::Count, Scalar::Number(n)) => match n.as_u64() {
            Some(c) => Ok(Threshold::Count(c)),
            None => Err(format!(
                "{name} takes a whole number of 0 or more, found `{n}`"
            )),
        },
    };
    parsed.map_err(|message| problems.at(path, message)).ok()
}

/// `"1%"`, `"0.5 %"` as a number of percent.
fn percent(text: &str) -> Option<f64> {
    let number = text.trim().strip_suffix('%')?.trim_end();
    if number.is_empty() || !number.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    number.parse().ok()
}

fn build_window(
    spec: &ExpectationSpec,
    path: &FieldPath,
    named_events: Option<&BTreeMap<String, Duration>>,
    load_duration: Option<Duration>,
    problems: &mut Problems<'_>,
) -> Window {
    let window = spec.window.clone().unwrap_or_default();
    let from_text = window.from.map_or_else(|| "start".to_owned(), |b| b.0);
    let to_text = window.to.map_or_else(|| "end".to_owned(), |b| b.0);
    let label = format!("{from_text}..{to_text}");
    let unresolved = |label| Window {
        from: Duration::ZERO,
        to: Duration::ZERO,
        label,
    };
    let Some(events) = named_events else {
        return unresolved(label);
    };
    let Some(load_duration) = load_duration else {
        // The load's length is unknown (its section could not be read): the names the bounds
        // refer to are still checked.
        for (text, key) in [(&from_text, "from"), (&to_text, "to")] {
            if let Err(message) = parse_bound(text, events) {
                problems.at(&path.key(key), message);
            }
        }
        return unresolved(label);
    };
    let mut resolve = |text: &str, key: &str| {
        parse_bound(text, events)
            .and_then(|bound| bound.resolve(text, events, load_duration))
            .map_err(|message| problems.at(&path.key(key), message))
            .ok()
    };
    let from = resolve(&from_text, "from");
    let to = resolve(&to_text, "to");
    if let (Some(from), Some(to)) = (from, to)
        && from >= to
    {
        problems.at(
            path,
            format!(
                "the window is empty: from `{from_text}` ({}) is not before to `{to_text}` ({})",
                format_duration(from),
                format_duration(to)
            ),
        );
    }
    Window {
        from: from.unwrap_or_default(),
        to: to.unwrap_or(load_duration),
        label,
    }
}

/// `errorRate <= 0.01`, `0.5 <= skewCv <= 2`, with ` from <zone>`/` to <zone>` for a slice and
/// ` during <window>` unless the window is the whole load.
fn default_name(spec: &ExpectationSpec, window_label: &str, zones: &ZoneSlice) -> String {
    let metric = spec.metric.as_str();
    let mut name = match (&spec.min, &spec.max) {
        (Some(_), Some(_)) => format!(
            "{} <= {metric} <= {}",
            shown(spec.min.as_ref()),
            shown(spec.max.as_ref())
        ),
        (Some(_), None) => format!("{metric} >= {}", shown(spec.min.as_ref())),
        _ => format!("{metric} <= {}", shown(spec.max.as_ref())),
    };
    name.push_str(&zones.suffix());
    if window_label != "start..end" {
        name.push_str(&format!(" during {window_label}"));
    }
    name
}

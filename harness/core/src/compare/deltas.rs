//! The rows of a comparison: every compared number with its delta and better direction, each
//! expectation of both runs, and each pod's share of the requests.

use std::collections::BTreeMap;

use super::{Better, ExpectationDelta, MetricDelta, PodShareDelta, cross_zone};
use crate::report::Summary;
use crate::text::natural_key;

/// Every number compared, in a fixed order.
pub(super) fn metric_deltas(base: &Summary, candidate: &Summary) -> Vec<MetricDelta> {
    let mut rows: Vec<(String, Option<f64>, Option<f64>, Better)> = vec![(
        "errorRate".into(),
        Some(base.totals.error_rate),
        Some(candidate.totals.error_rate),
        Better::Lower,
    )];
    let kinds = |s: &Summary| -> BTreeMap<String, f64> {
        let attempted = s.totals.attempted.max(1) as f64;
        let mut out = BTreeMap::new();
        for (status, n) in &s.totals.responses {
            if !status.starts_with('2') {
                out.insert(format!("errors.{status}"), *n as f64 / attempted);
            }
        }
        for (kind, n) in &s.totals.transport_errors {
            out.insert(format!("errors.{kind}"), *n as f64 / attempted);
        }
        out
    };
    let (kb, kc) = (kinds(base), kinds(candidate));
    let mut names: Vec<&String> = kb.keys().chain(kc.keys()).collect();
    names.sort();
    names.dedup();
    for name in names {
        rows.push((
            name.clone(),
            Some(kb.get(name).copied().unwrap_or(0.0)),
            Some(kc.get(name).copied().unwrap_or(0.0)),
            Better::Lower,
        ));
    }
    rows.push((
        "skewMaxMean".into(),
        base.skew.max_mean,
        candidate.skew.max_mean,
        Better::Lower,
    ));
    rows.push((
        "skewCv".into(),
        base.skew.cv,
        candidate.skew.cv,
        Better::Lower,
    ));
    rows.push((
        "starvedPods".into(),
        Some(base.skew.starved.len() as f64),
        Some(candidate.skew.starved.len() as f64),
        Better::Lower,
    ));
    rows.push((
        "latencyP50Ms".into(),
        base.totals.latency_p50_ms,
        candidate.totals.latency_p50_ms,
        Better::Lower,
    ));
    rows.push((
        "latencyP99Ms".into(),
        base.totals.latency_p99_ms,
        candidate.totals.latency_p99_ms,
        Better::Lower,
    ));
    if base.ingress.is_some() || candidate.ingress.is_some() {
        let sum = |s: &Summary, f: fn(&crate::report::IngressReplicaSummary) -> u64| {
            s.ingress
                .as_ref()
                .map(|i| i.replicas.iter().map(f).sum::<u64>() as f64)
        };
        rows.push((
            "ingressReloads".into(),
            sum(base, |r| r.reloads),
            sum(candidate, |r| r.reloads),
            Better::Neither,
        ));
        rows.push((
            "ingressRestarts".into(),
            sum(base, |r| r.restarts),
            sum(candidate, |r| r.restarts),
            Better::Lower,
        ));
        rows.push((
            "firstPositionsShare".into(),
            base.ingress.as_ref().and_then(|i| i.first_positions_share),
            candidate
                .ingress
                .as_ref()
                .and_then(|i| i.first_positions_share),
            Better::Lower,
        ));
        rows.push((
            "positionRankCorrelation".into(),
            base.ingress.as_ref().and_then(|i| i.rank_correlation),
            candidate.ingress.as_ref().and_then(|i| i.rank_correlation),
            Better::Neither,
        ));
    }
    rows.extend(cross_zone::rows(base, candidate));
    for e in &base.expectations {
        let c = candidate.expectations.iter().find(|c| c.name == e.name);
        let better = match (e.threshold.max, e.threshold.min) {
            (Some(_), None) => Better::Lower,
            (None, Some(_)) => Better::Higher,
            _ => Better::Neither,
        };
        let name = format!("expect.{}", e.metric);
        if rows.iter().any(|r| r.0 == name) {
            continue;
        }
        rows.push((name, e.observed, c.and_then(|c| c.observed), better));
    }
    rows.into_iter()
        .map(|(name, b, c, better)| MetricDelta {
            delta: b.zip(c).map(|(b, c)| c - b),
            name,
            base: b,
            candidate: c,
            better,
            max_regression: None,
            regressed: false,
        })
        .collect()
}

pub(super) fn expectation_deltas(base: &Summary, candidate: &Summary) -> Vec<ExpectationDelta> {
    base.expectations
        .iter()
        .map(|e| {
            let c = candidate.expectations.iter().find(|c| c.name == e.name);
            ExpectationDelta {
                name: e.name.clone(),
                metric: e.metric.clone(),
                base_observed: e.observed,
                base_passed: e.passed,
                candidate_observed: c.and_then(|c| c.observed),
                candidate_passed: c.is_some_and(|c| c.passed),
            }
        })
        .collect()
}

pub(super) fn pod_deltas(base: &Summary, candidate: &Summary) -> Vec<PodShareDelta> {
    let shares = |s: &Summary| -> BTreeMap<String, f64> {
        s.pods.iter().map(|p| (p.name.clone(), p.share)).collect()
    };
    let (b, c) = (shares(base), shares(candidate));
    let mut pods: Vec<&String> = b.keys().chain(c.keys()).collect();
    pods.sort_by(|x, y| natural_key(x).cmp(&natural_key(y)));
    pods.dedup();
    pods.into_iter()
        .map(|pod| {
            let (x, y) = (
                b.get(pod).copied().unwrap_or(0.0),
                c.get(pod).copied().unwrap_or(0.0),
            );
            PodShareDelta {
                pod: pod.clone(),
                base: x,
                candidate: y,
                delta: y - x,
            }
        })
        .collect()
}

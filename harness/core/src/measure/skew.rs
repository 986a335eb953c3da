//! Per-pod distribution: requests each pod received in a window (destination side where a
//! sidecar counts arrivals, else responses attributed by the `x-pod` header), over the pods
//! that should have received traffic (ready in the Service's endpoints for at least half the
//! window), as max/mean, coefficient of variation and starved pods (below 10% of a fair share).

use std::collections::BTreeMap;

use super::{Measured, RunData, Window};

/// A pod is starved below this fraction of a fair share.
pub const STARVED_FRACTION: f64 = 0.10;

/// Distribution statistics of one window.
#[derive(Debug, Clone, PartialEq)]
pub struct SkewStats {
    /// Eligible pod → responses it received.
    pub requests: BTreeMap<String, u64>,
    pub max_mean: Option<f64>,
    pub cv: Option<f64>,
    pub starved: Vec<String>,
}

/// Requests each pod received in the window. Where the pod has a sidecar this is the
/// destination side: arrivals counted by the sidecar (so requests that hung in its queue count
/// for the pod they reached); without one, responses attributed by `x-pod`.
pub fn requests_per_pod(run: &RunData, window: Window) -> BTreeMap<String, u64> {
    let mut counts = responses_per_pod(run, window);
    for pod in run.pods.iter().filter(|p| p.max_concurrency > 0) {
        let at = |t: f64| {
            pod.samples
                .iter()
                .take_while(|s| s.t_s <= t)
                .last()
                .map_or(0, |s| s.received)
        };
        counts.insert(
            pod.name.clone(),
            at(window.to_s).saturating_sub(at(window.from_s)),
        );
    }
    counts
}

/// Requests each pod received in each second of the run, counted as [`requests_per_pod`]
/// counts them (the sidecar's arrivals where there is one, else responses by `x-pod`).
pub fn requests_per_second(run: &RunData) -> BTreeMap<String, Vec<u64>> {
    let seconds = run.seconds();
    let mut out: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (_, second, row) in run.load_seconds() {
        if second >= seconds {
            continue;
        }
        for (pod, n) in &row.by_backend {
            out.entry(pod.clone()).or_insert_with(|| vec![0; seconds])[second] += n;
        }
    }
    for pod in run.pods.iter().filter(|p| p.max_concurrency > 0) {
        let at = |t: f64| {
            pod.samples
                .iter()
                .take_while(|s| s.t_s <= t)
                .last()
                .map_or(0, |s| s.received)
        };
        let counts = (0..seconds)
            .map(|s| at((s + 1) as f64).saturating_sub(at(s as f64)))
            .collect();
        out.insert(pod.name.clone(), counts);
    }
    out
}

/// Responses per pod in the window (source side, from the `x-pod` header), over all generators.
pub fn responses_per_pod(run: &RunData, window: Window) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for (_, second, row) in run.load_seconds() {
        if window.has_second(second) {
            for (pod, n) in &row.by_backend {
                *counts.entry(pod.clone()).or_default() += n;
            }
        }
    }
    counts
}

/// Pods that should have received traffic: ready (in the Service's endpoints) for at least
/// half of the window. Without samples (a target that cannot observe readiness), every pod
/// that appears in the run counts.
pub fn eligible_pods(run: &RunData, window: Window) -> Vec<String> {
    let window_seconds = (window.to_s - window.from_s).max(0.0);
    run.pods
        .iter()
        .filter(|pod| {
            if pod.samples.is_empty() {
                return true;
            }
            let ready = pod
                .samples
                .iter()
                .filter(|s| window.has_instant(s.t_s) && s.ready)
                .count() as f64;
            ready * 2.0 >= window_seconds.floor()
        })
        .map(|pod| pod.name.clone())
        .collect()
}

/// Skew statistics for the window.
pub fn skew(run: &RunData, window: Window) -> SkewStats {
    let counts = requests_per_pod(run, window);
    let requests: BTreeMap<String, u64> = eligible_pods(run, window)
        .into_iter()
        .map(|pod| {
            let n = counts.get(&pod).copied().unwrap_or(0);
            (pod, n)
        })
        .collect();
    let n = requests.len() as f64;
    let total: u64 = requests.values().sum();
    if requests.is_empty() || total == 0 {
        return SkewStats {
            requests,
            max_mean: None,
            cv: None,
            starved: Vec::new(),
        };
    }
    let mean = total as f64 / n;
    let max = *requests.values().max().unwrap_or(&0) as f64;
    let variance = requests
        .values()
        .map(|v| (*v as f64 - mean).powi(2))
        .sum::<f64>()
        / n;
    let starved = requests
        .iter()
        .filter(|(_, v)| (**v as f64) < STARVED_FRACTION * mean)
        .map(|(pod, _)| pod.clone())
        .collect();
    SkewStats {
        requests,
        max_mean: Some(max / mean),
        cv: Some(variance.sqrt() / mean),
        starved,
    }
}

impl SkewStats {
    fn describe(&self) -> String {
        let total: u64 = self.requests.values().sum();
        let per_pod: Vec<String> = self
            .requests
            .iter()
            .map(|(pod, n)| format!("{pod} {n}"))
            .collect();
        let starved = if self.starved.is_empty() {
            String::new()
        } else {
            format!("; starved: {}", self.starved.join(", "))
        };
        format!(
            "{} requests over {} pods ({}){starved}",
            total,
            self.requests.len(),
            per_pod.join(", ")
        )
    }
}

/// Busiest pod ÷ mean.
pub fn skew_max_mean(run: &RunData, window: Window) -> Measured {
    let s = skew(run, window);
    Measured {
        value: s.max_mean,
        evidence: s.describe(),
    }
}

/// Coefficient of variation of requests per pod.
pub fn skew_cv(run: &RunData, window: Window) -> Measured {
    let s = skew(run, window);
    Measured {
        value: s.cv,
        evidence: s.describe(),
    }
}

/// Number of starved pods.
pub fn starved_pods(run: &RunData, window: Window) -> Measured {
    let s = skew(run, window);
    Measured {
        value: Some(s.starved.len() as f64),
        evidence: s.describe(),
    }
}

//! Per-pod distribution: responses each pod got in a window (source-side attribution from the
//! `x-pod` header), over the pods that should have received traffic (ready in the Service's
//! endpoints for at least half the window), as max/mean, coefficient of variation and starved
//! pods (below 10% of a fair share).

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

/// Responses per pod in the window, over all generators.
pub fn requests_per_pod(run: &RunData, window: Window) -> BTreeMap<String, u64> {
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

/// Pods ready for at least half of their samples inside the window. Without samples (a target
/// that cannot observe readiness), every pod that appears in the run counts.
pub fn eligible_pods(run: &RunData, window: Window) -> Vec<String> {
    run.pods
        .iter()
        .filter(|pod| {
            let inside: Vec<_> = pod
                .samples
                .iter()
                .filter(|s| window.has_instant(s.t_s))
                .collect();
            if inside.is_empty() {
                return pod.samples.is_empty();
            }
            let ready = inside.iter().filter(|s| s.ready).count();
            ready * 2 >= inside.len()
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

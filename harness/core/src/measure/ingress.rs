//! The ingress measurements (incident 2): how requests split by position in the replicas'
//! rendered server lists, the reloads and restarts per replica, and the readiness flips per
//! pod (does unreadiness spread from pod to pod).
//!
//! Position: at each second, a pod's position is its mean 1-based index over the replicas'
//! current lists (the last `ingress` event of each replica at or before the second's start);
//! the pods listed that second are ranked by it (rank 1 first). The requests each pod
//! received that second (its sidecar's arrivals, else the responses it gave) count for its
//! rank. Over a window this gives the requests per rank: "share by position".

use std::collections::BTreeMap;

use super::{EventKind, IngressChange, Measured, RunData, Window, requests_per_second};

/// The requests of a window split by list position.
#[derive(Debug, Clone, PartialEq)]
pub struct PositionShares {
    /// Requests that went to the pod ranked `i + 1` in its second.
    pub by_rank: Vec<u64>,
    /// Per pod: (requests, mean rank over the seconds it was listed).
    pub by_pod: BTreeMap<String, (u64, f64)>,
}

impl PositionShares {
    pub fn total(&self) -> u64 {
        self.by_rank.iter().sum()
    }

    /// How many leading positions "the first k" are: a quarter of the positions, at least 1.
    pub fn k(&self) -> usize {
        (self.by_rank.len() / 4).max(1)
    }

    /// The share of requests that went to the first `k()` positions.
    pub fn first_k_share(&self) -> Option<f64> {
        let total = self.total();
        (total > 0).then(|| self.by_rank[..self.k()].iter().sum::<u64>() as f64 / total as f64)
    }

    /// Spearman's rank correlation between position (1 = first) and requests, over the
    /// positions; negative: the first positions get more. `None` with fewer than 3 positions
    /// or no variation.
    pub fn rank_correlation(&self) -> Option<f64> {
        if self.by_rank.len() < 3 || self.total() == 0 {
            return None;
        }
        let positions: Vec<f64> = (1..=self.by_rank.len()).map(|p| p as f64).collect();
        let counts: Vec<f64> = self.by_rank.iter().map(|c| *c as f64).collect();
        spearman(&positions, &counts)
    }
}

/// Spearman's ρ: Pearson's correlation of the ranks (ties get their mean rank).
pub fn spearman(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() != b.len() || a.len() < 2 {
        return None;
    }
    pearson(&ranks(a), &ranks(b))
}

fn ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|i, j| values[*i].total_cmp(&values[*j]));
    let mut out = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        let mean = (i + j) as f64 / 2.0 + 1.0;
        for k in i..=j {
            out[order[k]] = mean;
        }
        i = j + 1;
    }
    out
}

fn pearson(a: &[f64], b: &[f64]) -> Option<f64> {
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
    (va > 0.0 && vb > 0.0).then(|| cov / (va * vb).sqrt())
}

/// Each replica's rendered lists over time: (t_s, servers), in time order.
pub fn ingress_lists(run: &RunData) -> BTreeMap<u32, Vec<(f64, Vec<String>)>> {
    let mut out: BTreeMap<u32, Vec<(f64, Vec<String>)>> = BTreeMap::new();
    for e in &run.events {
        if let EventKind::Ingress {
            replica, servers, ..
        } = &e.kind
        {
            out.entry(*replica)
                .or_default()
                .push((e.t_s, servers.clone()));
        }
    }
    out
}

/// Requests by list position over the window (see the module doc).
pub fn position_shares(run: &RunData, window: Window) -> PositionShares {
    let lists = ingress_lists(run);
    let per_second = requests_per_second(run);
    let mut by_rank: Vec<u64> = Vec::new();
    let mut by_pod: BTreeMap<String, (u64, f64, u64)> = BTreeMap::new();
    for second in 0..run.seconds() {
        if !window.has_second(second) {
            continue;
        }
        let t = second as f64;
        let mut positions: BTreeMap<&str, (f64, u32)> = BTreeMap::new();
        for history in lists.values() {
            let Some((_, servers)) = history.iter().take_while(|(at, _)| *at <= t).last() else {
                continue;
            };
            for (i, pod) in servers.iter().enumerate() {
                let p = positions.entry(pod.as_str()).or_default();
                p.0 += (i + 1) as f64;
                p.1 += 1;
            }
        }
        let mut ranked: Vec<(&str, f64)> = positions
            .into_iter()
            .map(|(pod, (sum, n))| (pod, sum / f64::from(n)))
            .collect();
        ranked.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(b.0)));
        if by_rank.len() < ranked.len() {
            by_rank.resize(ranked.len(), 0);
        }
        for (rank, (pod, _)) in ranked.iter().enumerate() {
            let n = per_second
                .get(*pod)
                .and_then(|v| v.get(second))
                .copied()
                .unwrap_or(0);
            by_rank[rank] += n;
            let entry = by_pod.entry((*pod).to_owned()).or_default();
            entry.0 += n;
            entry.1 += (rank + 1) as f64;
            entry.2 += 1;
        }
    }
    PositionShares {
        by_rank,
        by_pod: by_pod
            .into_iter()
            .map(|(pod, (n, ranks, seconds))| (pod, (n, ranks / seconds.max(1) as f64)))
            .collect(),
    }
}

fn describe(shares: &PositionShares) -> String {
    let total = shares.total().max(1) as f64;
    let parts: Vec<String> = shares
        .by_rank
        .iter()
        .enumerate()
        .map(|(i, n)| format!("#{} {:.0}%", i + 1, *n as f64 * 100.0 / total))
        .collect();
    format!(
        "{} requests by list position: {}",
        shares.total(),
        parts.join(", ")
    )
}

/// Spearman's ρ between list position and requests (negative: the first positions get more).
pub fn position_rank_correlation(run: &RunData, window: Window) -> Measured {
    let shares = position_shares(run, window);
    Measured {
        value: shares.rank_correlation(),
        evidence: describe(&shares),
    }
}

/// The share of requests that went to the first quarter of the list positions.
pub fn first_positions_share(run: &RunData, window: Window) -> Measured {
    let shares = position_shares(run, window);
    let k = shares.k();
    let n = shares.by_rank.len();
    Measured {
        value: shares.first_k_share(),
        evidence: format!(
            "the first {k} of {n} positions (a fair share is {:.0}%); {}",
            k as f64 * 100.0 / n.max(1) as f64,
            describe(&shares)
        ),
    }
}

/// Per pod: when it left the ready endpoints in the window because its readiness failed.
pub fn readiness_flip_times(run: &RunData, window: Window) -> BTreeMap<String, Vec<f64>> {
    let mut out: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for e in &run.events {
        if let EventKind::Endpoint { pod, ready: false } = &e.kind
            && window.has_instant(e.t_s)
            && !terminated_at(run, pod, e.t_s)
        {
            out.entry(pod.clone()).or_default().push(e.t_s);
        }
    }
    out
}

/// Per pod: how often its readiness failed in the window.
pub fn readiness_flips_per_pod(run: &RunData, window: Window) -> BTreeMap<String, u64> {
    readiness_flip_times(run, window)
        .into_iter()
        .map(|(pod, times)| (pod, times.len() as u64))
        .collect()
}

/// Whether `pod` was deleted at `t_s` (its leaving the endpoints is its termination, not a
/// failed readiness probe).
fn terminated_at(run: &RunData, pod: &str, t_s: f64) -> bool {
    run.events.iter().any(|e| {
        matches!(&e.kind, EventKind::Termination { pod: p, .. } | EventKind::Pod { pod: p, created: false, .. } if p == pod)
            && (e.t_s - t_s).abs() < 1e-6
    })
}

/// Pods leaving the ready endpoints because their readiness failed (not their deletion).
pub fn readiness_flips(run: &RunData, window: Window) -> Measured {
    let flips = readiness_flips_per_pod(run, window);
    let total: u64 = flips.values().sum();
    let parts: Vec<String> = flips.iter().map(|(p, n)| format!("{p} {n}")).collect();
    Measured {
        value: Some(total as f64),
        evidence: if flips.is_empty() {
            "no pod failed its readiness".into()
        } else {
            format!(
                "{total} readiness failures over {} pods: {}",
                flips.len(),
                parts.join(", ")
            )
        },
    }
}

/// Per replica: (reloads, restarts, runtime-API updates) in the window; the first start
/// counts for nothing.
pub fn ingress_changes(run: &RunData, window: Window) -> BTreeMap<u32, (u64, u64, u64)> {
    let mut out: BTreeMap<u32, (u64, u64, u64)> = BTreeMap::new();
    for e in &run.events {
        if let EventKind::Ingress {
            replica, change, ..
        } = &e.kind
        {
            let c = out.entry(*replica).or_default();
            if !window.has_instant(e.t_s) {
                continue;
            }
            match change {
                IngressChange::Start => {}
                IngressChange::Reload => c.0 += 1,
                IngressChange::Restart => c.1 += 1,
                IngressChange::RuntimeApi => c.2 += 1,
            }
        }
    }
    out
}

/// HAProxy restarts over every ingress replica in the window.
pub fn ingress_restarts(run: &RunData, window: Window) -> Measured {
    let changes = ingress_changes(run, window);
    if changes.is_empty() {
        return Measured {
            value: None,
            evidence: "the run has no ingress replicas".into(),
        };
    }
    let (reloads, restarts, runtime) = changes
        .values()
        .fold((0, 0, 0), |a, c| (a.0 + c.0, a.1 + c.1, a.2 + c.2));
    Measured {
        value: Some(restarts as f64),
        evidence: format!(
            "{restarts} restarts, {reloads} reloads and {runtime} runtime-API updates over {} replicas",
            changes.len()
        ),
    }
}

/// The worst per-pod p90 latency, in seconds (each pod's p90 over the whole run, from the
/// generators' per-backend histograms; the highest over generators).
pub fn pod_latency_p90_max(run: &RunData, _window: Window) -> Measured {
    let worst = run
        .generators
        .iter()
        .flat_map(|g| g.report.by_backend.iter())
        .filter(|(_, b)| b.requests > 0)
        .map(|(pod, b)| (pod, b.latency_ms.p90))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    match worst {
        Some((pod, ms)) => Measured {
            value: Some(ms / 1000.0),
            evidence: format!("worst per-pod p90 {ms:.1} ms ({pod}, over the whole run)"),
        },
        None => Measured {
            value: None,
            evidence: "no responses attributed to a pod".into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spearman_matches_worked_values() {
        // Perfectly decreasing: -1; with a tie, ranks 1, 2.5, 2.5, 4.
        assert_eq!(
            spearman(&[1.0, 2.0, 3.0, 4.0], &[40.0, 30.0, 20.0, 10.0]),
            Some(-1.0)
        );
        let r = spearman(&[1.0, 2.0, 3.0, 4.0], &[10.0, 20.0, 20.0, 40.0]).unwrap();
        assert!((r - 0.9486832980505138).abs() < 1e-12, "{r}");
        assert_eq!(spearman(&[1.0, 2.0, 3.0], &[5.0, 5.0, 5.0]), None);
    }

    #[test]
    fn first_k_is_a_quarter_of_the_positions() {
        let s = PositionShares {
            by_rank: vec![30, 20, 10, 10, 10, 10, 5, 5],
            by_pod: BTreeMap::new(),
        };
        assert_eq!(s.k(), 2);
        assert_eq!(s.first_k_share(), Some(0.5));
        assert!(s.rank_correlation().unwrap() < -0.9);
    }
}

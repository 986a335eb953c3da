//! The balancer's accounting while it runs: the routable set, the round-robin cursor and the
//! counters behind [`LbStats`] (the types and the counting rules are the workload contract's,
//! `workload_contract::loadbalancer`, which the harness reads).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

pub use workload_contract::loadbalancer::{
    Counts, LbErrorReason, LbStats, PodStats, RoutableChange,
};

use super::PodTarget;

/// How a request sent to a target ended, as far as the balancer saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The target's response head was relayed with this status.
    Relayed(u16),
    /// The balancer answered itself (502/504).
    LbError(LbErrorReason),
    /// The client went away before a response head was sent.
    ClientClosed,
}

fn record(counts: &mut Counts, outcome: Outcome) {
    match outcome {
        Outcome::Relayed(status) => *counts.by_status.entry(status).or_default() += 1,
        Outcome::LbError(reason) => {
            *counts.by_status.entry(reason.status()).or_default() += 1;
            *counts.lb_errors.entry(reason).or_default() += 1;
        }
        Outcome::ClientClosed => counts.client_closed += 1,
    }
}

/// The mutable state behind the balancer: the routable set, the round-robin cursor and the
/// accounting.
#[derive(Debug, Default)]
pub(super) struct State {
    pub(super) targets: Vec<PodTarget>,
    next: usize,
    pub(super) connections: u64,
    /// Bucket width in ms (0 means the default, 1000).
    pub(super) bucket_ms: u64,
    no_target: u64,
    no_target_buckets: BTreeMap<u64, u64>,
    pods: BTreeMap<String, PodStats>,
}

impl State {
    /// Replaces the routable set at `since` (time since the epoch), noting membership changes.
    pub(super) fn set_targets(&mut self, targets: Vec<PodTarget>, since: Duration) {
        let at_ms = millis(since);
        let old: BTreeSet<&str> = self.targets.iter().map(|t| t.pod.as_str()).collect();
        let new: BTreeSet<&str> = targets.iter().map(|t| t.pod.as_str()).collect();
        let mut changes = Vec::new();
        for pod in old.difference(&new) {
            changes.push((pod.to_string(), false));
        }
        for pod in new.difference(&old) {
            changes.push((pod.to_string(), true));
        }
        for (pod, routable) in changes {
            self.pods
                .entry(pod)
                .or_default()
                .routable
                .push(RoutableChange { at_ms, routable });
        }
        self.targets = targets;
    }

    /// An empty state with buckets `bucket_ms` wide.
    pub(super) fn with_bucket_ms(bucket_ms: u64) -> Self {
        State {
            bucket_ms,
            ..State::default()
        }
    }

    fn width_ms(&self) -> u64 {
        if self.bucket_ms == 0 {
            1000
        } else {
            self.bucket_ms
        }
    }

    /// Picks the next routable target round robin and counts the request as sent at `since`;
    /// returns it with the bucket the request belongs to. None (and a no-target 503 counted)
    /// when nothing is routable.
    pub(super) fn pick(&mut self, since: Duration) -> Option<(PodTarget, u64)> {
        let second = millis(since) / self.width_ms();
        if self.targets.is_empty() {
            self.no_target += 1;
            *self.no_target_buckets.entry(second).or_default() += 1;
            return None;
        }
        let target = self.targets[self.next % self.targets.len()].clone();
        self.next = self.next.wrapping_add(1);
        let pod = self.pods.entry(target.pod.clone()).or_default();
        let ms = millis(since);
        pod.totals.sent += 1;
        pod.buckets.entry(second).or_default().sent += 1;
        pod.in_flight += 1;
        pod.first_sent_ms.get_or_insert(ms);
        pod.last_sent_ms = Some(ms);
        Some((target, second))
    }

    /// Records the outcome of a request sent to `pod` in second `second`.
    pub(super) fn record(&mut self, pod: &str, second: u64, outcome: Outcome) {
        let stats = self.pods.entry(pod.to_string()).or_default();
        record(&mut stats.totals, outcome);
        record(stats.buckets.entry(second).or_default(), outcome);
    }

    /// Records a relayed body cut short.
    pub(super) fn record_body_error(&mut self, pod: &str, second: u64) {
        let stats = self.pods.entry(pod.to_string()).or_default();
        stats.totals.body_errors += 1;
        stats.buckets.entry(second).or_default().body_errors += 1;
    }

    /// A request to `pod` is completely finished.
    pub(super) fn done(&mut self, pod: &str) {
        if let Some(stats) = self.pods.get_mut(pod) {
            stats.in_flight = stats.in_flight.saturating_sub(1);
        }
    }

    pub(super) fn snapshot(&self, since: Duration, epoch_unix_us: u64) -> LbStats {
        let mut totals = Counts::default();
        for pod in self.pods.values() {
            totals.add(&pod.totals);
        }
        LbStats {
            elapsed_ms: millis(since),
            epoch_unix_us,
            bucket_ms: self.width_ms(),
            connections: self.connections,
            totals,
            no_target: self.no_target,
            no_target_buckets: self.no_target_buckets.clone(),
            pods: self.pods.clone(),
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(pod: &str, port: u16) -> PodTarget {
        PodTarget {
            pod: pod.into(),
            addr: ([127, 0, 0, 1], port).into(),
        }
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn buckets_by_send_second_sum_to_totals() {
        let mut state = State::default();
        state.set_targets(vec![target("a", 1), target("b", 2)], ms(0));
        // a at 0.5 s, b at 1.2 s, a at 1.9 s, b at 3.0 s.
        let picks: Vec<_> = [500, 1200, 1900, 3000]
            .into_iter()
            .map(|t| (state.pick(ms(t)).unwrap().0.pod, t / 1000))
            .collect();
        assert_eq!(
            picks,
            vec![
                ("a".to_string(), 0),
                ("b".to_string(), 1),
                ("a".to_string(), 1),
                ("b".to_string(), 3)
            ]
        );
        state.record("a", 0, Outcome::Relayed(200));
        state.record("b", 1, Outcome::LbError(LbErrorReason::Connect));
        state.record("a", 1, Outcome::ClientClosed);
        state.done("a");
        state.done("b");
        state.done("a");
        state.set_targets(vec![target("b", 2)], ms(3500));
        state.set_targets(vec![], ms(4000));
        assert!(state.pick(ms(4100)).is_none());

        let stats = state.snapshot(ms(5000), 0);
        let (a, b) = (stats.pod("a").unwrap(), stats.pod("b").unwrap());
        assert_eq!(a.totals.sent, 2);
        assert_eq!(a.totals.status(200), 1);
        assert_eq!(a.totals.client_closed, 1);
        assert_eq!(a.in_flight, 0);
        assert_eq!((a.first_sent_ms, a.last_sent_ms), (Some(500), Some(1900)));
        assert_eq!(a.removed_at_ms(), Some(3500));
        assert_eq!(b.removed_at_ms(), Some(4000));
        assert_eq!(b.in_flight, 1, "b's request sent at 3.0 s has no outcome");
        assert_eq!(b.totals.lb_error(LbErrorReason::Connect), 1);
        assert_eq!(b.totals.bad_gateway(), 1);
        assert_eq!(b.window(1, 2).bad_gateway(), 1);
        assert_eq!(b.window(2, 4).sent, 1);
        assert_eq!(b.window(2, 4).finished(), 0);
        for pod in stats.pods.values() {
            assert_eq!(pod.bucket_sum(), pod.totals);
        }
        assert_eq!(stats.totals.sent, 4);
        assert_eq!((stats.no_target, stats.requests()), (1, 5));
        assert_eq!(stats.no_target_buckets, BTreeMap::from([(4, 1)]));
        let json = serde_json::to_string(&stats).unwrap();
        let back: LbStats = serde_json::from_str(&json).unwrap();
        assert_eq!(back, stats);
    }
}

//! In words, for outages: when a zone's callers lose every pod of their own zone and fail over
//! to other zones' pods, and when they reach their own zone again (from the reachability
//! events, on the Kubernetes clock), and the SSE streams that stayed on pods after those pods
//! left the endpoints (kube-proxy leaves established connections alone).

use std::collections::BTreeMap;

use crate::clock::TimeScale;
use crate::measure::{EventKind, Removal, RunData};
use crate::text::thousands;

/// "12.0s: callers in zone a fail over to other zones' pods (they reach 4 pods, none in zone
/// a)" and "30.0s: callers in zone a reach pods of their own zone again (2 of 6)". Only changes
/// after load start, and only for zones whose callers reached own-zone pods before.
pub fn failover_story(run: &RunData, scale: TimeScale) -> Vec<String> {
    let zone_of: BTreeMap<&str, &str> = run
        .pods
        .iter()
        .map(|p| (p.name.as_str(), p.zone.as_str()))
        .collect();
    let caller_zones: Vec<&str> = run.generators.iter().map(|g| g.zone.as_str()).collect();
    // Zone → whether its callers reach a pod of their own zone.
    let mut own: BTreeMap<&str, bool> = BTreeMap::new();
    let mut story = Vec::new();
    for event in &run.events {
        let EventKind::Reachability { zone, pods, .. } = &event.kind else {
            continue;
        };
        if !caller_zones.contains(&zone.as_str()) {
            continue;
        }
        let in_zone = pods
            .iter()
            .filter(|p| zone_of.get(p.as_str()) == Some(&zone.as_str()))
            .count();
        let now = in_zone > 0;
        let before = own.insert(zone.as_str(), now);
        if event.t_s < 0.0 {
            continue;
        }
        match (before, now) {
            (Some(true), false) if !pods.is_empty() => story.push(format!(
                "{}: callers in zone {zone} fail over to other zones' pods (they reach {} pods, none in zone {zone})",
                scale.instant_text(event.t_s),
                pods.len()
            )),
            (Some(true), false) => story.push(format!(
                "{}: callers in zone {zone} reach no pod at all",
                scale.instant_text(event.t_s)
            )),
            (Some(false), true) => story.push(format!(
                "{}: callers in zone {zone} reach pods of their own zone again ({in_zone} of {})",
                scale.instant_text(event.t_s),
                pods.len()
            )),
            _ => {}
        }
    }
    story
}

/// SSE streams still open at the end on pods that had left the endpoints and were not gone:
/// streams opened on the pod minus those that ended, per pod.
pub fn streams_on_removed_pods(run: &RunData, removals: &[Removal]) -> Option<String> {
    let mut per_pod: BTreeMap<&str, u64> = BTreeMap::new();
    for removal in removals.iter().filter(|r| r.to_s.is_none()) {
        let open: u64 = run
            .generators
            .iter()
            .filter_map(|g| g.report.sse.by_backend.get(&removal.pod))
            .map(|b| b.opened.saturating_sub(b.failed))
            .sum();
        if open > 0 {
            per_pod.insert(removal.pod.as_str(), open);
        }
    }
    if per_pod.is_empty() {
        return None;
    }
    let total: u64 = per_pod.values().sum();
    let listed: Vec<String> = per_pod
        .iter()
        .map(|(pod, n)| format!("{pod} {}", thousands(*n)))
        .collect();
    Some(format!(
        "{} SSE streams stayed on pods that had left the endpoints until the end ({}): kube-proxy steers only new connections, so a stream keeps its pod",
        thousands(total),
        crate::text::first_few(&listed, 8)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{PodRun, RecordedEvent};

    fn reach(t_s: f64, zone: &str, pods: &[&str]) -> RecordedEvent {
        RecordedEvent {
            t_s,
            kind: EventKind::Reachability {
                zone: zone.into(),
                pods: pods.iter().map(|p| p.to_string()).collect(),
                ready_pods: pods.len(),
            },
        }
    }

    fn pod(name: &str, zone: &str) -> PodRun {
        PodRun {
            name: name.into(),
            node: format!("{zone}-1"),
            zone: zone.into(),
            max_concurrency: 1,
            samples: Vec::new(),
        }
    }

    #[test]
    fn a_zone_that_loses_its_pods_fails_over_and_comes_back() {
        let mut run = RunData {
            pods: vec![
                pod("pod-0", "a"),
                pod("pod-1", "a"),
                pod("pod-2", "b"),
                pod("pod-3", "b"),
            ],
            events: vec![
                reach(-1.0, "a", &["pod-0", "pod-1"]),
                reach(-1.0, "b", &["pod-2", "pod-3"]),
                reach(10.0, "a", &["pod-2", "pod-3"]),
                reach(10.0, "b", &["pod-2", "pod-3"]),
                reach(30.0, "a", &["pod-0", "pod-1", "pod-2", "pod-3"]),
            ],
            ..RunData::default()
        };
        // Without a caller in a zone nothing is said about it.
        assert!(failover_story(&run, TimeScale::default()).is_empty());
        let caller = crate::measure::GeneratorRun {
            name: "g".into(),
            zone: "a".into(),
            report: Default::default(),
        };
        run.generators = vec![caller];
        let story = failover_story(&run, TimeScale::default());
        assert_eq!(story.len(), 2, "{story:?}");
        assert!(story[0].starts_with("10.0s: callers in zone a fail over to other zones' pods (they reach 2 pods, none in zone a)"), "{story:?}");
        assert!(
            story[1].starts_with(
                "30.0s: callers in zone a reach pods of their own zone again (2 of 4)"
            ),
            "{story:?}"
        );
    }
}

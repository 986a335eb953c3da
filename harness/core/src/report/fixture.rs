//! A small failing summary, and a self-audit for it, that the renderers' unit tests share.

use super::*;
use std::collections::BTreeMap;

/// A small failing summary used by the renderers' tests.
pub fn failing_summary() -> Summary {
    let mut requests_per_pod = BTreeMap::new();
    requests_per_pod.insert("pod-1".to_string(), vec![50, 60, 55]);
    requests_per_pod.insert("pod-2".to_string(), vec![0, 0, 1]);
    Summary {
        schema: SUMMARY_SCHEMA.to_string(),
        scenario: "topology-skew".into(),
        variant: Some("incident".into()),
        target: "local".into(),
        run_id: "20261129-000000-abcd".into(),
        seed: 7,
        started_at: "2026-11-29T00:00:00Z".into(),
        duration_s: 3.0,
        time_scale: 1.0,
        verdict: Verdict::Fail,
        partial: false,
        partial_reason: None,
        explanation: vec!["starvedPods = 1 > 0: pod-2 <starved> & idle".into()],
        expectations: vec![ExpectationResult {
            name: "no starved pods".into(),
            metric: "starvedPods".into(),
            window: WindowSummary {
                text: "whole run".into(),
                from_s: 0.0,
                to_s: 3.0,
            },
            observed: Some(1.0),
            threshold: Threshold {
                min: None,
                max: Some(0.0),
            },
            passed: false,
            evidence: "pod-2 received 1 of 166 requests".into(),
            incomplete: None,
            origin_zone: None,
            destination_zone: None,
        }],
        totals: Totals::default(),
        pods: vec![pod("pod-1", 165, 165, 160), pod("pod-2", 120, 2, 1)],
        skew: SkewSummary::default(),
        traffic_matrix: [(
            "zone-a".to_string(),
            [("pod-1".to_string(), 160), ("pod-2".to_string(), 1)]
                .into_iter()
                .collect(),
        )]
        .into_iter()
        .collect(),
        traffic_bytes: [(
            "zone-a".to_string(),
            [
                (
                    "pod-1".to_string(),
                    TrafficBytes {
                        sent: 12_800,
                        received: 40_000,
                    },
                ),
                (
                    "pod-2".to_string(),
                    TrafficBytes {
                        sent: 80,
                        received: 250,
                    },
                ),
            ]
            .into_iter()
            .collect(),
        )]
        .into_iter()
        .collect(),
        // Both pods are in zone-b, every caller in zone-a: all of it crosses.
        cross_zone: Some(CrossZoneSummary {
            requests: 161,
            bytes: 53_130,
            bytes_sent: 12_880,
            bytes_received: 40_250,
            share: Some(1.0),
            attributed_requests: 161,
            same_zone_requests: 0,
            same_zone_bytes: 0,
            unzoned_requests: 0,
            unzoned_bytes: 0,
            seconds: 3.0,
            price_per_gb: 0.01,
            estimated_monthly_usd: Some(53_130.0 / 3.0 * 2_592_000.0 / 1e9 * 0.01),
            proxied: None,
        }),
        hints: HintsSummary {
            events: vec![
                HintEventSummary {
                    t_s: -2.0,
                    kind: "Warning".into(),
                    reason: "TopologyAwareHintsDisabled".into(),
                    message: "Insufficient number of endpoints (0 endpoints, 2 zones)".into(),
                },
                HintEventSummary {
                    t_s: 1.5,
                    kind: "Normal".into(),
                    reason: "TopologyAwareHintsEnabled".into(),
                    message: "Topology Aware Hints has been enabled".into(),
                },
            ],
            flaps: 1,
        },
        series: Series {
            requests_per_pod,
            error_rate: vec![0.0, 0.5, 0.1],
            attempted: vec![50, 120, 56],
            markers: vec![Marker {
                t_s: 1.0,
                label: "node-change".into(),
            }],
            hints_enabled: vec![false, true, true],
            destination_rps: vec![50.0, 60.0, 56.0],
            replicas: vec![2, 2, 2],
            arrivals_per_pod: [
                ("pod-1".to_string(), vec![50, 60, 55]),
                ("pod-2".to_string(), vec![40, 40, 40]),
            ]
            .into_iter()
            .collect(),
            in_flight_per_pod: [
                ("pod-1".to_string(), vec![Some(3), Some(4), Some(2)]),
                ("pod-2".to_string(), vec![Some(20), Some(20), None]),
            ]
            .into_iter()
            .collect(),
            errors_by_kind: [("timeout".to_string(), vec![0, 60, 10])]
                .into_iter()
                .collect(),
            hints_per_pod: [
                (
                    "pod-1".to_string(),
                    vec![None, Some("zone-a".into()), Some("zone-a".into())],
                ),
                (
                    "pod-2".to_string(),
                    vec![None, Some("zone-b".into()), Some("zone-b".into())],
                ),
            ]
            .into_iter()
            .collect(),
            ..Series::default()
        },
        unattributed: None,
        invocation: None,
        removals: Vec::new(),
        model_agreement: None,
        kubernetes: None,
        audit: None,
        ingress: None,
    }
}

/// A pod with both sides: `arrived` at the sidecar, `admitted`, `answered` 200s.
fn pod(name: &str, arrived: u64, admitted: u64, answered: u64) -> PodSummary {
    let rejected: BTreeMap<String, u64> = [
        ("queue_full".to_string(), 0),
        ("queue_timeout".to_string(), 0),
    ]
    .into_iter()
    .collect();
    PodSummary {
        name: name.into(),
        node: "node-1".into(),
        zone: "zone-b".into(),
        requests: arrived,
        share: 0.5,
        starved: false,
        admitted,
        rejected: rejected.clone(),
        max_in_flight: if admitted < arrived { 20 } else { 4 },
        max_queue_depth: arrived - admitted,
        max_concurrency: 20,
        destination: Some(PodDestination {
            arrived,
            admitted,
            rejected,
            queued_at_end: 0,
            abandoned: arrived - admitted,
        }),
        source: Some(PodSource {
            responses: [("200".to_string(), answered)].into_iter().collect(),
            ..PodSource::default()
        }),
        load_balancer: None,
    }
}

/// A self-audit of two checks on `pod-3` and `pod-1`; `pod-3`'s has `status`.
pub fn audit(status: crate::audit::AuditStatus) -> crate::audit::Audit {
    use crate::audit::{Audit, AuditCheck, AuditStatus};
    let check = |subject: &str, status| AuditCheck {
        invariant: "answersWithinArrivals".into(),
        subject: subject.into(),
        statement: "answered 488 + streams 0 ≤ arrived 475".into(),
        values: Default::default(),
        status,
        note: None,
    };
    let checks = vec![check("pod-3", status), check("pod-1", AuditStatus::Held)];
    let violated = checks
        .iter()
        .filter(|c| c.status == AuditStatus::Violated)
        .count() as u32;
    Audit {
        held: violated == 0,
        checked: 2,
        violated,
        not_checked: 0,
        checks,
    }
}

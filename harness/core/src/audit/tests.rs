//! Unit tests of the self-audit: each invariant held on consistent numbers and violated, with
//! its numbers named, when one count is off.

use std::collections::BTreeMap;

use workload_contract::loadgen::Report;
use workload_contract::loadgen::report::{BackendReport, TimelineRow};

use super::*;
use crate::measure::{EventKind, GeneratorRun, LbAccount, PodRun, PodSample, RecordedEvent};
use crate::verdict::summarize::{RunFacts, summarize};

fn counts(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// One generator in zone z sends 10 requests in the first second; pod-0's sidecar admits 8
/// and rejects 2 (503).
fn run() -> RunData {
    let responses = counts(&[("200", 8), ("503", 2)]);
    let report = Report {
        attempted: 10,
        responses: responses.clone(),
        by_backend: BTreeMap::from([(
            "pod-0".to_string(),
            BackendReport {
                requests: 10,
                responses: responses.clone(),
                ..BackendReport::default()
            },
        )]),
        timeline: vec![TimelineRow {
            t: 0,
            attempted: 10,
            responses,
            by_backend: counts(&[("pod-0", 10)]),
            ..TimelineRow::default()
        }],
        ..Report::default()
    };
    RunData {
        duration_s: 1.0,
        generators: vec![GeneratorRun {
            name: "g".into(),
            zone: "z".into(),
            report,
        }],
        pods: vec![PodRun {
            name: "pod-0".into(),
            node: "n".into(),
            zone: "z".into(),
            max_concurrency: 4,
            samples: vec![PodSample {
                t_s: 1.5,
                received: 10,
                admitted: 8,
                rejected_queue_full: 2,
                ..PodSample::default()
            }],
        }],
        ..RunData::default()
    }
}

fn facts() -> RunFacts {
    RunFacts {
        scenario: "t".into(),
        variant: None,
        target: "local".into(),
        run_id: "r".into(),
        seed: 1,
        started_at: "1970-01-01T00:00:00Z".into(),
        time_scale: 1.0,
        partial_reason: None,
        ingress_controller: None,
        price_per_gb: 0.01,
        proxied_generators: Vec::new(),
    }
}

fn audited(run: &RunData) -> Audit {
    summarize(facts(), run, Vec::new()).audit.unwrap()
}

fn status_of<'a>(a: &'a Audit, invariant: &str, subject: &str) -> &'a AuditCheck {
    a.checks
        .iter()
        .find(|c| c.invariant == invariant && c.subject == subject)
        .unwrap_or_else(|| panic!("no {invariant} check of {subject}: {a:#?}"))
}

#[test]
fn a_run_whose_numbers_reconcile_passes_its_audit() {
    let a = audited(&run());
    assert!(a.held, "{a:#?}");
    assert_eq!(a.violated, 0);
    assert!(a.checked >= 8, "{a:#?}");
    assert_eq!(
        status_of(&a, "answersWithinArrivals", "pod-0").status,
        AuditStatus::Held
    );
    assert!(a.headline().starts_with("audit: all "), "{}", a.headline());
}

/// The user's pod-3: its callers got 488 answers from it (470 × 200, 18 × 503) while its
/// sidecar showed 475 arrivals and 4 rejections, because its counters were cut at
/// termination.
#[test]
fn answers_beyond_the_arrivals_are_a_violation_and_exit_three() {
    let mut r = run();
    r.pods[0].samples[0].received = 7;
    r.pods[0].samples[0].admitted = 6;
    r.pods[0].samples[0].rejected_queue_full = 1;
    let summary = summarize(facts(), &r, Vec::new());
    let a = summary.audit.as_ref().unwrap();
    assert!(!a.held);
    let answered = status_of(a, "answersWithinArrivals", "pod-0");
    assert_eq!(answered.status, AuditStatus::Violated);
    assert_eq!(answered.values["answered"], 10.0);
    assert_eq!(answered.values["arrived"], 7.0);
    assert_eq!(
        status_of(a, "rejectionsAnswered", "pod-0").status,
        AuditStatus::Violated,
        "2 503s against 1 rejection"
    );
    assert!(
        summary.explanation[0].contains("VIOLATED"),
        "{:?}",
        summary.explanation
    );
    let outcome = crate::engine::RunOutcome {
        summary,
        data: r,
        error: None,
        interrupted: false,
    };
    assert_eq!(
        outcome.exit_status(),
        crate::engine::ExitStatus::Infrastructure
    );
}

#[test]
fn a_pod_killed_before_reporting_is_not_checked_and_says_why() {
    let mut r = run();
    // Its last sample, a second before it was killed, misses the last arrivals.
    r.pods[0].samples[0].received = 7;
    r.pods[0].samples[0].admitted = 6;
    r.pods[0].samples[0].rejected_queue_full = 1;
    r.counters_cut.insert("pod-0".into());
    let a = audited(&r);
    let c = status_of(&a, "answersWithinArrivals", "pod-0");
    assert_eq!(c.status, AuditStatus::NotChecked);
    assert!(c.note.as_deref().unwrap().contains("killed"));
    assert!(a.held, "nothing violated: {a:#?}");
    assert!(a.not_checked >= 1);
}

#[test]
fn an_hpa_rate_that_counts_a_deleted_pod_is_a_violation() {
    let mut r = run();
    let at = |t_s, kind| RecordedEvent { t_s, kind };
    let created = |pod: &str| EventKind::Pod {
        pod: pod.into(),
        node: "n".into(),
        zone: "z".into(),
        created: true,
    };
    r.events = vec![
        at(-1.0, created("pod-0")),
        at(-1.0, created("pod-1")),
        at(
            0.4,
            EventKind::Termination {
                pod: "pod-1".into(),
                stage: crate::measure::TerminationStage::Deleted,
            },
        ),
        at(
            0.2,
            EventKind::Autoscaler {
                current: 2,
                desired: 2,
                source_rps: 10.0,
                destination_rps: 9.0,
                destination_by_pod: BTreeMap::from([("pod-0".into(), 5.0), ("pod-1".into(), 4.0)]),
            },
        ),
        at(
            0.6,
            EventKind::Autoscaler {
                current: 2,
                desired: 2,
                source_rps: 10.0,
                destination_rps: 9.0,
                destination_by_pod: BTreeMap::from([("pod-0".into(), 5.0), ("pod-1".into(), 4.0)]),
            },
        ),
    ];
    let a = audited(&r);
    assert_eq!(
        status_of(&a, "autoscalerCountsLivePods", "HPA sync at 0.2s").status,
        AuditStatus::Held
    );
    let late = status_of(&a, "autoscalerCountsLivePods", "HPA sync at 0.6s");
    assert_eq!(late.status, AuditStatus::Violated);
    assert!(
        late.statement.contains("not alive then: pod-1"),
        "{}",
        late.statement
    );

    // A sync whose own scale-down deletes a pod it counted, at the same instant and after it
    // on the timeline: the pod was alive when counted (a soak found this called dead).
    let sync = r.events[3].clone();
    r.events = vec![
        at(-1.0, created("pod-0")),
        at(-1.0, created("pod-1")),
        at(0.2, sync.kind.clone()),
        at(
            0.2,
            EventKind::Termination {
                pod: "pod-1".into(),
                stage: crate::measure::TerminationStage::Deleted,
            },
        ),
    ];
    let a = audited(&r);
    assert_eq!(
        status_of(&a, "autoscalerCountsLivePods", "HPA sync at 0.2s").status,
        AuditStatus::Held
    );
}

#[test]
fn the_load_balancers_account_must_close() {
    let mut r = run();
    r.lb_accounts.insert(
        "pod-0".into(),
        LbAccount {
            sent: 10,
            responses: 9,
            own_errors: 0,
            client_closed: 0,
            in_flight: 0,
        },
    );
    let a = audited(&r);
    assert_eq!(
        status_of(
            &a,
            "loadBalancerSentAccounted",
            "pod-0 at the load balancer"
        )
        .status,
        AuditStatus::Violated
    );
    r.lb_accounts.get_mut("pod-0").unwrap().client_closed = 1;
    let a = audited(&r);
    assert!(a.held, "{a:#?}");
}

#[test]
fn a_generator_whose_report_does_not_add_up_is_a_violation() {
    let mut r = run();
    r.generators[0].report.attempted = 11;
    let a = audited(&r);
    assert_eq!(
        status_of(&a, "attemptedAnsweredOrFailed", "generator g").status,
        AuditStatus::Violated
    );
}

/// Two zones: g-a in z calls pod-0 (in z) and pod-1 (in y) in second 0; pod-1's answers and
/// pod-1's SSE stream cross zones. Bytes: 100/1,000 to pod-0, 60/600 and a stream of 40/4,000
/// to pod-1; one request of 50 B got no answer.
fn two_zone_run() -> RunData {
    use workload_contract::loadgen::report::{ByteCounts, SseBackend};
    let b = |sent, received| ByteCounts { sent, received };
    let mut r = run();
    let report = &mut r.generators[0].report;
    report.attempted = 11;
    report.responses = counts(&[("200", 8), ("503", 2)]);
    report.transport_errors = counts(&[("reset", 1)]);
    report.by_backend = BTreeMap::from([
        (
            "pod-0".to_string(),
            BackendReport {
                requests: 6,
                responses: counts(&[("200", 6)]),
                bytes_sent: 100,
                bytes_received: 1_000,
                ..BackendReport::default()
            },
        ),
        (
            "pod-1".to_string(),
            BackendReport {
                requests: 4,
                responses: counts(&[("200", 2), ("503", 2)]),
                bytes_sent: 60,
                bytes_received: 600,
                ..BackendReport::default()
            },
        ),
    ]);
    report.sse.by_backend = BTreeMap::from([(
        "pod-1".to_string(),
        SseBackend {
            bytes_sent: 40,
            bytes_received: 4_000,
            ..SseBackend::default()
        },
    )]);
    report.unattributed_bytes = b(50, 0);
    report.timeline = vec![TimelineRow {
        t: 0,
        attempted: 11,
        responses: counts(&[("200", 8), ("503", 2)]),
        transport_errors: counts(&[("reset", 1)]),
        by_backend: counts(&[("pod-0", 6), ("pod-1", 4)]),
        non_2xx_by_backend: counts(&[("pod-1", 2)]),
        bytes_by_backend: BTreeMap::from([
            ("pod-0".to_string(), b(100, 1_000)),
            ("pod-1".to_string(), b(100, 4_600)),
        ]),
        ..TimelineRow::default()
    }];
    r.pods[0].samples[0].received = 6;
    r.pods[0].samples[0].admitted = 6;
    r.pods[0].samples[0].rejected_queue_full = 0;
    r.pods.push(PodRun {
        name: "pod-1".into(),
        node: "n-y".into(),
        zone: "y".into(),
        max_concurrency: 4,
        samples: vec![PodSample {
            t_s: 1.5,
            received: 4,
            admitted: 2,
            rejected_queue_full: 2,
            ..PodSample::default()
        }],
    });
    r
}

#[test]
fn bytes_and_the_cross_zone_split_reconcile() {
    let r = two_zone_run();
    let s = summarize(facts(), &r, Vec::new());
    let a = s.audit.as_ref().unwrap();
    assert!(a.held, "{a:#?}");
    for (invariant, subject) in [
        ("bytesBySecondArePerPod", "generator g"),
        ("matrixBytesAreZoneBytes", "origin zone z"),
        ("crossZoneRecount", "summary"),
        ("crossZoneSplitIsAttributed", "summary"),
        ("crossZoneBytesSplit", "summary"),
        ("crossZoneShareIsRatio", "summary"),
        ("crossZoneCostIsRate", "summary"),
    ] {
        assert_eq!(status_of(a, invariant, subject).status, AuditStatus::Held);
    }
    // Worked: pod-1 (zone y) answered 4 of the 10 attributed responses of z's caller, with
    // 100 + 4,600 bytes (its stream's included); 4,700 B in 1 s is 12.1824 GB in 30 days,
    // $0.121824 at $0.01/GB.
    let c = s.cross_zone.as_ref().unwrap();
    assert_eq!(
        (c.requests, c.same_zone_requests, c.attributed_requests),
        (4, 6, 10)
    );
    assert_eq!(
        (c.bytes, c.bytes_sent, c.bytes_received),
        (4_700, 100, 4_600)
    );
    assert_eq!(c.same_zone_bytes, 1_100);
    assert_eq!(c.share, Some(0.4));
    let usd = c.estimated_monthly_usd.unwrap();
    assert!((usd - 0.121_824).abs() < 1e-12, "{usd}");
    assert_eq!(
        c.sentence(),
        "cross-zone: 40.0% of requests (4 of 10), 4.70 kB in 1 s, about $0.12/month at this \
         rate and $0.01/GB each way"
    );
    assert_eq!(s.traffic_bytes["z"]["pod-1"].total(), 4_700);
}

#[test]
fn bytes_that_do_not_add_up_are_violations() {
    // The generator's per-second bytes lose 1 byte of pod-1's stream.
    let mut r = two_zone_run();
    let row = &mut r.generators[0].report.timeline[0];
    row.bytes_by_backend.get_mut("pod-1").unwrap().received -= 1;
    let a = audited(&r);
    let check = status_of(&a, "bytesBySecondArePerPod", "generator g");
    assert_eq!(check.status, AuditStatus::Violated);
    assert!(
        check.statement.starts_with("pod-1: bytes by second"),
        "{}",
        check.statement
    );

    // A summary whose crossZone figures were not recounted from its matrix.
    let r = two_zone_run();
    let mut s = summarize(facts(), &r, Vec::new());
    s.cross_zone.as_mut().unwrap().requests = 5;
    s.cross_zone.as_mut().unwrap().estimated_monthly_usd = Some(1.0);
    let a = super::audit(&r, &s);
    for invariant in [
        "crossZoneRecount",
        "crossZoneSplitIsAttributed",
        "crossZoneShareIsRatio",
        "crossZoneCostIsRate",
    ] {
        assert_eq!(
            status_of(&a, invariant, "summary").status,
            AuditStatus::Violated,
            "{invariant}"
        );
    }
    assert!(!a.held);
}

#[test]
fn proxied_callers_traffic_is_recounted_and_named_in_the_sentence() {
    let r = two_zone_run();
    let mut f = facts();
    f.proxied_generators = vec!["g".into()];
    let s = summarize(f, &r, Vec::new());
    let c = s.cross_zone.as_ref().unwrap();
    let p = c.proxied.as_ref().unwrap();
    // g is the run's only generator: its traffic is the whole matrix.
    let matrix: u64 = s.traffic_matrix.values().flat_map(|m| m.values()).sum();
    assert_eq!(p.requests, matrix);
    assert_eq!(p.bytes, 5_800);
    let a = s.audit.as_ref().unwrap();
    assert_eq!(
        status_of(a, "crossZoneProxiedRecount", "summary").status,
        AuditStatus::Held
    );
    assert!(
        c.sentence().ends_with(
            "; 10 of the responses went through the load balancer or the ingress, whose own \
             hops between zones these figures do not count (they compare each caller's zone \
             with its answering pod's)"
        ),
        "{}",
        c.sentence()
    );
    // One response more than the reports hold is a violation.
    let mut s = s.clone();
    s.cross_zone
        .as_mut()
        .unwrap()
        .proxied
        .as_mut()
        .unwrap()
        .requests += 1;
    let a = super::audit(&r, &s);
    assert_eq!(
        status_of(&a, "crossZoneProxiedRecount", "summary").status,
        AuditStatus::Violated
    );
    // Without proxied callers there is nothing to say.
    let s = summarize(facts(), &r, Vec::new());
    assert_eq!(s.cross_zone.unwrap().proxied, None);
}

//! Two runs side by side (`harness compare`, `harness run --baseline`, `--matrix`): from the
//! base's and the candidate's `summary.json`, every expectation, the error rate by kind, skew,
//! per-pod share, p50/p99 latency, the cross-zone share, bytes and estimated monthly cost, and
//! the ingress replicas' reloads, restarts and list-position share, each with its delta; bounds (`--max-regression METRIC=VALUE`) turn it into a gate.
//! Runs of different scenarios, or whose variants check different expectations, or partial
//! runs, are not comparable; runs on different Kubernetes versions, node images or targets are
//! compared, and the header says what differs (`notes`). The result is `compare.json` (schema `harness-compare/v1`),
//! `compare.md` and `compare.html` (`render`).

mod bound;
mod comparable;
mod cross_zone;
mod deltas;
mod differences;
mod render;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use bound::{Bound, BoundError};
pub use comparable::{PlannedRun, baseline_refusal};
pub use cross_zone::CrossZoneDelta;
use deltas::{expectation_deltas, metric_deltas, pod_deltas};
pub use render::{render_compare_html, render_compare_markdown};

use crate::report::{KubernetesInfo, Summary, Verdict};

/// Version tag of `compare.json`.
pub const COMPARE_SCHEMA: &str = "harness-compare/v1";

/// Which way a metric gets worse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Better {
    Lower,
    Higher,
    /// Neither: shown, never a regression.
    Neither,
}

/// One compared number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MetricDelta {
    /// `errorRate`, `errors.reset`, `skewMaxMean`, `latencyP99Ms`, `ingressRestarts`, or an
    /// expectation's metric (`expect.readinessFlips`).
    pub name: String,
    pub base: Option<f64>,
    pub candidate: Option<f64>,
    /// candidate − base; null when either is missing.
    pub delta: Option<f64>,
    pub better: Better,
    /// The `--max-regression` bound on how much worse the candidate may be.
    pub max_regression: Option<f64>,
    /// Worse than the bound (or missing in the candidate while bounded).
    pub regressed: bool,
}

/// One expectation in both runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExpectationDelta {
    pub name: String,
    pub metric: String,
    pub base_observed: Option<f64>,
    pub base_passed: bool,
    pub candidate_observed: Option<f64>,
    pub candidate_passed: bool,
}

/// One pod's share in both runs (a pod only one run has gets 0 in the other).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodShareDelta {
    pub pod: String,
    pub base: f64,
    pub candidate: f64,
    pub delta: f64,
}

/// Which run and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunRef {
    /// The run directory as given.
    pub dir: String,
    pub scenario: String,
    pub variant: Option<String>,
    pub run_id: String,
    pub verdict: Verdict,
    /// The command that repeats it, when recorded.
    pub command: Option<String>,
    /// `local` or `kind`.
    #[serde(default)]
    pub target: String,
    /// The Kubernetes it ran on (`v1.34.11`, `v1.34 (modelled)`); null when not recorded.
    #[serde(default)]
    pub kubernetes: Option<String>,
    /// The kind node image of the cluster the harness created for it; null otherwise.
    #[serde(default)]
    pub node_image: Option<String>,
}

/// The outcome of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CompareVerdict {
    /// Comparable, and no bound exceeded.
    Ok,
    /// A bound was exceeded.
    Regression,
    /// The runs cannot be compared (see `reason`).
    Incomparable,
}

/// `compare.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(title = "harness run comparison (harness-compare/v1)")]
pub struct Comparison {
    pub schema: String,
    pub base: RunRef,
    pub candidate: RunRef,
    pub verdict: CompareVerdict,
    /// Why the runs are not comparable; null when they are.
    pub reason: Option<String>,
    pub metrics: Vec<MetricDelta>,
    pub expectations: Vec<ExpectationDelta>,
    pub pods: Vec<PodShareDelta>,
    /// One sentence per exceeded bound.
    pub regressions: Vec<String>,
    /// What differs between the runs besides the change under test, for the header: the
    /// Kubernetes versions (`Kubernetes v1.33.1 → v1.34.0`), the node images, the targets.
    #[serde(default)]
    pub notes: Vec<String>,
    /// Both runs' cross-zone bytes and their estimated monthly cost, with the sentence the
    /// pages show; null when either run did not measure them.
    #[serde(default)]
    pub cross_zone: Option<CrossZoneDelta>,
}

/// Compares `candidate` against `base`; `dirs` are the run directories as given.
pub fn compare(
    base: &Summary,
    candidate: &Summary,
    dirs: (&str, &str),
    bounds: &[Bound],
) -> Result<Comparison, BoundError> {
    let reason = comparable::incomparable(base, candidate);
    let mut metrics = metric_deltas(base, candidate);
    let known: Vec<String> = metrics.iter().map(|m| m.name.clone()).collect();
    let mut regressions = Vec::new();
    for bound in bounds {
        let Some(m) = metrics.iter_mut().find(|m| m.name == bound.metric) else {
            return Err(BoundError::UnknownMetric {
                metric: bound.metric.clone(),
                known: known.join(", "),
            });
        };
        if m.better == Better::Neither {
            return Err(BoundError::NoDirection {
                metric: bound.metric.clone(),
            });
        }
        m.max_regression = Some(bound.value);
        let worse_by = match (m.base, m.candidate, m.better) {
            (Some(b), Some(c), Better::Lower) => Some(c - b),
            (Some(b), Some(c), Better::Higher) => Some(b - c),
            (_, None, _) => None,
            (None, Some(_), _) => Some(0.0),
            (_, _, Better::Neither) => Some(0.0),
        };
        m.regressed = worse_by.is_none_or(|w| w > bound.value + 1e-12);
        if m.regressed {
            regressions.push(match worse_by {
                Some(w) => format!(
                    "{}: {} → {} is worse by {} (more than the allowed {})",
                    m.name,
                    shown(m.base),
                    shown(m.candidate),
                    trim(w),
                    trim(bound.value)
                ),
                None => format!("{}: not measured in the candidate", m.name),
            });
        }
    }
    let verdict = match (&reason, regressions.is_empty()) {
        (Some(_), _) => CompareVerdict::Incomparable,
        (None, true) => CompareVerdict::Ok,
        (None, false) => CompareVerdict::Regression,
    };
    Ok(Comparison {
        schema: COMPARE_SCHEMA.to_owned(),
        base: run_ref(base, dirs.0),
        candidate: run_ref(candidate, dirs.1),
        verdict,
        reason,
        metrics,
        expectations: expectation_deltas(base, candidate),
        pods: pod_deltas(base, candidate),
        regressions,
        notes: notes(base, candidate),
        cross_zone: cross_zone::delta(base, candidate),
    })
}

/// The header's notes: which Kubernetes each run ran on, and what else about the runs differs.
/// A kind run and a local run of the same scenario and expectations are compared (the numbers
/// mean the same), with a note that the target differs too.
fn notes(base: &Summary, candidate: &Summary) -> Vec<String> {
    let label = |s: &Summary| {
        s.kubernetes
            .as_ref()
            .map_or_else(|| "not recorded".to_owned(), KubernetesInfo::label)
    };
    let (b, c) = (label(base), label(candidate));
    let mut out = vec![
        if base.kubernetes.is_none() && candidate.kubernetes.is_none() {
            "Kubernetes version not recorded in either run".to_owned()
        } else if b == c {
            format!("Kubernetes {b} in both runs")
        } else {
            format!("Kubernetes {b} → {c}")
        },
    ];
    let image = |s: &Summary| s.kubernetes.as_ref().and_then(|k| k.node_image.clone());
    let (bi, ci) = (image(base), image(candidate));
    if bi != ci {
        let shown = |i: &Option<String>| i.clone().unwrap_or_else(|| "none recorded".to_owned());
        out.push(format!("node image {} → {}", shown(&bi), shown(&ci)));
    }
    if base.target != candidate.target {
        out.push(format!(
            "targets differ: {} → {}; the kind target runs Kubernetes' own controllers with real \
             timings where the local target runs its models, so a difference can come from the \
             target as well as from the change under test",
            base.target, candidate.target
        ));
    }
    out.extend(differences::run_differences(base, candidate));
    out
}

fn run_ref(s: &Summary, dir: &str) -> RunRef {
    RunRef {
        dir: dir.to_owned(),
        scenario: s.scenario.clone(),
        variant: s.variant.clone(),
        run_id: s.run_id.clone(),
        verdict: s.verdict,
        command: s.invocation.as_ref().map(|i| i.command.clone()),
        target: s.target.clone(),
        kubernetes: s.kubernetes.as_ref().map(KubernetesInfo::label),
        node_image: s.kubernetes.as_ref().and_then(|k| k.node_image.clone()),
    }
}

/// The JSON Schema of `compare.json`.
pub fn compare_json_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(Comparison)).unwrap_or_default()
}

/// A number without trailing zeros (4 significant decimals).
pub(crate) fn trim(v: f64) -> String {
    let text = format!("{v:.4}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".into()
    } else {
        text.into()
    }
}

pub(crate) fn shown(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_owned(), trim)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::report::fixture::failing_summary;

    fn bound(text: &str) -> Bound {
        Bound::parse(text).unwrap()
    }

    #[test]
    fn bounds_parse_and_refuse_what_is_not_metric_equals_number() {
        assert_eq!(
            bound("errorRate=0.01"),
            Bound {
                metric: "errorRate".into(),
                value: 0.01
            }
        );
        assert!(matches!(
            Bound::parse("errorRate"),
            Err(BoundError::Syntax(_))
        ));
        assert!(matches!(
            Bound::parse("errorRate=-1"),
            Err(BoundError::Value { .. })
        ));
        assert!(matches!(Bound::parse("=1"), Err(BoundError::Syntax(_))));
    }

    /// A user wrote `--max-regression errorRate=1%` and `latencyP99Ms=5ms`, as expectations
    /// accept them, and both were refused. Each unit means the same as the plain number.
    #[test]
    fn bounds_take_the_units_expectations_take() {
        let same = |a: &str, b: &str| {
            let (x, y) = (bound(a).value, bound(b).value);
            assert!((x - y).abs() < 1e-12, "{a} = {x}, {b} = {y}");
        };
        same("errorRate=1%", "errorRate=0.01");
        same("latencyP99Ms=5ms", "latencyP99Ms=5");
        same("latencyP99Ms=0.25s", "latencyP99Ms=250");
        same("expect.rolloutDuration=1m", "expect.rolloutDuration=60");
        same("expect.rolloutDuration=500ms", "expect.rolloutDuration=0.5");
        assert!(matches!(
            Bound::parse("errorRate=-1%"),
            Err(BoundError::Value { .. })
        ));
        let err = Bound::parse("latencyP99Ms=fast").unwrap_err().to_string();
        assert!(
            err.contains("a percentage such as `1%`, or a duration such as `5ms`"),
            "{err}"
        );
    }

    #[test]
    fn worse_is_measured_in_each_metrics_direction_against_its_bound() {
        let mut base = failing_summary();
        base.totals.error_rate = 0.10;
        base.totals.attempted = 100;
        base.expectations[0].observed = Some(1.0); // starvedPods, a `max`: lower is better
        let mut floor = base.expectations[0].clone();
        floor.name = "enough replicas".into();
        floor.metric = "minReplicas".into();
        floor.threshold = crate::report::Threshold {
            min: Some(4.0),
            max: None,
        };
        floor.observed = Some(6.0);
        base.expectations.push(floor);
        let mut candidate = base.clone();
        candidate.totals.error_rate = 0.20;
        candidate.expectations[0].observed = Some(3.0);
        candidate.expectations[1].observed = Some(4.0);
        let c = compare(
            &base,
            &candidate,
            ("a", "b"),
            &[
                bound("errorRate=0.1"),
                bound("expect.starvedPods=1"),
                bound("expect.minReplicas=1"),
            ],
        )
        .unwrap();
        assert_eq!(c.verdict, CompareVerdict::Regression);
        let row = |name: &str| c.metrics.iter().find(|m| m.name == name).unwrap();
        // 0.10 → 0.20 is worse by exactly the bound: allowed.
        assert!(!row("errorRate").regressed);
        assert_eq!(row("errorRate").delta, Some(0.1));
        // 1 → 3 starved pods: worse by 2 > 1.
        assert!(row("expect.starvedPods").regressed);
        // A `min` expectation: higher is better; 6 → 4 is worse by 2 > 1.
        assert_eq!(row("expect.minReplicas").better, Better::Higher);
        assert!(row("expect.minReplicas").regressed);
        assert_eq!(c.regressions.len(), 2, "{:?}", c.regressions);
        // The other way round it is an improvement, and passes the same bounds.
        let back = compare(
            &candidate,
            &base,
            ("b", "a"),
            &[bound("expect.starvedPods=0"), bound("expect.minReplicas=0")],
        )
        .unwrap();
        assert_eq!(back.verdict, CompareVerdict::Ok);
    }

    #[test]
    fn the_notes_name_both_kubernetes_versions_and_a_change_of_target() {
        let mut base = failing_summary();
        base.target = "kind".into();
        base.kubernetes = Some(KubernetesInfo {
            version: Some("v1.33.1".into()),
            source: KubernetesInfo::OBSERVED.into(),
            node_image: Some("kindest/node:v1.33.1".into()),
            kubelet_versions: BTreeMap::from([("v1.33.1".into(), 5)]),
        });
        let mut candidate = base.clone();
        if let Some(k) = candidate.kubernetes.as_mut() {
            k.version = Some("v1.34.0".into());
            k.node_image = Some("kindest/node:v1.34.0".into());
        }
        let c = compare(&base, &candidate, ("a", "b"), &[]).unwrap();
        assert_eq!(c.verdict, CompareVerdict::Ok);
        assert_eq!(
            c.notes,
            [
                "Kubernetes v1.33.1 → v1.34.0",
                "node image kindest/node:v1.33.1 → kindest/node:v1.34.0",
                "both runs: variant incident, no --set values, seed 7, time scale 1"
            ]
        );
        assert_eq!(c.candidate.kubernetes.as_deref(), Some("v1.34.0"));
        let mut local = failing_summary();
        local.kubernetes = Some(KubernetesInfo::modelled("v1.34"));
        let c = compare(&local, &candidate, ("a", "b"), &[]).unwrap();
        assert_eq!(c.verdict, CompareVerdict::Ok, "kind against local compares");
        assert_eq!(c.notes[0], "Kubernetes v1.34 (modelled) → v1.34.0");
        assert!(
            c.notes[2].starts_with("targets differ: local → kind"),
            "{:?}",
            c.notes
        );
        let c = compare(&failing_summary(), &failing_summary(), ("a", "b"), &[]).unwrap();
        assert_eq!(
            c.notes,
            [
                "Kubernetes version not recorded in either run",
                "both runs: variant incident, no --set values, seed 7, time scale 1"
            ]
        );
    }

    #[test]
    fn partial_runs_and_other_scenarios_are_incomparable_and_unknown_rows_refused() {
        let base = failing_summary();
        let mut partial = base.clone();
        partial.partial = true;
        partial.partial_reason = Some("interrupted by the user".into());
        let c = compare(&base, &partial, ("a", "b"), &[]).unwrap();
        assert_eq!(c.verdict, CompareVerdict::Incomparable);
        assert!(c.reason.unwrap().contains("interrupted by the user"));
        let mut other = base.clone();
        other.scenario = "rollout-502".into();
        let c = compare(&base, &other, ("a", "b"), &[]).unwrap();
        assert!(c.reason.unwrap().contains("different scenarios"));
        let e = compare(&base, &base, ("a", "b"), &[bound("nope=1")]).unwrap_err();
        assert!(matches!(e, BoundError::UnknownMetric { .. }), "{e}");
    }

    /// compare.html once marked pass/fail with ✅/❌, empty boxes where no emoji font is
    /// installed: its text keeps to what text fonts carry, the marks are inline SVG.
    #[test]
    fn the_comparison_page_needs_no_emoji_font() {
        let mut candidate = failing_summary();
        candidate.expectations[0].passed = true;
        let c = compare(
            &failing_summary(),
            &candidate,
            ("a", "b"),
            &[bound("errorRate=0")],
        )
        .unwrap();
        let html = render_compare_html(&c);
        assert_eq!(crate::report::icons::font_safe(&html), Ok(()));
        assert!(
            html.contains("</svg> pass</span>") && html.contains("</svg> FAIL</span>"),
            "{html}"
        );
    }

    /// The candidate sends a seventh of the base's bytes across zones: both pages say so with
    /// its cost, and a bound on the bytes gates the other way round.
    #[test]
    fn cross_zone_bytes_are_compared_told_and_gated() {
        let base = failing_summary();
        let mut candidate = failing_summary();
        let z = candidate.cross_zone.as_mut().unwrap();
        z.bytes = 7_590;
        z.estimated_monthly_usd = crate::measure::monthly_cost_usd(7_590, 3.0, 0.01);
        let c = compare(&base, &candidate, ("a", "b"), &[bound("crossZoneBytes=0")]).unwrap();
        assert_eq!(c.verdict, CompareVerdict::Ok, "{:?}", c.regressions);
        let text = "cross-zone bytes −86 % (53.1 kB → 7.59 kB), about $0.07/month at this \
                    rate (base $0.46/month, −$0.39)";
        assert_eq!(c.cross_zone.as_ref().unwrap().text, text);
        assert!(render_compare_markdown(&c).contains(&format!("- {text}\n")));
        assert!(render_compare_html(&c).contains(&format!("<p class=\"cross-zone\">{text}</p>")));
        let worse = compare(
            &candidate,
            &base,
            ("b", "a"),
            &[bound("crossZoneBytes=1000")],
        )
        .unwrap();
        assert_eq!(worse.verdict, CompareVerdict::Regression);
        assert!(
            worse.regressions[0].starts_with("crossZoneBytes: 7590 → 53130"),
            "{:?}",
            worse.regressions
        );
    }
}

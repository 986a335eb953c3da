//! Whether two runs can be compared at all, and whether a stored run can be the baseline of a
//! run about to start: the same scenario, the same expectations (name and metric, in order),
//! complete runs — and, for a gate, the same target.

use crate::report::Summary;

/// Why the two runs cannot be compared, if they cannot.
pub(super) fn incomparable(base: &Summary, candidate: &Summary) -> Option<String> {
    let planned = |s: &Summary| PlannedRun {
        scenario: s.scenario.clone(),
        variant: s.variant.clone(),
        expectations: expectation_shape(s),
        target: s.target.clone(),
    };
    if let Some(why) = different_runs(&planned(base), &planned(candidate)) {
        return Some(why);
    }
    for (which, s) in [("base", base), ("candidate", candidate)] {
        if s.partial {
            return Some(partial_reason(which, s));
        }
    }
    None
}

/// What is known of a run before it starts: enough to tell whether a stored baseline can be
/// compared with it at all.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedRun {
    pub scenario: String,
    pub variant: Option<String>,
    /// Each expectation's (name, metric), in the file's order.
    pub expectations: Vec<(String, String)>,
    /// `local` or `kind`.
    pub target: String,
}

/// Why `base` cannot be the baseline of the run `planned`, checked before the run starts
/// (`harness run --baseline`): another scenario, other expectations, a partial base, or — for
/// a gate — another target (`harness compare` still sets runs of two targets side by side).
pub fn baseline_refusal(base: &Summary, planned: &PlannedRun) -> Option<String> {
    let stored = PlannedRun {
        scenario: base.scenario.clone(),
        variant: base.variant.clone(),
        expectations: expectation_shape(base),
        target: base.target.clone(),
    };
    if let Some(why) = different_runs(&stored, planned) {
        return Some(why);
    }
    if base.partial {
        return Some(partial_reason("base", base));
    }
    (!base.target.is_empty() && base.target != planned.target).then(|| {
        format!(
            "the baseline ran on target `{}` and this run is on `{}`: their numbers are not a gate for each other (run the baseline on `{}`, or set the two side by side afterwards with `harness compare`)",
            base.target, planned.target, planned.target
        )
    })
}

fn expectation_shape(s: &Summary) -> Vec<(String, String)> {
    s.expectations
        .iter()
        .map(|e| (e.name.clone(), e.metric.clone()))
        .collect()
}

fn partial_reason(which: &str, s: &Summary) -> String {
    format!(
        "the {which} run is partial ({}): its numbers cover only part of the load",
        s.partial_reason.as_deref().unwrap_or("cut short")
    )
}

/// Another scenario, or other expectations (name and metric, in order).
fn different_runs(base: &PlannedRun, candidate: &PlannedRun) -> Option<String> {
    if base.scenario != candidate.scenario {
        return Some(format!(
            "different scenarios: `{}` and `{}`",
            base.scenario, candidate.scenario
        ));
    }
    if base.expectations != candidate.expectations {
        let names = |r: &PlannedRun| {
            r.expectations
                .iter()
                .map(|(name, metric)| format!("{name} ({metric})"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Some(format!(
            "the runs check different expectations (variant `{}` vs `{}`): base [{}], candidate [{}]",
            base.variant.as_deref().unwrap_or("base"),
            candidate.variant.as_deref().unwrap_or("base"),
            names(base),
            names(candidate)
        ));
    }
    None
}

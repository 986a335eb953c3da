//! What separates two runs besides the change under test, for the comparison's header: the
//! variant, the `--set` values, the seed, the time scale and the harness version (each only
//! when it differs), or that none of these does.

use std::collections::BTreeSet;

use crate::report::Summary;

/// One sentence per difference, else one saying the runs agree on all of them.
pub(super) fn run_differences(base: &Summary, candidate: &Summary) -> Vec<String> {
    let mut out = Vec::new();
    let variant = |s: &Summary| {
        s.variant
            .clone()
            .unwrap_or_else(|| "the base document".to_owned())
    };
    if base.variant != candidate.variant {
        out.push(format!(
            "variant {} → {}",
            variant(base),
            variant(candidate)
        ));
    }
    let (bs, cs) = (overrides(base), overrides(candidate));
    if bs != cs {
        let only = |a: &BTreeSet<String>, b: &BTreeSet<String>| {
            let v: Vec<&str> = a.difference(b).map(String::as_str).collect();
            if v.is_empty() {
                "none".to_owned()
            } else {
                v.join(", ")
            }
        };
        out.push(format!(
            "--set values differ: base only {}; candidate only {}",
            only(&bs, &cs),
            only(&cs, &bs)
        ));
    }
    if base.seed != candidate.seed {
        out.push(format!("seed {} → {}", base.seed, candidate.seed));
    }
    if base.time_scale != candidate.time_scale {
        out.push(format!(
            "time scale {} → {}",
            base.time_scale, candidate.time_scale
        ));
    }
    let version = |s: &Summary| s.invocation.as_ref().map(|i| i.harness_version.clone());
    if let (Some(b), Some(c)) = (version(base), version(candidate))
        && b != c
    {
        out.push(format!("harness {b} → {c}"));
    }
    if out.is_empty() {
        let set = if bs.is_empty() {
            "no --set values".to_owned()
        } else {
            format!(
                "--set {}",
                bs.iter().cloned().collect::<Vec<_>>().join(", ")
            )
        };
        out.push(format!(
            "both runs: variant {}, {set}, seed {}, time scale {}",
            variant(base),
            base.seed,
            base.time_scale
        ));
    }
    out
}

/// The run's `--set` values (`PATH=VALUE`), read back from the command that repeats it.
fn overrides(s: &Summary) -> BTreeSet<String> {
    let Some(words) = s.invocation.as_ref().and_then(|i| shlex::split(&i.command)) else {
        return BTreeSet::new();
    };
    words
        .windows(2)
        .filter(|w| w[0] == "--set")
        .map(|w| w[1].clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Invocation;
    use crate::report::fixture::failing_summary;

    fn with(variant: Option<&str>, seed: u64, command: &str) -> Summary {
        let mut s = failing_summary();
        s.variant = variant.map(str::to_owned);
        s.seed = seed;
        s.invocation = Some(Invocation {
            harness_version: "0.1.0".into(),
            scenario_file: "s.yaml".into(),
            command: command.into(),
            workloads: Default::default(),
        });
        s
    }

    /// A user's compare header named both runs "base" and did not say what differed.
    #[test]
    fn the_header_says_what_separates_the_runs() {
        let base = with(
            None,
            1,
            "harness run s.yaml --set load.duration=30s --seed 1",
        );
        let candidate = with(
            Some("fixed"),
            7,
            "harness run s.yaml --variant fixed --set 'load.generators[g].rate=50' --set load.duration=30s --seed 7",
        );
        let d = run_differences(&base, &candidate);
        assert_eq!(
            d,
            [
                "variant the base document → fixed",
                "--set values differ: base only none; candidate only load.generators[g].rate=50",
                "seed 1 → 7",
            ]
        );
        let same = run_differences(&base, &base.clone());
        assert_eq!(
            same,
            ["both runs: variant the base document, --set load.duration=30s, seed 1, time scale 1"]
        );
    }
}

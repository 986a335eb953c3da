//! Random valid scenarios as a property test. Each is drawn from the scenario model (zones,
//! nodes, replicas, placement, routing, sidecar limits and queues, SSE, generator mixes and
//! connection models, a load balancer, an ingress, an autoscaler, timeline actions), run on
//! the local target at time scale 0.1, and must end with exit 0 or 1, pass its self-audit and
//! — without an autoscaler — reach the pods `harness plan` predicts after each step
//! (`random::check`). A failure is shrunk (proptest's value trees) to a smaller scenario that
//! still fails, and reported with its file.
//!
//! `make test` runs a fixed-seed set ([`FIXED_CASES`], about three minutes) and every
//! regression fixture in `scenarios/testdata/regressions/` (each a scenario a soak once found
//! failing). `make soak` runs many more (`HARNESS_SOAK_CASES`, default 200, from the seed
//! `HARNESS_SOAK_SEED`) and writes `results/soak/<date>-seed<seed>.md` with every failure's seed, case
//! and minimal scenario (`HARNESS_SOAK_REPORT`): each becomes a regression fixture.
//! `HARNESS_SOAK_ONLY=N` repeats one case of a seed; `HARNESS_SOAK_WRITE=DIR` keeps every
//! case's scenario file.

mod random;
mod support;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use random::render::{Rendered, render};
use random::spec::spec;

/// Cases in `make test`.
const FIXED_CASES: u32 = 20;
/// The seed of the fixed set.
const FIXED_SEED: u64 = 20261202;
/// Shrinking steps tried after a failure (each is a run of a few seconds).
const SHRINK_STEPS: u32 = 24;

fn runner(seed: u64) -> TestRunner {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
    )
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| {
        v.parse()
            .unwrap_or_else(|_| panic!("{name}={v}: expected a whole number"))
    })
}

/// The generator's own property, without running anything: every drawn spec renders a
/// scenario the loader accepts (so a refused run is never the generator's fault).
#[test]
fn every_spec_renders_a_valid_scenario() {
    let mut runner = runner(FIXED_SEED);
    let strategy = spec();
    for case in 0..2000 {
        let spec = strategy.new_tree(&mut runner).unwrap().current();
        let rendered = render(&spec);
        if let Err(e) =
            harness_core::scenario::load_scenario_str(&rendered.yaml, "random.yaml", None)
        {
            panic!(
                "case {case}: the rendered scenario does not load:\n{e}\n---\n{}",
                rendered.yaml
            );
        }
    }
}

/// One failure: where it came from, why, and the smallest scenario found that still fails.
struct Failure {
    case: u32,
    error: String,
    minimal: Rendered,
    minimal_error: String,
}

/// Runs `rendered` in a fresh directory.
fn run_one(rendered: &Rendered, seed: u64) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    random::check::check(rendered, seed, dir.path())
}

/// proptest's shrinking by hand (each step is a real run): simplify while it still fails,
/// step back when it passes, within [`SHRINK_STEPS`].
fn shrink(tree: &mut impl ValueTree<Value = random::spec::Spec>, seed: u64) -> (Rendered, String) {
    let mut last = (render(&tree.current()), String::new());
    for _ in 0..SHRINK_STEPS {
        if !tree.simplify() {
            break;
        }
        let candidate = render(&tree.current());
        match run_one(&candidate, seed) {
            Err(e) => last = (candidate, e),
            Ok(()) => {
                if !tree.complicate() {
                    break;
                }
            }
        }
    }
    last
}

#[test]
fn random_scenarios_run_clean_and_agree_with_the_plan() {
    support::require_workload_bins();
    let _turn = support::ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let cases = env_u64("HARNESS_SOAK_CASES").map_or(FIXED_CASES, |n| n as u32);
    let seed = env_u64("HARNESS_SOAK_SEED").unwrap_or(FIXED_SEED);
    let report = std::env::var_os("HARNESS_SOAK_REPORT").map(PathBuf::from);
    // `HARNESS_SOAK_ONLY=N` repeats case N of the seed alone (the cases before it are drawn,
    // not run), to reproduce a failure a soak reported.
    let only = env_u64("HARNESS_SOAK_ONLY").map(|n| n as u32);
    let started = std::time::Instant::now();
    let mut runner = runner(seed);
    let strategy = spec();
    let mut failures = Vec::new();
    let mut features = Features::default();
    for case in 0..cases {
        let mut tree = strategy.new_tree(&mut runner).unwrap();
        let rendered = render(&tree.current());
        // `HARNESS_SOAK_WRITE=DIR` keeps each case's file as DIR/case-N.yaml, to run by hand.
        if let Some(dir) = std::env::var_os("HARNESS_SOAK_WRITE") {
            let dir = PathBuf::from(dir);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(format!("case-{case}.yaml")), &rendered.yaml).unwrap();
        }
        if only.is_some_and(|n| n != case) {
            continue;
        }
        features.count(&tree.current(), &rendered);
        let run_seed = seed.wrapping_add(u64::from(case));
        if let Err(error) = run_one(&rendered, run_seed) {
            eprintln!("case {case}: FAILED: {error}");
            let (minimal, minimal_error) = shrink(&mut tree, run_seed);
            let minimal_error = if minimal_error.is_empty() {
                error.clone()
            } else {
                minimal_error
            };
            failures.push(Failure {
                case,
                error,
                minimal,
                minimal_error,
            });
        } else {
            eprintln!("case {case}: ok");
        }
    }
    let regressions = run_regressions();
    if let Some(path) = &report {
        write_report(
            path,
            seed,
            cases,
            &failures,
            &regressions,
            &features,
            started.elapsed(),
        );
    }
    let mut text = String::new();
    for f in &failures {
        let _ = write!(
            text,
            "\ncase {} (seed {seed}): {}\nsmallest failing scenario ({}):\n{}",
            f.case, f.error, f.minimal_error, f.minimal.yaml
        );
    }
    for (file, error) in &regressions {
        let _ = write!(text, "\nregression fixture {file}: {error}");
    }
    assert!(
        failures.is_empty() && regressions.is_empty(),
        "{} of {cases} random scenarios failed, {} regression fixtures:{text}",
        failures.len(),
        regressions.len()
    );
}

/// Every scenario in `scenarios/testdata/regressions/`, run as a random one is (seed 1).
fn run_regressions() -> Vec<(String, String)> {
    let dir = support::workspace_root().join("scenarios/testdata/regressions");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    let mut failed = Vec::new();
    for file in files {
        let yaml = std::fs::read_to_string(&file).unwrap();
        let rendered = Rendered {
            plan_comparable: !yaml.contains("autoscaler:"),
            timeline: Vec::new(),
            yaml,
        };
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        match run_one(&rendered, 1) {
            Ok(()) => eprintln!("regression fixture {name}: ok"),
            Err(e) => failed.push((name, e)),
        }
    }
    failed
}

/// How often each feature was drawn, for the soak report.
#[derive(Default)]
struct Features {
    counts: std::collections::BTreeMap<&'static str, u32>,
}

impl Features {
    fn count(&mut self, spec: &random::spec::Spec, rendered: &Rendered) {
        use random::spec::Routing;
        let mut add = |name, yes: bool| {
            if yes {
                *self.counts.entry(name).or_default() += 1;
            }
        };
        add("several zones", spec.zones.len() > 1);
        add("more than 10 replicas", spec.replicas > 10);
        add("topology routing", !matches!(spec.routing, Routing::None));
        add("sidecar", spec.sidecar.is_some());
        add("SSE", spec.sse);
        add("load balancer", spec.load_balancer.is_some());
        add("ingress", spec.ingress.is_some());
        add("autoscaler", spec.autoscaler.is_some());
        for (kind, key) in [
            ("NotReady → Ready", "setNodeReady"),
            ("addNode", "addNode"),
            ("removeNode", "removeNode"),
            ("killPod", "killPod"),
            ("scale", "scale:"),
            ("rollout", "rollout:"),
            ("relabelNode and back", "relabelNode"),
            ("zoneNetwork and clear", "zoneNetwork"),
        ] {
            add(kind, rendered.timeline.iter().any(|e| e.contains(key)));
        }
        let faults = rendered.timeline.iter().any(|e| e.contains("zoneNetwork"));
        let proxied = ["via: loadBalancer", "via: ingress"]
            .iter()
            .any(|via| rendered.yaml.contains(via));
        add(
            "zoneNetwork through the load balancer or ingress",
            faults && proxied,
        );
    }
}

fn write_report(
    path: &Path,
    seed: u64,
    cases: u32,
    failures: &[Failure],
    regressions: &[(String, String)],
    features: &Features,
    took: std::time::Duration,
) {
    let mut md = format!(
        "# Soak: {cases} random scenarios\n\nSeed {seed} (`HARNESS_SOAK_SEED={seed} HARNESS_SOAK_CASES={cases} make soak` repeats it), {} failed, {:.0} minutes. Each case ran on the local target at time scale 0.1 and was checked for exit 0 or 1, a held self-audit and, without an autoscaler, agreement with `harness plan`'s reachability after each step (`harness/cli/tests/random/`).\n\n",
        failures.len(),
        took.as_secs_f64() / 60.0
    );
    md.push_str("| drawn | cases |\n|---|---|\n");
    for (name, n) in &features.counts {
        let _ = writeln!(md, "| {name} | {n} |");
    }
    if failures.is_empty() {
        md.push_str("\nNo failure.\n");
    }
    let failures_dir = path.with_extension("failures");
    for f in failures {
        let file = failures_dir.join(format!("seed-{seed}-case-{}.yaml", f.case));
        let _ = std::fs::create_dir_all(&failures_dir);
        let _ = std::fs::write(&file, &f.minimal.yaml);
        let _ = write!(
            md,
            "\n## case {}\n\n{}\n\nSmallest failing scenario found: `{}` ({})\n",
            f.case,
            f.error,
            file.display(),
            f.minimal_error
        );
    }
    for (file, error) in regressions {
        let _ = write!(md, "\n## regression fixture {file}\n\n{error}\n");
    }
    if let Some(parent) = path.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    std::fs::write(path, md).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    eprintln!("soak report: {}", path.display());
}

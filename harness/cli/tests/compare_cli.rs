//! `harness compare` on recorded run directories (tests/fixtures/runs): a regression is
//! detected (exit 1), an improvement passes (exit 0), runs of different scenarios are refused
//! (exit 2, with the reason), and a bound on an unknown metric is a usage error; compare.json
//! matches `harness schema compare`. And `harness run --matrix` on a small scenario: every
//! combination runs into its own readably named directory and is compared against the first,
//! the roll-up (printed, matrix.md, matrix.json) names each cell's verdict and the cell the exit
//! code came from; a bad value refuses the matrix before anything runs.

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

fn runs(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/runs")
        .join(name)
}

fn harness(args: &[&str], extra: &[&Path]) -> Output {
    support::harness_command(args).args(extra).output().unwrap()
}

fn compare(base: &str, candidate: &str, bounds: &[&str], out: &Path) -> (i32, Value) {
    let mut args = vec!["compare".to_owned()];
    args.push(runs(base).display().to_string());
    args.push(runs(candidate).display().to_string());
    for b in bounds {
        args.push("--max-regression".into());
        args.push((*b).into());
    }
    args.push("--out".into());
    args.push(out.display().to_string());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = harness(&refs, &[]);
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("compare.json")).unwrap()).unwrap();
    let schema: Value =
        serde_json::from_slice(&harness(&["schema", "compare"], &[]).stdout).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    assert!(validator.is_valid(&json), "compare.json breaks its schema");
    (output.status.code().unwrap(), json)
}

fn metric<'a>(c: &'a Value, name: &str) -> &'a Value {
    c["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no {name} row"))
}

#[test]
fn a_regression_beyond_its_bound_exits_1() {
    let out = tempfile::tempdir().unwrap();
    let (code, c) = compare(
        "ingress-hot-podding-fixed",
        "ingress-hot-podding-incident",
        &["firstPositionsShare=0.02", "errors.timeout=0"],
        out.path(),
    );
    assert_eq!(code, 1);
    assert_eq!(c["schema"], "harness-compare/v1");
    assert_eq!(c["verdict"], "regression");
    let first = metric(&c, "firstPositionsShare");
    assert_eq!(first["regressed"], true, "{first}");
    assert!(first["delta"].as_f64().unwrap() > 0.1, "{first}");
    assert_eq!(metric(&c, "errors.timeout")["regressed"], false);
    let regressions = c["regressions"].as_array().unwrap();
    assert_eq!(regressions.len(), 1, "{regressions:?}");
    // Expectations side by side: they held in the base and fail in the candidate.
    let flips = c["expectations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["metric"] == "readinessFlips")
        .unwrap();
    assert_eq!(
        (&flips["basePassed"], &flips["candidatePassed"]),
        (&true.into(), &false.into())
    );
    // Per-pod shares of both runs.
    assert_eq!(c["pods"].as_array().unwrap().len(), 8);
    let md = std::fs::read_to_string(out.path().join("compare.md")).unwrap();
    assert!(md.starts_with("# Comparison — REGRESSION"), "{md}");
    let html = std::fs::read_to_string(out.path().join("compare.html")).unwrap();
    assert!(html.contains("data-verdict=\"regression\""));
    assert!(html.contains("<tr class=\"regressed\" data-metric=\"firstPositionsShare\">"));
}

#[test]
fn an_improvement_passes_the_same_bounds() {
    let out = tempfile::tempdir().unwrap();
    let (code, c) = compare(
        "ingress-hot-podding-incident",
        "ingress-hot-podding-fixed",
        &[
            "firstPositionsShare=0.02",
            "skewMaxMean=0",
            "expect.readinessFlips=0",
        ],
        out.path(),
    );
    assert_eq!(code, 0);
    assert_eq!(c["verdict"], "ok");
    assert!(metric(&c, "skewMaxMean")["delta"].as_f64().unwrap() < -0.3);
    assert!(c["regressions"].as_array().unwrap().is_empty());
}

#[test]
fn runs_of_different_scenarios_are_refused_with_the_reason() {
    let out = tempfile::tempdir().unwrap();
    let (code, c) = compare(
        "topology-skew-incident",
        "rollout-502-incident",
        &[],
        out.path(),
    );
    assert_eq!(code, 2);
    assert_eq!(c["verdict"], "incomparable");
    assert!(
        c["reason"]
            .as_str()
            .unwrap()
            .contains("different scenarios"),
        "{}",
        c["reason"]
    );
    // The same scenario with different expectations is refused as well.
    let out = tempfile::tempdir().unwrap();
    let mut edited: Value = serde_json::from_str(
        &std::fs::read_to_string(runs("topology-skew-fixed").join("summary.json")).unwrap(),
    )
    .unwrap();
    edited["expectations"].as_array_mut().unwrap().pop();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("summary.json"), edited.to_string()).unwrap();
    let output = harness(
        &["compare"],
        &[
            &runs("topology-skew-incident"),
            dir.path(),
            Path::new("--out"),
            out.path(),
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("different expectations"), "{stderr}");
}

#[test]
fn a_bound_on_an_unknown_metric_is_a_usage_error() {
    let out = tempfile::tempdir().unwrap();
    let output = harness(
        &["compare", "--max-regression", "errorRates=0.01"],
        &[
            &runs("topology-skew-incident"),
            &runs("topology-skew-fixed"),
            Path::new("--out"),
            out.path(),
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no such compared metric") && stderr.contains("errorRate"),
        "{stderr}"
    );
    let output = harness(
        &["compare", "--max-regression", "errorRate"],
        &[
            &runs("topology-skew-incident"),
            &runs("topology-skew-fixed"),
        ],
    );
    assert_eq!(output.status.code(), Some(2));
}

/// valid-minimal with one expectation, `one-pod` (at most one replica), for a matrix with a
/// cell that fails it.
const ONE_POD: &str = "apiVersion: harness/v1alpha1
kind: Scenario
metadata: { name: matrix-rollup }
cluster:
  zones:
    - { name: z, nodes: [{ name: n-1, allocatableCpu: \"1\" }] }
service:
  name: svc
  replicas: 1
  serviceTime: { cpu: 5ms }
load:
  duration: 2s
  generators:
    - { name: g, zone: z, rate: 10 }
expect:
  - { name: one-pod, metric: maxReplicas, max: 1 }
";

#[test]
fn a_matrix_runs_every_combination_and_compares_each_with_the_first() {
    support::require_workload_bins();
    let _turn = support::ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let scenario = tempfile::tempdir().unwrap();
    let file = scenario.path().join("one-pod.yaml");
    std::fs::write(&file, ONE_POD).unwrap();
    let out = tempfile::tempdir().unwrap();
    let output = harness(
        &[
            "run",
            file.to_str().unwrap(),
            "--matrix",
            "load.generators[g].rate=10,20",
            "--matrix",
            "service.replicas=1,2",
            "--progress",
            "none",
            "--out",
        ],
        &[out.path()],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    // Both cells with two replicas fail `one-pod`: exit 1, from the first of them.
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    // Readable directory names: `path-value`, axes joined with `_`, `[g]` as `.g`.
    let names = [
        "load.generators.g.rate-10_service.replicas-1",
        "load.generators.g.rate-10_service.replicas-2",
        "load.generators.g.rate-20_service.replicas-1",
        "load.generators.g.rate-20_service.replicas-2",
    ];
    let mut listed: Vec<String> = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    listed.sort();
    let mut expected: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    expected.extend(["matrix.json".to_owned(), "matrix.md".to_owned()]);
    expected.sort();
    assert_eq!(listed, expected);
    let [first, _, second, _] = names.map(|n| out.path().join(n));
    for name in names {
        assert!(
            out.path().join(name).join("summary.json").is_file(),
            "{name}"
        );
    }
    assert!(
        !first.join("compare.json").exists(),
        "the first is the base"
    );
    let c: Value =
        serde_json::from_str(&std::fs::read_to_string(second.join("compare.json")).unwrap())
            .unwrap();
    assert_eq!(c["verdict"], "ok");
    let attempted = |dir: &Path| {
        let s: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap())
                .unwrap();
        s["totals"]["attempted"].as_u64().unwrap()
    };
    // Twice the rate, about twice the attempts.
    let (a, b) = (attempted(&first), attempted(&second));
    assert!(b > a * 3 / 2, "{a} then {b}");

    // The roll-up on the terminal: every cell with its values, verdict, failed expectations,
    // comparison and exit code, then the cell the exit code came from.
    let table: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("matrix of "))
        .collect();
    assert_eq!(
        table[0],
        format!("matrix of {}: 4 cells", file.display()),
        "{stdout}"
    );
    let words = |line: &str| {
        line.split_whitespace()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        words(table[1]),
        [
            "#",
            "cell",
            "load.generators[g].rate",
            "service.replicas",
            "verdict",
            "failed",
            "expectations",
            "vs",
            "cell",
            "1",
            "exit",
            "reason"
        ]
    );
    let rows: Vec<Vec<String>> = table[2..6].iter().map(|l| words(l)).collect();
    let expected_rows = [
        ["1", names[0], "10", "1", "passed", "-", "(base)", "0", "-"],
        [
            "2", names[1], "10", "2", "failed", "one-pod", "ok", "1", "1",
        ],
        ["3", names[2], "20", "1", "passed", "-", "ok", "0", "-"],
        [
            "4", names[3], "20", "2", "failed", "one-pod", "ok", "1", "1",
        ],
    ];
    for (row, expected) in rows.iter().zip(expected_rows) {
        assert_eq!(row[..9], expected, "{stdout}");
    }
    assert_eq!(
        rows[1][9..].join(" "),
        "of 1 expectations failed",
        "{stdout}"
    );
    assert_eq!(
        table[6],
        format!(
            "exit 1: from cell {} (expectation 'one-pod' failed)",
            names[1]
        ),
        "{stdout}"
    );
    assert_eq!(
        table[7],
        format!("Roll-up: {}", out.path().join("matrix.md").display())
    );

    // The same in matrix.json and matrix.md.
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("matrix.json")).unwrap())
            .unwrap();
    assert_eq!(json["schema"], "harness-matrix/v1");
    assert_eq!(json["scenario"], "matrix-rollup");
    assert_eq!(
        json["axes"],
        serde_json::json!(["load.generators[g].rate", "service.replicas"])
    );
    let cells = json["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 4);
    assert_eq!(
        cells[1],
        serde_json::json!({
            "number": 2,
            "name": names[1],
            "values": [
                { "path": "load.generators[g].rate", "value": "10" },
                { "path": "service.replicas", "value": "2" }
            ],
            "verdict": "failed",
            "failedExpectations": ["one-pod"],
            "reason": "1 of 1 expectations failed",
            "comparison": { "verdict": "ok", "exit": 0, "detail": null },
            "exit": 1
        })
    );
    assert_eq!(cells[0]["comparison"], Value::Null);
    assert_eq!(cells[2]["verdict"], "passed");
    assert_eq!(json["exit"]["code"], 1);
    assert_eq!(json["exit"]["cell"], names[1]);
    assert_eq!(json["exit"]["from"], "run");
    assert_eq!(json["exit"]["reason"], "expectation 'one-pod' failed");
    let md = std::fs::read_to_string(out.path().join("matrix.md")).unwrap();
    assert!(
        md.contains(&format!(
            "| 4 | [{0}]({0}/report.html) | 20 | 2 | failed | one-pod | ok | 1 | 1 of 1 expectations failed |\n",
            names[3]
        )),
        "{md}"
    );
    assert!(
        md.contains(&format!(
            "**exit 1: from cell {} (expectation 'one-pod' failed)**",
            names[1]
        )),
        "{md}"
    );

    // The same matrix again into the same directory: refused before anything runs, the roll-up
    // and the runs left as they were.
    let again = harness(
        &[
            "run",
            file.to_str().unwrap(),
            "--matrix",
            "service.replicas=1",
            "--out",
        ],
        &[out.path()],
    );
    assert_eq!(again.status.code(), Some(2), "{again:?}");
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("holds the roll-up of another matrix"),
        "{again:?}"
    );
    let kept: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("matrix.json")).unwrap())
            .unwrap();
    assert_eq!(kept, json);

    // A value the scenario does not accept refuses the whole matrix before anything runs.
    let out = tempfile::tempdir().unwrap();
    let output = harness(
        &[
            "run",
            "scenarios/testdata/valid-minimal.yaml",
            "--matrix",
            "load.generators[g].rate=10,fast",
            "--out",
        ],
        &[out.path()],
    );
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert_eq!(
        std::fs::read_dir(out.path()).unwrap().count(),
        0,
        "nothing ran"
    );
}

#[test]
fn run_with_a_baseline_compares_the_new_run_and_refuses_another_scenario() {
    support::require_workload_bins();
    let _turn = support::ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let base = tempfile::tempdir().unwrap();
    let run = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            "run",
            "scenarios/testdata/valid-minimal.yaml",
            "--set",
            "load.duration=2s",
            "--progress",
            "none",
        ];
        args.extend_from_slice(extra);
        args.push("--out");
        harness(&args, &[out])
    };
    assert_eq!(run(base.path(), &[]).status.code(), Some(0));
    let candidate = tempfile::tempdir().unwrap();
    let baseline = base.path().display().to_string();
    let output = run(
        candidate.path(),
        &[
            "--baseline",
            &baseline,
            "--max-regression",
            "errorRate=0.05",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let c: Value = serde_json::from_str(
        &std::fs::read_to_string(candidate.path().join("compare.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(c["verdict"], "ok");
    assert_eq!(metric(&c, "errorRate")["maxRegression"], 0.05);
    assert!(
        candidate.path().join("report.html").is_file(),
        "the run's own reports too"
    );

    let other = runs("topology-skew-fixed").display().to_string();
    let third = tempfile::tempdir().unwrap();
    let output = run(third.path(), &["--baseline", &other]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("different scenarios"), "{stderr}");
    // Found before anything starts (it used to be found after the whole run).
    assert!(stderr.contains("nothing was started"), "{stderr}");
    assert!(!stderr.contains("running minimal"), "{stderr}");
    assert_eq!(std::fs::read_dir(third.path()).unwrap().count(), 0);

    // `--out` onto the finished baseline: refused, exit 2, naming the run; the baseline stays.
    let before = std::fs::read_to_string(base.path().join("summary.json")).unwrap();
    let old: Value = serde_json::from_str(&before).unwrap();
    std::fs::write(base.path().join("loadgen-old.json"), "{}").unwrap();
    let output = run(base.path(), &[]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "holds the results of another run (run {} of minimal",
            old["runId"].as_str().unwrap()
        )),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(base.path().join("summary.json")).unwrap(),
        before
    );
    // With --replace the old run is gone entirely, the new one in its place.
    let output = run(base.path(), &["--replace"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(!base.path().join("loadgen-old.json").exists());
    let new: Value =
        serde_json::from_str(&std::fs::read_to_string(base.path().join("summary.json")).unwrap())
            .unwrap();
    assert_ne!(new["runId"], old["runId"]);

    // A bound without anything to compare with is a usage error, before anything runs.
    let fourth = tempfile::tempdir().unwrap();
    let output = run(fourth.path(), &["--max-regression", "errorRate=0.05"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(!fourth.path().join("summary.json").exists());
}

//! `--set PATH=VALUE` and `--variant base` on the commands that read a scenario, and the tip an
//! unknown flag gets: what a user types, the exit code and the words they get back.

mod support;

use std::process::Output;

use support::harness;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

const FILE: &str = "scenarios/rollout-502.yaml";

#[test]
fn an_unknown_flag_that_is_a_scenario_value_points_at_set() {
    let out = harness(&["run", FILE, "--duration", "10s"]);
    assert_eq!(out.status.code(), Some(2));
    let text = stderr(&out);
    assert!(text.contains("unexpected argument '--duration'"), "{text}");
    assert!(
        text.contains("tip: to change the scenario's `load.duration` for this run, use `--set load.duration=10s`"),
        "{text}"
    );
    assert!(
        !text.contains("use '-- --duration'"),
        "clap's own tip is replaced: {text}"
    );
}

#[test]
fn set_values_are_checked_like_the_file_and_named_in_problems() {
    let out = harness(&["plan", FILE, "--set", "load.duration=10"]);
    assert_eq!(out.status.code(), Some(2));
    let text = stderr(&out);
    // The problem points at the value --set replaced: the file's own `load.duration` line.
    let source = std::fs::read_to_string(format!("{}/../../{FILE}", env!("CARGO_MANIFEST_DIR")))
        .expect("the scenario file");
    let line = 1 + source
        .lines()
        .position(|l| l.starts_with("  duration: "))
        .expect("a load.duration line");
    assert!(
        text.contains(&format!(
            "{FILE}:{line}:13: load.duration: expected a duration"
        )) && text.contains("(the value comes from --set load.duration=10)"),
        "{text}"
    );
    let out = harness(&["plan", FILE, "--set", "load.generators[nobody].rate=5"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out)
            .contains("no entry of `load.generators` is named `nobody`; names there: alb-clients"),
        "{}",
        stderr(&out)
    );
    let out = harness(&["plan", FILE, "--set", "nonsense"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("expected PATH=VALUE"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn set_changes_the_plan_and_base_selects_the_base_document() {
    let out = harness(&[
        "plan",
        FILE,
        "--variant",
        "base",
        "--set",
        "load.generators[alb-clients].rate=5",
        "--set",
        "service.replicas=4",
        "--output",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(plan["variant"], serde_json::Value::Null);
    assert_eq!(plan["steps"][0]["pods"].as_object().unwrap().len(), 4);
    let out = harness(&["plan", FILE, "--variant", "nope"]);
    assert!(
        stderr(&out).contains(
            "variants are: incident, fixed, distroless, app-drain, slow-registration, readiness-gate, and `base` for the base document"
        ),
        "{}",
        stderr(&out)
    );
}

/// The example in docs/scenario-format.md, as written there, is accepted on the shipped
/// scenario (it once failed with five timeline errors that did not mention `--set`).
#[test]
fn the_documented_set_example_works_on_the_shipped_scenario() {
    let doc = std::fs::read_to_string(format!(
        "{}/../../docs/scenario-format.md",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let start = doc
        .find("harness run scenarios/topology-skew.yaml --variant fixed --set")
        .expect("the example is in the docs");
    let example: String = doc[start..]
        .lines()
        .take_while(|l| !l.starts_with("```"))
        .collect::<Vec<_>>()
        .join(" ")
        .replace('\\', " ");
    let words = shlex::split(&example).expect("a shell line");
    assert_eq!(&words[..2], ["harness", "run"]);
    // `plan` reads the scenario exactly as `run` does, without running it.
    let mut args: Vec<&str> = vec!["plan"];
    args.extend(words[2..].iter().map(String::as_str));
    let out = harness(&args);
    assert_eq!(out.status.code(), Some(0), "{example}: {}", stderr(&out));
}

/// A `--set` that makes other values fail their checks is named in each problem it causes;
/// problems of the value it set say so already, and with several only the guilty one is named.
#[test]
fn problems_a_set_causes_elsewhere_name_that_set() {
    let skew = "scenarios/topology-skew.yaml";
    let out = harness(&[
        "plan",
        skew,
        "--variant",
        "fixed",
        "--set",
        "load.duration=10s",
        "--set",
        "load.generators[ingress-2a].rate=50",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let text = stderr(&out);
    let timeline: Vec<&str> = text.lines().filter(|l| l.contains("timeline")).collect();
    assert!(!timeline.is_empty(), "{text}");
    for line in &timeline {
        assert!(
            line.ends_with(
                "(caused by --set load.duration=10s: the file passes this check without it)"
            ),
            "{line}"
        );
    }
    assert!(!text.contains("caused by --set load.generators"), "{text}");
}

//! `harness validate` and `harness schema` as a user runs them, from the workspace root: exit 0
//! and an `ok:` line for every valid fixture, exit 2 and exactly the golden diagnostics for
//! every invalid one.

mod support;

use std::fs;

use support::{harness, workspace_root};

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// Fixture paths relative to the workspace root, sorted.
fn fixtures(prefix: &str) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(workspace_root().join("scenarios/testdata"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(prefix) && n.ends_with(".yaml"))
        .map(|n| format!("scenarios/testdata/{n}"))
        .collect();
    names.sort();
    names
}

#[test]
fn every_valid_fixture_exits_0_with_an_ok_line() {
    let valid = fixtures("valid-");
    assert!(!valid.is_empty());
    for file in valid {
        let out = harness(&["validate", &file]);
        assert_eq!(out.status.code(), Some(0), "{file}: {}", text(&out.stderr));
        let stdout = text(&out.stdout);
        assert!(stdout.starts_with(&format!("ok: {file}")), "{stdout}");
        assert_eq!(text(&out.stderr), "");
    }
}

#[test]
fn the_ok_line_lists_the_variants() {
    let out = harness(&["validate", "scenarios/testdata/valid-topology-skew.yaml"]);
    assert_eq!(
        text(&out.stdout),
        "ok: scenarios/testdata/valid-topology-skew.yaml (variants: incident, fixed, prefer-close, fail-fast)\n"
    );
}

#[test]
fn every_invalid_fixture_exits_2_with_its_golden_diagnostics() {
    let invalid = fixtures("invalid-");
    assert!(!invalid.is_empty());
    for file in invalid {
        let out = harness(&["validate", &file]);
        assert_eq!(out.status.code(), Some(2), "{file}");
        let golden = fs::read_to_string(workspace_root().join(&file).with_extension("expected"))
            .unwrap_or_else(|e| panic!("{file}: no golden ({e})"));
        let problems = golden.lines().count();
        let noun = if problems == 1 { "problem" } else { "problems" };
        let expected = format!("{golden}error: invalid input: {problems} {noun} in 1 file\n");
        assert_eq!(text(&out.stderr), expected, "{file}");
        assert_eq!(text(&out.stdout), "", "{file}");
    }
}

#[test]
fn several_files_are_all_checked_and_summarised() {
    let out = harness(&[
        "validate",
        "scenarios/testdata/valid-minimal.yaml",
        "scenarios/testdata/invalid-kind.yaml",
        "scenarios/testdata/invalid-api-version.yaml",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stdout),
        "ok: scenarios/testdata/valid-minimal.yaml (variants: same-zone, annotation-off, fixed-time)\n"
    );
    let stderr = text(&out.stderr);
    assert!(
        stderr.ends_with("error: invalid input: 2 problems in 2 of 3 files\n"),
        "{stderr}"
    );
    assert!(
        stderr.starts_with("scenarios/testdata/invalid-kind.yaml:3:7: kind: "),
        "{stderr}"
    );
}

#[test]
fn a_missing_file_is_invalid_input() {
    let out = harness(&["validate", "scenarios/testdata/no-such-file.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("scenarios/testdata/no-such-file.yaml: cannot read the file: "),
        "{stderr}"
    );
}

#[test]
fn validate_without_files_is_a_usage_error() {
    let out = harness(&["validate"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("<FILE>..."),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn schema_prints_the_pretty_json_schema() {
    let out = harness(&["schema"]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    let printed: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(printed, harness_core::scenario::json_schema());
    assert!(
        stdout.starts_with("{\n  \""),
        "not pretty-printed: {}",
        &stdout[..40.min(stdout.len())]
    );
    assert_eq!(printed["title"], "harness scenario");
}

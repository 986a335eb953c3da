//! Golden tests over `scenarios/testdata`: every `valid-*.yaml` loads, base and every variant;
//! every `invalid-*.yaml` fails validation with exactly the diagnostics in its `.expected` file
//! (paths relative to the workspace root). `HARNESS_BLESS=1` rewrites the goldens; review them.

use std::fs;
use std::path::{Path, PathBuf};

use harness_core::scenario::{load_scenario, load_scenario_str, validate_file, validate_str};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// `(display name, text)` of the fixtures named `<prefix>*.yaml`, sorted.
fn fixtures(prefix: &str) -> Vec<(String, PathBuf)> {
    let dir = workspace_root().join("scenarios/testdata");
    let mut found: Vec<(String, PathBuf)> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            name.starts_with(prefix) && name.ends_with(".yaml")
        })
        .map(|p| {
            (
                format!(
                    "scenarios/testdata/{}",
                    p.file_name().unwrap().to_str().unwrap()
                ),
                p,
            )
        })
        .collect();
    found.sort();
    found
}

#[test]
fn valid_fixtures_load_base_and_every_variant() {
    let valid = fixtures("valid-");
    assert!(
        valid.len() >= 3,
        "expected at least 3 valid fixtures, found {}",
        valid.len()
    );
    for (name, path) in valid {
        let text = fs::read_to_string(&path).unwrap();
        let variants = validate_str(&text, &name).unwrap_or_else(|e| panic!("{name}:\n{e}"));
        let base = load_scenario_str(&text, &name, None).unwrap();
        assert_eq!(base.variant_names(), variants.as_slice());
        assert_eq!(base.selected_variant, None);
        for variant in &variants {
            let scenario = load_scenario_str(&text, &name, Some(variant))
                .unwrap_or_else(|e| panic!("{name} variant {variant}:\n{e}"));
            assert_eq!(scenario.selected_variant.as_deref(), Some(variant.as_str()));
        }
    }
}

#[test]
fn invalid_fixtures_report_exactly_their_golden_diagnostics() {
    let invalid = fixtures("invalid-");
    assert!(
        invalid.len() >= 12,
        "expected at least 12 invalid fixtures, found {}",
        invalid.len()
    );
    let bless = std::env::var_os("HARNESS_BLESS").is_some();
    let mut failures = Vec::new();
    for (name, path) in invalid {
        // A directory fixture stands for `harness validate DIR`: it goes through the file
        // system, and its absolute path is shown as the fixture's name.
        let result = if path.is_dir() {
            validate_file(&path)
                .map_err(|e| e.to_string().replace(&path.display().to_string(), &name))
        } else {
            let text = fs::read_to_string(&path).unwrap();
            validate_str(&text, &name).map_err(|e| e.to_string())
        };
        let actual = match result {
            Ok(_) => {
                failures.push(format!("{name}: validated without problems"));
                continue;
            }
            Err(errors) => format!("{errors}\n"),
        };
        let golden = path.with_extension("expected");
        if bless {
            fs::write(&golden, &actual).unwrap();
            continue;
        }
        match fs::read_to_string(&golden) {
            Ok(expected) if expected == actual => {}
            Ok(expected) => failures.push(format!(
                "{name}:\n--- expected\n{expected}--- actual\n{actual}"
            )),
            Err(e) => failures.push(format!("{name}: missing golden {} ({e})", golden.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_golden_belongs_to_an_invalid_fixture() {
    let dir = workspace_root().join("scenarios/testdata");
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "expected") {
            assert!(
                path.with_extension("yaml").exists(),
                "orphan golden {}",
                path.display()
            );
            let stem = path.file_name().unwrap().to_str().unwrap();
            assert!(
                stem.starts_with("invalid-"),
                "golden for a non-invalid fixture: {stem}"
            );
        }
    }
}

#[test]
fn load_scenario_reads_the_file_and_names_it_in_diagnostics() {
    let root = workspace_root();
    let path = root.join("scenarios/testdata/valid-minimal.yaml");
    let scenario = load_scenario(&path, Some("same-zone")).unwrap();
    assert_eq!(scenario.name, "minimal");

    let missing = root.join("scenarios/testdata/no-such-file.yaml");
    let err = load_scenario(&missing, None).unwrap_err();
    assert_eq!(err.diagnostics.len(), 1);
    let line = err.to_string();
    assert!(
        line.starts_with(&format!("{}: cannot read the file: ", missing.display())),
        "{line}"
    );
}

#[test]
fn an_unknown_variant_is_reported_with_the_known_ones() {
    let path = workspace_root().join("scenarios/testdata/valid-minimal.yaml");
    let text = fs::read_to_string(path).unwrap();
    let err = load_scenario_str(&text, "m.yaml", Some("fast")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "m.yaml:16:1: variants: unknown variant `fast`; variants are: same-zone, annotation-off, fixed-time, and `base` for the base document"
    );
}

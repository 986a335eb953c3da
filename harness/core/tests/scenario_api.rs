//! Loading behaviour not tied to one fixture: variants over an invalid base, patches that try
//! to change `variants`, YAML features (anchors, multiple documents, empty files).

use harness_core::scenario::{Diagnostic, load_scenario_str, validate_str};

const BASE: &str = "\
apiVersion: harness/v1alpha1
kind: Scenario
metadata: { name: api }
cluster:
  zones:
    - { name: z, nodes: [{ name: n-1, allocatableCpu: \"1\" }] }
service:
  name: svc
  replicas: 2
  serviceTime: { fixed: 20ms }
load:
  duration: 40s
  generators:
    - { name: g, zone: z, rate: 10 }
";

fn lines(
    result: Result<impl std::fmt::Debug, harness_core::scenario::ScenarioErrors>,
) -> Vec<String> {
    result
        .unwrap_err()
        .diagnostics
        .iter()
        .map(Diagnostic::to_string)
        .collect()
}

#[test]
fn a_variant_cannot_fix_an_invalid_base() {
    let text = BASE.replace("replicas: 2", "replicas: 0")
        + "variants:\n  more: { service: { replicas: 3 } }\n";
    assert_eq!(
        lines(load_scenario_str(&text, "x.yaml", Some("more"))),
        vec!["x.yaml:9:13: service.replicas: 0 is too small; the minimum is 1"]
    );
}

#[test]
fn a_problem_only_a_variant_has_is_labelled_with_it() {
    let text = BASE.to_owned() + "variants:\n  none: { service: { replicas: 0 } }\n";
    let expected =
        vec!["x.yaml:16:32: variant `none`: service.replicas: 0 is too small; the minimum is 1"];
    assert_eq!(
        lines(load_scenario_str(&text, "x.yaml", Some("none"))),
        expected
    );
    assert_eq!(lines(validate_str(&text, "x.yaml")), expected);
    // the base alone is fine
    assert_eq!(
        load_scenario_str(&text, "x.yaml", None)
            .unwrap()
            .service
            .replicas,
        2
    );
}

#[test]
fn a_variant_cannot_patch_variants() {
    let text = BASE.to_owned() + "variants:\n  sneaky: { variants: { other: {} } }\n";
    assert_eq!(
        lines(validate_str(&text, "x.yaml")),
        vec![
            "x.yaml:16:13: variant `sneaky`: variants.sneaky.variants: a variant cannot change `variants`"
        ]
    );
}

#[test]
fn anchors_and_aliases_are_resolved() {
    let text = BASE.replace(
        "  generators:\n    - { name: g, zone: z, rate: 10 }\n",
        "  generators:\n    - &gen { name: g, zone: z, rate: 10 }\n    - { <<: *gen, name: h }\n",
    );
    let scenario = load_scenario_str(&text, "x.yaml", None).unwrap();
    let names: Vec<&str> = scenario
        .load
        .generators
        .iter()
        .map(|g| g.name.as_str())
        .collect();
    assert_eq!(names, vec!["g", "h"]);
}

#[test]
fn one_document_per_file() {
    let text = BASE.to_owned() + "---\n" + BASE;
    assert_eq!(
        lines(validate_str(&text, "x.yaml")),
        vec![
            "x.yaml:16:1: invalid YAML: a scenario file holds exactly one YAML document (found a `---` separator)"
        ]
    );
}

#[test]
fn an_empty_file_says_it_is_empty_and_what_a_scenario_starts_with() {
    assert_eq!(
        lines(validate_str("", "x.yaml")),
        vec![
            "x.yaml: the file is empty; a scenario starts with `apiVersion: harness/v1alpha1` and `kind: Scenario`"
        ]
    );
    assert_eq!(
        lines(validate_str("\n# nothing yet\n  \n", "x.yaml")),
        vec![
            "x.yaml: the file holds only comments; a scenario starts with `apiVersion: harness/v1alpha1` and `kind: Scenario`"
        ]
    );
}

#[test]
fn a_directory_is_named_with_the_scenarios_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("b.yaml"), BASE).unwrap();
    std::fs::write(dir.path().join("a.yml"), BASE).unwrap();
    std::fs::write(dir.path().join("notes.yaml"), "just: notes\n").unwrap();
    let shown = dir.path().display().to_string();
    let e = harness_core::scenario::validate_file(dir.path()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{shown}: is a directory, not a scenario file; scenario files in it: a.yml, b.yaml; name one (or several) of them"
        )
    );
}

#[test]
fn missing_header_fields_are_reported_together() {
    let text = "metadata: { name: x }\n";
    assert_eq!(
        lines(validate_str(text, "x.yaml")),
        vec![
            "x.yaml:1:1: apiVersion: missing required field `apiVersion`; expected `apiVersion: harness/v1alpha1`",
            "x.yaml:1:1: kind: missing required field `kind`; expected `kind: Scenario`",
        ]
    );
}

#[test]
fn duplicate_keys_are_rejected() {
    let text = BASE.replace("  replicas: 2\n", "  replicas: 2\n  replicas: 3\n");
    assert_eq!(
        lines(validate_str(&text, "x.yaml")),
        vec!["x.yaml:10:3: invalid YAML: duplicate mapping key: replicas"]
    );
}

#[test]
fn entries_after_an_unreadable_expectation_keep_their_own_paths() {
    let text = BASE.to_owned()
        + "expect:\n  - { metric: errorRates, max: 0.1 }\n  - { metric: maxSaturation, max: 0.9 }\n";
    assert_eq!(
        lines(validate_str(&text, "x.yaml")),
        vec![
            "x.yaml:16:15: expect[0].metric: unknown value `errorRates`; did you mean `errorRate`? expected one of: errorRate, http5xxRate, transportErrorRate, timeoutRate, skewMaxMean, skewCv, starvedPods, latencyP99, hintFlaps, maxSaturation, rejectedRate, terminationErrorRate, requestsAfterRemoval, rolloutDuration, timeToScaleUp, maxReplicas, minReplicas, positionRankCorrelation, firstPositionsShare, readinessFlips, ingressRestarts, podLatencyP90, minRoutableTargets, crossZoneShare",
            "x.yaml:17:15: expect[1].metric: maxSaturation is measured by the sidecar, but `service.sidecar` is not set",
        ]
    );
}

#[test]
fn an_unknown_variant_is_reported_with_the_base_problems() {
    let text = BASE.replace("replicas: 2", "replicas: 0");
    assert_eq!(
        lines(load_scenario_str(&text, "x.yaml", Some("fixed"))),
        vec![
            "x.yaml:1:1: variants: unknown variant `fixed`; this file defines no variants (`--variant base` is the base document)",
            "x.yaml:9:13: service.replicas: 0 is too small; the minimum is 1",
        ]
    );
}

#[test]
fn base_selects_the_base_document_and_is_no_variant_name() {
    let with_variant = BASE.to_owned() + "variants:\n  fast: { load: { duration: 5s } }\n";
    let base =
        harness_core::scenario::load_scenario_str(&with_variant, "x.yaml", Some("base")).unwrap();
    assert_eq!(base.selected_variant, None);
    assert_eq!(base.variant_names(), ["fast".to_string()]);
    let named_base = BASE.to_owned() + "variants:\n  base: {}\n";
    let problems = lines(validate_str(&named_base, "x.yaml"));
    assert_eq!(
        problems,
        vec![format!(
            "x.yaml:{}:3: variants.base: `base` names the base document (`--variant base`); give this variant another name",
            BASE.lines().count() + 2
        )]
    );
}

#[test]
fn overrides_replace_values_after_the_variant_and_problems_name_them() {
    use harness_core::scenario::{Override, load_scenario_str_with};
    let text = BASE.to_owned() + "variants:\n  fast: { load: { duration: 5s } }\n";
    let set = |o: &str| Override::parse(o).unwrap();
    let s =
        load_scenario_str_with(&text, "x.yaml", Some("fast"), &[set("load.duration=7s")]).unwrap();
    assert_eq!(
        s.load.duration,
        std::time::Duration::from_secs(7),
        "the override wins"
    );
    let e = load_scenario_str_with(&text, "x.yaml", None, &[set("load.duration=30")])
        .unwrap_err()
        .to_string();
    let line = BASE
        .lines()
        .position(|l| l.trim_start().starts_with("duration:"))
        .unwrap()
        + 1;
    assert!(
        e.starts_with(&format!("x.yaml:{line}:")) && e.ends_with(
            "load.duration: expected a duration such as \"250ms\", \"30s\", \"1m 30s\" or \"0s\", found whole number `30` (the value comes from --set load.duration=30)"
        ),
        "{e}"
    );
    let e = load_scenario_str_with(&text, "x.yaml", None, &[set("load.generators[9].rate=1")])
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("x.yaml: --set load.generators[9].rate=1: `load.generators` has 1 entry"),
        "{e}"
    );
    // A number too large for its field, from the command line: the field, its range, and the
    // digits as typed (not the nearest float, `1e+23`).
    let e = load_scenario_str_with(
        &text,
        "x.yaml",
        None,
        &[set("service.replicas=99999999999999999999999")],
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.ends_with(
            "service.replicas: 99999999999999999999999 is out of range: a whole number from 1 to 4294967295 (the value comes from --set service.replicas=99999999999999999999999)"
        ),
        "{e}"
    );
}

/// `--set` with `--variant` is checked against the variant, not against the base document:
/// the base of ingress-hot-podding is on v0.6, where `sortEndpointsBy` does not exist, but a
/// v0.16 variant takes it. The base document itself must still be valid, and a bad override
/// of the variant still names itself.
#[test]
fn an_override_is_checked_against_the_selected_variant() {
    use harness_core::ingress::SortEndpointsBy;
    use harness_core::scenario::{Override, load_scenario_with};
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/ingress-hot-podding.yaml");
    let set = |o: &str| Override::parse(o).unwrap();
    let s = load_scenario_with(
        &file,
        Some("v0-16-roundrobin-ip"),
        &[set("ingress.sortEndpointsBy=random")],
    )
    .unwrap();
    let controller = s.ingress.unwrap().controller;
    assert_eq!(controller.sort_endpoints_by, Some(SortEndpointsBy::Random));
    let base = load_scenario_with(&file, None, &[set("ingress.sortEndpointsBy=random")])
        .unwrap_err()
        .to_string();
    assert!(base.contains("but `version` is v0.6"), "{base}");
    let bad = load_scenario_with(
        &file,
        Some("v0-16-roundrobin-ip"),
        &[set("ingress.sortEndpointsBy=sideways")],
    )
    .unwrap_err()
    .to_string();
    assert!(
        bad.contains("(the value comes from --set ingress.sortEndpointsBy=sideways)"),
        "{bad}"
    );
}

/// Three inputs a new user tried and got parser-speak for: each now names the cause and the fix.
#[test]
fn hostile_encodings_and_whitespace_name_the_cause_and_the_fix() {
    // A no-break space in the indentation (a copy from a web page).
    let nbsp = BASE.replacen("  name: svc", "\u{a0} name: svc", 1);
    let err = load_scenario_str(&nbsp, "n.yaml", None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("n.yaml:8:1: invalid YAML: a no-break space (U+00A0) in the indentation; indent with plain spaces"),
        "{err}"
    );

    // An alias bomb: each level doubles the one before.
    let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..24 {
        bomb.push_str(&format!(
            "a{i}: &a{i} [*a{j}, *a{j}, *a{j}, *a{j}]\n",
            j = i - 1
        ));
    }
    let err = load_scenario_str(&bomb, "b.yaml", None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("too many YAML aliases"), "{err}");

    // UTF-16, as some Windows editors save.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("u.yaml");
    let mut bytes = vec![0xFF, 0xFE];
    for unit in BASE.encode_utf16() {
        bytes.extend(unit.to_le_bytes());
    }
    std::fs::write(&path, bytes).unwrap();
    let err = harness_core::scenario::load_scenario(&path, None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("the file is UTF-16"), "{err}");
    assert!(err.contains("save it as UTF-8"), "{err}");
}

//! `ingress.balanceAlgorithm` from the file to the controller settings: omitted, the version's
//! default; given (in the file, a variant or `--set`), what `ControllerSettings::balance`
//! returns; a value the model does not render refused with the field and the allowed values;
//! and the JSON Schema editors get lists exactly those two.

use harness_core::ingress::{Balance, ControllerVersion, Ordering};
use harness_core::scenario::{Override, json_schema, load_scenario_str, load_scenario_str_with};

const FILE: &str = "balance.yaml";

/// A minimal scenario with an ingress of `version`, plus `extra` lines in its `ingress`.
fn scenario(version: &str, extra: &str) -> String {
    format!(
        r#"apiVersion: harness/v1alpha1
kind: Scenario
metadata: {{ name: balance }}
cluster:
  zones:
    - {{ name: z, nodes: [{{ name: n-1, allocatableCpu: "4" }}] }}
service:
  name: svc
  replicas: 2
  serviceTime: {{ fixed: 20ms }}
ingress:
  version: {version}
  replicas: 2
{extra}load:
  duration: 40s
  generators:
    - {{ name: g, zone: z, rate: 10, via: ingress }}
variants:
  roundrobin-ip:
    ingress: {{ balanceAlgorithm: roundrobin, sortEndpointsBy: ip }}
"#
    )
}

fn balance(text: &str, variant: Option<&str>, sets: &[&str]) -> Balance {
    let overrides: Vec<Override> = sets.iter().map(|s| Override::parse(s).unwrap()).collect();
    let s =
        load_scenario_str_with(text, FILE, variant, &overrides).unwrap_or_else(|e| panic!("{e}"));
    s.ingress.unwrap().controller.balance()
}

#[test]
fn omitted_it_is_the_versions_default() {
    assert_eq!(
        balance(&scenario("v0.16", ""), None, &[]),
        Balance::RandomTwo
    );
    for version in ["v0.6", "v0.7", "v0.8", "v0.11"] {
        assert_eq!(
            balance(&scenario(version, ""), None, &[]),
            Balance::RoundRobin,
            "{version}"
        );
    }
    let s = load_scenario_str(&scenario("v0.16", ""), FILE, None).unwrap();
    assert_eq!(s.ingress.unwrap().controller.balance_algorithm, None);
}

#[test]
fn given_it_overrides_the_default_and_keeps_the_rest_of_v0_16() {
    let text = scenario("v0.16", "  balanceAlgorithm: roundrobin\n");
    assert_eq!(balance(&text, None, &[]), Balance::RoundRobin);
    let old = scenario("v0.11", "  balanceAlgorithm: random(2)\n");
    assert_eq!(balance(&old, None, &[]), Balance::RandomTwo);

    // The variant the kind target runs the incident as: round-robin, slots, sorted by IP.
    let s = load_scenario_str(&scenario("v0.16", ""), FILE, Some("roundrobin-ip")).unwrap();
    let c = s.ingress.unwrap().controller;
    assert_eq!(c.version, ControllerVersion::V0_16);
    assert_eq!(c.balance(), Balance::RoundRobin);
    assert!(c.dynamic_slots());
    assert_eq!(c.ordering(), Ordering::ByIp);

    // `--set` wins over the variant.
    assert_eq!(
        balance(
            &scenario("v0.16", ""),
            Some("roundrobin-ip"),
            &["ingress.balanceAlgorithm=random(2)"]
        ),
        Balance::RandomTwo
    );
}

#[test]
fn a_value_the_model_does_not_render_is_refused_with_the_allowed_ones() {
    let text = scenario("v0.16", "  balanceAlgorithm: leastconn\n");
    let err = load_scenario_str(&text, FILE, None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(
            "balance.yaml:14:21: ingress.balanceAlgorithm: unknown value `leastconn`; expected one of: roundrobin, random(2)"
        ),
        "{err}"
    );
    let overrides = [Override::parse("ingress.balanceAlgorithm=random(3)").unwrap()];
    let err = load_scenario_str_with(&scenario("v0.16", ""), FILE, None, &overrides)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(
            "ingress.balanceAlgorithm: unknown value `random(3)`; did you mean `random(2)`?"
        ),
        "{err}"
    );
    assert!(
        err.contains("--set ingress.balanceAlgorithm=random(3)"),
        "{err}"
    );
}

#[test]
fn the_json_schema_lists_exactly_the_two_algorithms() {
    let schema = json_schema();
    let text = schema.to_string();
    let field = &schema["$defs"]["IngressSpec"]["properties"]["balanceAlgorithm"];
    assert!(!field.is_null(), "{text}");
    let reference = field["$ref"].as_str().unwrap_or_default();
    let definition = &schema["$defs"][reference.rsplit('/').next().unwrap()];
    let values: Vec<&str> = definition["oneOf"]
        .as_array()
        .unwrap_or_else(|| panic!("{definition}"))
        .iter()
        .map(|v| v["const"].as_str().unwrap())
        .collect();
    assert_eq!(values, ["roundrobin", "random(2)"]);
}

//! What tests build scenarios from, written once for this crate's tests and the other crates'
//! (harness-kind's): the scenario on one zone `z` with one 4-CPU node `n` and the service `s`,
//! with the parts that vary given. Not used by the harness itself.

use crate::scenario::{Scenario, load_scenario_str};

/// The text of the scenario `t`: the cluster (zone `z`, node `n` with 4 allocatable CPUs), the
/// service `s` with `service` as its further fields (one a line, unindented: `replicas: 2`),
/// then `rest` as written (the top-level sections after the service: `load` and, as the test
/// needs, `loadBalancer`, `ingress`, `timeline`, `expect`).
pub fn one_node_text(service: &[&str], rest: &str) -> String {
    let mut text = String::from(
        r#"apiVersion: harness/v1alpha1
kind: Scenario
metadata: { name: t }
cluster:
  zones: [{ name: z, nodes: [{ name: n, allocatableCpu: "4" }] }]
service:
  name: s
"#,
    );
    for line in service {
        text.push_str("  ");
        text.push_str(line);
        text.push('\n');
    }
    text.push_str(rest);
    text
}

/// [`one_node_text`] loaded as `t.yaml`; panics when it is not a valid scenario.
pub fn one_node_scenario(service: &[&str], rest: &str) -> Scenario {
    let text = one_node_text(service, rest);
    load_scenario_str(&text, "t.yaml", None).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

//! `harness hints --as-is [--from-node NAME]` on the skew incident's objects and on slices
//! written to show each reason kube-proxy (v1.34 pkg/proxy/topology.go) uses or ignores the
//! hints: used; an endpoint lacks a zone hint; the node has no zone label; no endpoint is
//! hinted for the node's zone; no ready endpoint, so the serving terminating ones are used.

mod support;

use std::path::Path;

use serde_json::Value;
use support::{harness, hints, hints_fixture};

const NODE_2A: &str = "ip-10-0-1-10.ap-northeast-2.compute.internal";

fn json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["--output", "json"]);
    let out = harness(&all);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

/// An EndpointSlice of Service flags/flagsvc: (address, ready, serving, terminating, zone hint).
fn slices(dir: &Path, endpoints: &[(&str, bool, bool, bool, Option<&str>)]) -> String {
    let mut yaml = String::from(
        "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\naddressType: IPv4\nmetadata:\n  name: flagsvc-test\n  namespace: flags\n  labels:\n    kubernetes.io/service-name: flagsvc\nendpoints:\n",
    );
    for (addr, ready, serving, terminating, zone) in endpoints {
        yaml.push_str(&format!(
            "- addresses: [{addr}]\n  conditions: {{ready: {ready}, serving: {serving}, terminating: {terminating}}}\n  zone: ap-northeast-2c\n  nodeName: ip-10-0-3-40.ap-northeast-2.compute.internal\n"
        ));
        if let Some(z) = zone {
            yaml.push_str(&format!("  hints:\n    forZones:\n    - name: {z}\n"));
        }
    }
    let path = dir.join("slices.yaml");
    std::fs::write(&path, yaml).unwrap();
    path.display().to_string()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn as_is_keeps_the_incident_hints_that_a_reconcile_would_remove() {
    let (nodes, slices) = (
        hints_fixture("nodes-skewed.yaml"),
        hints_fixture("endpointslices.yaml"),
    );
    let base = ["hints", "--nodes", &nodes, "--endpointslices", &slices];
    // The controller's next reconcile at 65/35 removes the hints: 2a reaches all four.
    let predicted = json(&base);
    assert_eq!(
        predicted["reachableFrom"]["ap-northeast-2a"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
    // Right now the slices still carry them: 2a reaches the two hinted for it.
    let mut args = base.to_vec();
    args.push("--as-is");
    let now = json(&args);
    assert_eq!(
        strings(&now["reachableFrom"]["ap-northeast-2a"]),
        ["10.0.3.21", "10.0.3.22"]
    );
    assert_eq!(
        now["whyFrom"]["ap-northeast-2a"]["hints"]["reason"],
        "zoneHintsUsed"
    );
    assert!(now.get("reachable").is_none());

    args.extend(["--from-node", NODE_2A]);
    let node = json(&args);
    assert_eq!(node["node"], NODE_2A);
    assert_eq!(strings(&node["reachable"]), ["10.0.3.21", "10.0.3.22"]);
    assert_eq!(node["why"]["topologyMode"], "PreferSameZone");
    assert_eq!(node["why"]["hints"]["zone"], "ap-northeast-2a");
    assert_eq!(node["why"]["endpoints"], "ready");
    assert!(node.get("reachableFrom").is_none());

    // Text output says the same.
    let out = harness(&args[..args.len()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains(&format!(
        "kube-proxy on node {NODE_2A} uses: 2 of 4 ready: 10.0.3.21,10.0.3.22"
    )));
    assert!(text.contains("why: zone hints used"));
}

#[test]
fn every_reason_hints_are_ignored_and_the_terminating_fallback() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = hints_fixture("nodes-skewed.yaml");
    let from_2a = |slices: &str| {
        json(&[
            "hints",
            "--as-is",
            "--nodes",
            &nodes,
            "--endpointslices",
            slices,
            "--from-node",
            NODE_2A,
        ])
    };

    // One endpoint has no hint: kube-proxy ignores all hints.
    let s = slices(
        dir.path(),
        &[
            ("10.0.3.21", true, true, false, Some("ap-northeast-2a")),
            ("10.0.3.22", true, true, false, None),
            ("10.0.3.23", true, true, false, Some("ap-northeast-2c")),
        ],
    );
    let v = from_2a(&s);
    assert_eq!(v["reachable"].as_array().unwrap().len(), 3);
    assert_eq!(v["why"]["hints"]["reason"], "endpointMissingZoneHint");
    assert_eq!(strings(&v["why"]["hints"]["endpoints"]), ["10.0.3.22"]);
    assert_eq!(v["why"]["topologyMode"], "None");

    // Every endpoint hinted for 2c only (PreferClose's shape): nothing for 2a, so all are used.
    let s = slices(
        dir.path(),
        &[
            ("10.0.3.21", true, true, false, Some("ap-northeast-2c")),
            ("10.0.3.22", true, true, false, Some("ap-northeast-2c")),
        ],
    );
    let v = from_2a(&s);
    assert_eq!(v["reachable"].as_array().unwrap().len(), 2);
    assert_eq!(v["why"]["hints"]["reason"], "noEndpointForZone");
    assert_eq!(v["why"]["hints"]["zone"], "ap-northeast-2a");

    // No ready endpoint: the serving terminating ones, topology ignored.
    let s = slices(
        dir.path(),
        &[
            ("10.0.3.21", false, true, true, Some("ap-northeast-2a")),
            ("10.0.3.22", false, true, true, Some("ap-northeast-2c")),
            ("10.0.3.23", false, false, true, Some("ap-northeast-2a")),
        ],
    );
    let v = from_2a(&s);
    assert_eq!(strings(&v["reachable"]), ["10.0.3.21", "10.0.3.22"]);
    assert_eq!(v["why"]["hints"]["reason"], "noReadyEndpoints");
    assert_eq!(v["why"]["endpoints"], "servingTerminating");

    // A node without a zone label.
    let unlabelled = dir.path().join("nodes.yaml");
    std::fs::write(
        &unlabelled,
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: bare\nstatus:\n  allocatable: {cpu: '4'}\n  conditions:\n  - {type: Ready, status: 'True'}\n",
    )
    .unwrap();
    let hinted = hints_fixture("endpointslices.yaml");
    let v = json(&[
        "hints",
        "--as-is",
        "--nodes",
        &unlabelled.display().to_string(),
        "--endpointslices",
        &hinted,
        "--from-node",
        "bare",
    ]);
    assert_eq!(v["reachable"].as_array().unwrap().len(), 4);
    assert_eq!(v["why"]["hints"]["reason"], "nodeMissingZoneLabel");
    assert_eq!(strings(&v["nodesWithoutZone"]), ["bare"]);
    // The text names the node; and without --as-is, the missing zone ratios name it too.
    let unlabelled = unlabelled.display().to_string();
    let out = hints(&unlabelled, &hinted, &["--as-is"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("node bare has no topology.kubernetes.io/zone label: kube-proxy there ignores zone hints"),
        "{text}"
    );
    let out = hints(&unlabelled, &hinted, &[]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("unavailable: node bare has no topology.kubernetes.io/zone label"),
        "{text}"
    );
}

#[test]
fn reach_counts_only_ready_endpoints() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = hints_fixture("nodes-skewed.yaml");
    // One ready endpoint, one terminating, one not ready: a client reaches 1 of 1 ready.
    let s = slices(
        dir.path(),
        &[
            ("10.0.3.21", true, true, false, None),
            ("10.0.3.22", false, true, true, None),
            ("10.0.3.23", false, false, false, None),
        ],
    );
    let out = hints(&nodes, &s, &["--as-is"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("a client in zone ap-northeast-2a reaches: 1 of 1 ready: 10.0.3.21"),
        "{text}"
    );
}

#[test]
fn swapped_files_are_named_as_swapped() {
    // The slices given as nodes and the nodes as slices.
    let out = hints(
        &hints_fixture("endpointslices.yaml"),
        &hints_fixture("nodes-skewed.yaml"),
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8(out.stderr).unwrap();
    assert!(
        text.contains("holds EndpointSlice objects, but --nodes takes Nodes: did you swap --nodes and --endpointslices?"),
        "{text}"
    );
}

#[test]
fn bad_from_node_use_exits_2_with_the_fix() {
    let (nodes, slices) = (
        hints_fixture("nodes-skewed.yaml"),
        hints_fixture("endpointslices.yaml"),
    );
    let out = hints(&nodes, &slices, &["--as-is", "--from-node", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--from-node nope: no such node in"), "{err}");
    assert!(err.contains(NODE_2A), "lists the nodes there: {err}");
    let out = hints(&nodes, &slices, &["--from-node", NODE_2A]);
    assert_eq!(out.status.code(), Some(2), "--from-node needs --as-is");
}

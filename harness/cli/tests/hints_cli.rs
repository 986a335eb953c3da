//! Runs the built `harness hints` binary on the skew incident's objects (fixtures/hints/: 4 pods
//! in ap-northeast-2c, nodes in 2a and 2c) and checks the numbers, hints, events and exit codes.

mod support;

use serde_json::{Value, json};
use support::{harness, hints, hints_fixture};

fn hints_json(nodes: &str, slices: &str, service: Option<&str>) -> Value {
    let mut extra = vec!["--output", "json"];
    let service = service.map(hints_fixture);
    if let Some(s) = &service {
        extra.extend(["--service", s]);
    }
    let out = hints(&hints_fixture(nodes), &hints_fixture(slices), &extra);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

fn for_zones(v: &Value) -> Vec<Value> {
    v["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["forZones"].clone())
        .collect()
}

const ALL: [&str; 4] = ["10.0.3.21", "10.0.3.22", "10.0.3.23", "10.0.3.24"];

#[test]
fn balanced_cpu_hints_two_endpoints_to_the_callers_zone() {
    let v = hints_json(
        "nodes-balanced.yaml",
        "endpointslices-fresh.yaml",
        Some("service.yaml"),
    );
    assert_eq!(v["service"], "flags/flagsvc");
    assert_eq!(v["mode"], "topology-mode: Auto");
    assert_eq!(
        v["zoneCpuRatios"],
        json!({"ap-northeast-2a": 0.5, "ap-northeast-2c": 0.5})
    );
    assert_eq!(v["hintsEnabled"], true);
    assert_eq!(
        v["events"],
        json!([{"type": "Normal", "reason": "TopologyAwareHintsEnabled",
                "message": "Topology Aware Hints has been enabled, addressType: IPv4"}])
    );
    assert_eq!(
        for_zones(&v),
        vec![
            json!(["ap-northeast-2a"]),
            json!(["ap-northeast-2a"]),
            json!(["ap-northeast-2c"]),
            json!(["ap-northeast-2c"])
        ]
    );
    assert_eq!(v["endpoints"][0]["zone"], "ap-northeast-2c");
    assert_eq!(v["endpoints"][0]["ready"], true);
    assert_eq!(
        v["reachableFrom"]["ap-northeast-2a"],
        json!(["10.0.3.21", "10.0.3.22"])
    );
    assert_eq!(
        v["reachableFrom"]["ap-northeast-2c"],
        json!(["10.0.3.23", "10.0.3.24"])
    );
}

#[test]
fn skewed_cpu_removes_hints_with_the_exact_event() {
    let v = hints_json(
        "nodes-skewed.yaml",
        "endpointslices.yaml",
        Some("service.yaml"),
    );
    assert_eq!(
        v["zoneCpuRatios"],
        json!({"ap-northeast-2a": 0.65, "ap-northeast-2c": 0.35})
    );
    assert_eq!(v["hintsEnabled"], false);
    assert_eq!(v["events"].as_array().unwrap().len(), 1);
    assert_eq!(v["events"][0]["type"], "Warning");
    assert_eq!(v["events"][0]["reason"], "TopologyAwareHintsDisabled");
    assert_eq!(
        v["events"][0]["message"],
        "Unable to allocate minimum required endpoints to each zone without exceeding overload threshold \
         (4 endpoints, 2 zones), addressType: IPv4"
    );
    assert!(for_zones(&v).iter().all(|z| z == &json!([])));
    assert_eq!(v["reachableFrom"]["ap-northeast-2a"], json!(ALL));
}

#[test]
fn existing_hints_are_kept_without_an_event_and_without_a_service() {
    let v = hints_json("nodes-balanced.yaml", "endpointslices.yaml", None);
    assert_eq!(v["mode"], "topology-mode: Auto");
    assert_eq!(v["hintsEnabled"], true);
    assert_eq!(v["events"], json!([]));
    assert_eq!(
        v["reachableFrom"]["ap-northeast-2a"],
        json!(["10.0.3.21", "10.0.3.22"])
    );
    let assumptions = v["assumptions"].to_string();
    assert!(assumptions.contains("no Service given"), "{assumptions}");
}

#[test]
fn prefer_close_keeps_every_pod_reachable_from_the_callers_zone() {
    let v = hints_json(
        "nodes-skewed.yaml",
        "endpointslices-fresh.yaml",
        Some("service-prefer-close.yaml"),
    );
    assert_eq!(v["mode"], "trafficDistribution: PreferClose");
    assert_eq!(v["events"], json!([]));
    assert!(
        for_zones(&v)
            .iter()
            .all(|z| z == &json!(["ap-northeast-2c"]))
    );
    // No endpoint is hinted for 2a, so kube-proxy there ignores the hints.
    assert_eq!(v["reachableFrom"]["ap-northeast-2a"], json!(ALL));
    assert_eq!(v["reachableFrom"]["ap-northeast-2c"], json!(ALL));
}

#[test]
fn text_output_is_a_table() {
    let out = hints(
        &hints_fixture("nodes-balanced.yaml"),
        &hints_fixture("endpointslices.yaml"),
        &[],
    );
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("ADDRESS    ZONE             NODE"), "{text}");
    assert!(text.contains("ap-northeast-2a          0.5000"), "{text}");
    assert!(
        text.contains("ap-northeast-2a          2 of 4: 10.0.3.21,10.0.3.22"),
        "{text}"
    );
}

#[test]
fn bad_input_exits_2_and_names_the_file() {
    let slices = hints_fixture("endpointslices.yaml");
    for (nodes, position, what) in [
        ("nodes-bad-cpu.yaml", ":9:10:", "\"4 cores\""),
        ("nodes-bad-yaml.yaml", ":5:11:", "expected"),
        ("service.yaml", ":3:1:", "found \"Service\""),
    ] {
        let out = hints(&hints_fixture(nodes), &slices, &[]);
        assert_eq!(out.status.code(), Some(2), "{nodes}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!("{nodes}{position}")),
            "{nodes}: {stderr}"
        );
        assert!(stderr.contains(what), "{nodes}: {stderr}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn sweep_reproduces_the_flapping_bands() {
    let out = harness(&[
        "hints",
        "sweep",
        "--zones",
        "2a,2c",
        "--endpoints",
        "2a=2,2c=2",
        "--output",
        "json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ranges: Vec<(f64, f64, bool)> = v["ranges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["from"].as_f64().unwrap(),
                r["to"].as_f64().unwrap(),
                r["hintsEnabled"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        ranges,
        vec![
            (0.01, 0.09, false),
            (0.1, 0.3, true),
            (0.31, 0.39, false),
            (0.4, 0.6, true),
            (0.61, 0.69, false),
            (0.7, 0.9, true),
            (0.91, 0.99, false)
        ]
    );
    let band = v["bands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["from"] == json!(0.61))
        .unwrap();
    assert_eq!(band["minimums"], json!({"2a": 3, "2c": 2}));
    let band = v["bands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["from"] == json!(0.7))
        .unwrap();
    assert_eq!(band["hintsPerZone"], json!({"2a": 3, "2c": 1}));

    let out = harness(&[
        "hints",
        "sweep",
        "--zones",
        "2a,2c",
        "--endpoints",
        "2a=2,2c=2",
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("hints on:  0.10-0.30, 0.40-0.60, 0.70-0.90"),
        "{text}"
    );
    assert!(
        text.contains("hints off: 0.01-0.09, 0.31-0.39, 0.61-0.69, 0.91-0.99"),
        "{text}"
    );
}

#[test]
fn sweep_rejects_bad_arguments_with_exit_2() {
    for args in [
        &["hints", "sweep", "--zones", "2a,2c", "--endpoints", "2b=1"][..],
        &["hints", "sweep", "--zones", "2a", "--endpoints", "2a=1"][..],
        &["hints", "sweep", "--zones", "2a,2c", "--endpoints", "2a=x"][..],
        &[
            "hints",
            "sweep",
            "--zones",
            "2a,2c",
            "--endpoints",
            "2a=1",
            "--step",
            "0",
        ][..],
    ] {
        let out = harness(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!out.stderr.is_empty());
    }
}

#[test]
fn help_documents_every_flag() {
    let out = harness(&["hints", "--help"]);
    let text = String::from_utf8(out.stdout).unwrap();
    for flag in [
        "--nodes",
        "--endpointslices",
        "--service",
        "--output",
        "sweep",
    ] {
        assert!(text.contains(flag), "hints --help lacks {flag}: {text}");
    }
    let out = harness(&["hints", "sweep", "--help"]);
    let text = String::from_utf8(out.stdout).unwrap();
    for flag in ["--zones", "--endpoints", "--step", "--output"] {
        assert!(text.contains(flag), "sweep --help lacks {flag}: {text}");
    }
}

/// A Service scaled to zero: no EndpointSlice, the placeholder slice (`endpoints: null`), or
/// endpoints none of which is ready. The controller still reconciles it: zone CPU ratios, and
/// `getAllocations(0)` refuses hints with "Insufficient number of endpoints (0 endpoints, 2
/// zones)" (topologycache.go, v1.34).
#[test]
fn a_service_without_endpoints_gets_ratios_and_no_endpoints() {
    for (slices, why) in [
        (
            "endpointslices-none.yaml",
            "the Service has no EndpointSlice",
        ),
        (
            "endpointslices-placeholder.yaml",
            "its 1 EndpointSlice(s) hold no endpoint",
        ),
        (
            "endpointslices-not-ready.yaml",
            "none of its 2 endpoint(s) is ready",
        ),
    ] {
        let v = hints_json("nodes-balanced.yaml", slices, Some("service.yaml"));
        assert_eq!(v["service"], "flags/flagsvc", "{slices}");
        assert_eq!(
            v["zoneCpuRatios"],
            json!({"ap-northeast-2a": 0.5, "ap-northeast-2c": 0.5}),
            "{slices}"
        );
        assert_eq!(v["hintsEnabled"], false, "{slices}");
        assert_eq!(v["readyEndpoints"], 0, "{slices}");
        let no = v["noEndpoints"].as_str().unwrap_or_default();
        assert!(
            no.starts_with("no endpoints: ") && no.contains(why),
            "{slices}: {no}"
        );
        assert_eq!(
            v["events"],
            json!([{
                "type": "Warning",
                "reason": "TopologyAwareHintsDisabled",
                "message": "Insufficient number of endpoints (0 endpoints, 2 zones), addressType: IPv4"
            }]),
            "{slices}"
        );
        assert_eq!(
            v["reachableFrom"],
            json!({"ap-northeast-2a": [], "ap-northeast-2c": []}),
            "{slices}"
        );
        assert!(for_zones(&v).iter().all(|z| z == &json!([])), "{slices}");
    }
}

#[test]
fn a_service_without_endpoints_in_text_and_as_is() {
    let (nodes, slices, service) = (
        hints_fixture("nodes-balanced.yaml"),
        hints_fixture("endpointslices-placeholder.yaml"),
        hints_fixture("service.yaml"),
    );
    let base = [
        "hints",
        "--nodes",
        &nodes,
        "--endpointslices",
        &slices,
        "--service",
        &service,
    ];
    let out = harness(&base);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("ap-northeast-2a          0.5000"), "{text}");
    assert!(
        text.contains("Endpoints after the reconcile:\n  none\n  no endpoints: its 1 EndpointSlice(s) hold no endpoint"),
        "{text}"
    );
    assert!(
        text.contains("Insufficient number of endpoints (0 endpoints, 2 zones)"),
        "{text}"
    );
    assert!(
        text.contains("ap-northeast-2a          0 of 0: -"),
        "{text}"
    );

    let mut as_is = base.to_vec();
    as_is.extend(["--as-is", "--output", "json"]);
    let out = harness(&as_is);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["endpoints"], json!([]));
    assert_eq!(v["reachableFrom"]["ap-northeast-2c"], json!([]));
    assert_eq!(v["whyFrom"]["ap-northeast-2c"]["endpoints"], "none");
}

/// Slices of another Service only: the given Service has none, answered with a note naming
/// what the file holds (in case the wrong file was given).
#[test]
fn slices_of_another_service_only_are_named() {
    let v = hints_json(
        "nodes-balanced.yaml",
        "endpointslices-fresh.yaml",
        Some("service-other.yaml"),
    );
    assert_eq!(v["service"], "flags/other");
    assert_eq!(v["readyEndpoints"], 0);
    let assumptions = v["assumptions"].to_string();
    assert!(
        assumptions.contains(
            "holds no EndpointSlice of Service flags/other, only slices of: flags/flagsvc"
        ),
        "{assumptions}"
    );
}

#[test]
fn no_slices_and_no_service_asks_for_the_service() {
    let out = hints(
        &hints_fixture("nodes-balanced.yaml"),
        &hints_fixture("endpointslices-none.yaml"),
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("endpointslices-none.yaml: no EndpointSlice found")
            && stderr.contains("--service"),
        "{stderr}"
    );
}

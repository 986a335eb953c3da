//! For the `harness import` tests: import objects into a scenario file, and the agreement
//! check — `harness plan` on the imported scenario against `harness hints` on the same
//! objects, at load start: the same hints decision, zone CPU ratios, hints per endpoint zone
//! and, for every zone the plan shows, the same number of reachable endpoints from each zone.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::harness;

/// `harness import --from FILES --service SERVICE -o OUT`; panics with stderr when it fails.
/// Returns stderr (the notes).
pub fn import(files: &[&str], service: &str, out: &Path, extra: &[&str]) -> String {
    let out_text = out.display().to_string();
    let mut args = vec!["import", "--from"];
    args.extend_from_slice(files);
    args.extend_from_slice(&["--service", service, "-o", &out_text, "--force"]);
    args.extend_from_slice(extra);
    let output = harness(&args);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(0), "import failed: {stderr}");
    stderr
}

fn json(args: &[&str]) -> Value {
    let output = harness(args);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// What both predictions say at load start, in comparable form.
#[derive(Debug, PartialEq)]
pub struct Prediction {
    pub hints_enabled: bool,
    /// Zone → CPU ratio, rounded to 1e-9.
    pub ratios: BTreeMap<String, i64>,
    /// (endpoint zone, its forZones) for every endpoint, sorted.
    pub hints: Vec<(String, Vec<String>)>,
    /// Caller zone → the zones of the endpoints it reaches (sorted), for the plan's zones.
    pub reachable: BTreeMap<String, Vec<String>>,
}

fn ratios(v: &Value) -> BTreeMap<String, i64> {
    v.as_object()
        .map(|m| {
            m.iter()
                .map(|(z, r)| (z.clone(), (r.as_f64().unwrap() * 1e9).round() as i64))
                .collect()
        })
        .unwrap_or_default()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().map(|s| s.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default()
}

/// The plan's first step.
pub fn plan_prediction(scenario: &Path) -> Prediction {
    let plan = json(&["plan", &scenario.display().to_string(), "--output", "json"]);
    let step = &plan["steps"][0];
    let pod_zone = |pod: &str| step["pods"][pod]["zone"].as_str().unwrap().to_owned();
    let mut hints: Vec<(String, Vec<String>)> = step["pods"]
        .as_object()
        .unwrap()
        .keys()
        .map(|pod| (pod_zone(pod), strings(&step["hints"][pod])))
        .collect();
    hints.sort();
    let reachable = step["reachableFrom"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(zone, pods)| {
            let mut zones: Vec<String> = strings(pods).iter().map(|p| pod_zone(p)).collect();
            zones.sort();
            (zone.clone(), zones)
        })
        .collect();
    Prediction {
        hints_enabled: step["hintsEnabled"].as_bool().unwrap(),
        ratios: ratios(&step["zoneCpuRatios"]),
        hints,
        reachable,
    }
}

/// `harness hints` on the objects, restricted to the caller zones in `zones`.
pub fn hints_prediction(nodes: &str, slices: &str, service: &str, zones: &[String]) -> Prediction {
    let report = json(&[
        "hints",
        "--nodes",
        nodes,
        "--endpointslices",
        slices,
        "--service",
        service,
        "--output",
        "json",
    ]);
    let endpoints = report["endpoints"].as_array().unwrap();
    let ready: Vec<&Value> = endpoints
        .iter()
        .filter(|e| e["ready"].as_bool() != Some(false))
        .collect();
    let zone_of = |address: &str| {
        ready
            .iter()
            .find(|e| e["address"] == address)
            .map(|e| e["zone"].as_str().unwrap().to_owned())
            .unwrap()
    };
    let mut hints: Vec<(String, Vec<String>)> = ready
        .iter()
        .map(|e| {
            (
                e["zone"].as_str().unwrap().to_owned(),
                strings(&e["forZones"]),
            )
        })
        .collect();
    hints.sort();
    let reachable = zones
        .iter()
        .map(|zone| {
            let mut zs: Vec<String> = strings(&report["reachableFrom"][zone])
                .iter()
                .map(|a| zone_of(a))
                .collect();
            zs.sort();
            (zone.clone(), zs)
        })
        .collect();
    Prediction {
        hints_enabled: report["hintsEnabled"].as_bool().unwrap(),
        ratios: ratios(&report["zoneCpuRatios"]),
        hints,
        reachable,
    }
}

/// Imports, plans and asks `harness hints`; asserts both predictions are the same.
pub fn assert_agreement(
    import_files: &[&str],
    service_name: &str,
    hints_files: (&str, &str, &str),
    dir: &Path,
) -> (Prediction, String) {
    let scenario = dir.join("imported.yaml");
    let notes = import(import_files, service_name, &scenario, &[]);
    assert!(
        !notes.contains("scheduler model places"),
        "the model's placement differs from the slices: {notes}"
    );
    let planned = plan_prediction(&scenario);
    let zones: Vec<String> = planned.reachable.keys().cloned().collect();
    let (nodes, slices, service) = hints_files;
    let hinted = hints_prediction(nodes, slices, service, &zones);
    assert_eq!(
        planned,
        hinted,
        "plan on the imported scenario and hints on the objects disagree:\n{}",
        std::fs::read_to_string(&scenario).unwrap()
    );
    (planned, notes)
}

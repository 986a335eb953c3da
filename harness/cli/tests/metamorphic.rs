//! Metamorphic checks on the local target: relations between runs (or parts of one run) that
//! must hold whatever the exact numbers are.
//!
//! - Without faults, no request fails and the load spreads evenly: per-request connections
//!   pick a pod at random, so with ~150 requests per pod the busiest pod stays within
//!   [`EVEN_SKEW`] of the mean.
//! - A fault that is reverted (a node NotReady → Ready; a node relabelled into another zone and
//!   back) returns every zone's reachability to what it was before the fault.
//! - The same scenario at time scale 1 and 0.5 gives the same verdict and the same expectation
//!   values: error rates within [`RATE_TOLERANCE`], and `rolloutDuration` (reported in
//!   Kubernetes time at both scales) within [`DURATION_TOLERANCE`] of each other.

mod random;
mod support;

use std::path::Path;

use serde_json::Value;
use support::{harness_command, summary};

/// The busiest pod ÷ the mean, at most, for an even spread of ~150 requests per pod.
const EVEN_SKEW: f64 = 1.35;
/// Absolute difference of two error rates.
const RATE_TOLERANCE: f64 = 0.01;
/// Relative difference of two control-plane durations: a probe period (1 s) of a ~6 s rollout.
const DURATION_TOLERANCE: f64 = 0.25;

fn run(dir: &Path, file: &Path, extra: &[&str]) -> (i32, Value) {
    support::require_workload_bins();
    let mut args = vec!["run", "--progress", "none", "--seed", "3"];
    args.extend_from_slice(extra);
    args.push("--out");
    let out = dir.join("run");
    let output = harness_command(&args).arg(&out).arg(file).output().unwrap();
    let code = output.status.code().unwrap_or(-1);
    assert!(
        code == 0 || code == 1,
        "exit {code}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    (code, summary(&out))
}

/// `yaml` written to `scenario.yaml` in a fresh directory, and its path.
fn write(yaml: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("scenario.yaml");
    std::fs::write(&file, yaml).unwrap();
    (dir, file)
}

/// Scenario runs must not share the two cores.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    support::ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

#[test]
fn without_faults_nothing_fails_and_the_load_spreads_evenly() {
    let _turn = one_at_a_time();
    let (dir, file) = write(
        r#"apiVersion: harness/v1alpha1
kind: Scenario
metadata: { name: no-faults }
cluster:
  zones:
    - { name: a, nodes: [{ name: a-1, allocatableCpu: "4" }] }
    - { name: b, nodes: [{ name: b-1, allocatableCpu: "4" }] }
    - { name: c, nodes: [{ name: c-1, allocatableCpu: "4" }] }
service:
  name: svc
  replicas: 6
  serviceTime: { fixed: 2ms }
  sidecar: { maxConcurrency: 32 }
load:
  warmup: 1s
  duration: 10s
  generators:
    - { name: g-a, zone: a, rate: 30, connections: 8, connectionModel: perRequest }
    - { name: g-b, zone: b, rate: 30, connections: 8, connectionModel: perRequest }
    - { name: g-c, zone: c, rate: 30, connections: 8, connectionModel: perRequest }
expect:
  - { metric: errorRate, max: 0 }
"#,
    );
    let (code, s) = run(dir.path(), &file, &[]);
    assert_eq!(code, 0, "{}", s["explanation"]);
    assert_eq!(
        s["totals"]["transportErrors"]
            .as_object()
            .map_or(0, |m| m.values().filter_map(Value::as_u64).sum::<u64>()),
        0
    );
    let max_mean = s["skew"]["maxMean"].as_f64().unwrap();
    assert!(
        max_mean <= EVEN_SKEW,
        "busiest pod {max_mean:.2}× the mean: {}",
        s["pods"]
    );
    assert_eq!(s["audit"]["held"], true);
}

#[test]
fn a_reverted_fault_returns_the_reachability_of_before() {
    let _turn = one_at_a_time();
    let (dir, file) = write(
        r#"apiVersion: harness/v1alpha1
kind: Scenario
metadata: { name: reverted }
cluster:
  zones:
    - { name: a, nodes: [{ name: a-1, allocatableCpu: "4" }, { name: a-2, allocatableCpu: "4" }] }
    - { name: b, nodes: [{ name: b-1, allocatableCpu: "4" }, { name: b-2, allocatableCpu: "4" }] }
service:
  name: svc
  replicas: 8
  placement:
    topologySpreadConstraints:
      - { maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule }
  routing: { trafficDistribution: PreferSameZone }
  serviceTime: { fixed: 2ms }
  readinessProbe: { period: 1s }
  startup: { latency: 1s }
load:
  warmup: 2s
  duration: 120s
  generators:
    - { name: g-a, zone: a, rate: 20, connections: 4 }
    - { name: g-b, zone: b, rate: 20, connections: 4 }
timeScale: 0.1
timeline:
  - { at: 10s, name: a-1-down, setNodeReady: { node: a-1, ready: false } }
  - { at: 40s, name: a-1-up, setNodeReady: { node: a-1, ready: true } }
  - { at: 60s, name: b-2-moved, relabelNode: { node: b-2, zone: a } }
  - { at: 80s, name: b-2-back, relabelNode: { node: b-2, zone: b } }
"#,
    );
    run(dir.path(), &file, &[]);
    let events = random::check::timeline(&dir.path().join("run/timeline.jsonl")).unwrap();
    // Wall seconds at time scale 0.1.
    let before = random::check::reached_at(&events, 0.9);
    let during_outage = random::check::reached_at(&events, 3.9);
    let after = random::check::reached_at(&events, 11.9);
    assert_eq!(before.len(), 2, "{before:?}");
    assert!(
        before.values().all(|pods| pods.len() == 4),
        "each zone reaches its own 4 pods: {before:?}"
    );
    assert_ne!(during_outage, before, "the outage changed something");
    // The relabel need not show: for a Service without topology hints (here PreferSameZone)
    // the EndpointSlice controller takes an endpoint's zone from
    // its node when it syncs the Service (pod and Service changes), not on a node's label
    // change alone (pkg/controller/endpointslice, v1.34), so the zones may stay as they were.
    assert_eq!(
        after, before,
        "reverted faults leave reachability as it was"
    );
}

#[test]
fn time_scale_1_and_0_5_give_the_same_verdict_and_values() {
    let _turn = one_at_a_time();
    let yaml = r#"apiVersion: harness/v1alpha1
kind: Scenario
metadata: { name: scaled }
cluster:
  zones:
    - { name: a, nodes: [{ name: a-1, allocatableCpu: "4" }, { name: a-2, allocatableCpu: "4" }] }
service:
  name: svc
  replicas: 4
  serviceTime: { fixed: 2ms }
  readinessProbe: { period: 1s }
  startup: { latency: 1s }
  rollout: { maxSurge: 1, maxUnavailable: 0 }
  termination: { gracePeriod: 5s, preStop: { sleep: 2s } }
load:
  warmup: 1s
  duration: 16s
  generators:
    - { name: g, zone: a, rate: 40, connections: 4 }
timeline:
  - { at: 3s, name: roll, rollout: { restart: true } }
expect:
  - { name: errors, metric: errorRate, max: 0.01 }
  - { name: rollout, metric: rolloutDuration, max: 20s, window: { from: roll } }
"#;
    let values = |scale: &str| {
        let (dir, file) = write(yaml);
        let (code, s) = run(dir.path(), &file, &["--time-scale", scale]);
        let value = |name: &str| {
            s["expectations"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["name"] == name)
                .and_then(|e| e["observed"].as_f64())
                .unwrap_or_else(|| {
                    panic!("{name} measured at scale {scale}: {}", s["expectations"])
                })
        };
        (code, value("errors"), value("rollout"))
    };
    let (code_1, errors_1, rollout_1) = values("1");
    let (code_half, errors_half, rollout_half) = values("0.5");
    assert_eq!(code_1, code_half, "the same verdict");
    assert!(
        (errors_1 - errors_half).abs() <= RATE_TOLERANCE,
        "error rates {errors_1} and {errors_half}"
    );
    assert!(
        (rollout_1 - rollout_half).abs() <= DURATION_TOLERANCE * rollout_1.max(rollout_half),
        "rolloutDuration {rollout_1}s at scale 1 and {rollout_half}s at 0.5 (both Kubernetes time)"
    );
}

//! The shipped scenarios the kind target can run, on a real kind cluster: `make e2e-kind`
//! (scripts/e2e-kind.sh) builds the images, creates the cluster `harness-topology-skew` from
//! `harness kind-config`, and runs this with `HARNESS_E2E_KIND=1`; each variant runs with
//! `--cluster harness-topology-skew` and its verdict and signature are checked as the local
//! end-to-end tests check them, with the real controllers' events and the model check in
//! summary.json. Without `HARNESS_E2E_KIND` (every machine without a cluster, this project's CI
//! included) it says so and checks nothing. autoscaler-blind-spot runs on its own cluster
//! `harness-autoscaler-blind-spot` (its kind config sets the HPA controller's flags) with the
//! real HPA, KEDA and Prometheus from the pinned releases (their sha256 must be recorded:
//! `harness pins lock`), at time scale 1. rollout-502 (rollout) needs what the kind target does
//! not do yet, and is not run.

mod support;

use std::path::Path;
use std::process::Command;

use support::{expectation, summary, workspace_root};

const CLUSTER: &str = "harness-topology-skew";

fn enabled() -> bool {
    if std::env::var_os("HARNESS_E2E_KIND").is_some() {
        return true;
    }
    eprintln!(
        "e2e_kind: HARNESS_E2E_KIND is not set: not run (needs a kind cluster; `make e2e-kind`)"
    );
    false
}

fn run_on_kind(variant: &str, out: &Path) -> i32 {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness"));
    cmd.args(["run", "scenarios/topology-skew.yaml", "--target", "kind"])
        .args(["--variant", variant, "--cluster", CLUSTER, "--seed", "7"])
        .arg("--out")
        .arg(out)
        .current_dir(workspace_root());
    if let Some(cpus) = std::env::var_os("HARNESS_E2E_HOST_CPUS") {
        cmd.arg("--host-cpus").arg(cpus);
    }
    let status = cmd.status().unwrap();
    status.code().unwrap_or(-1)
}

#[test]
fn topology_skew_on_kind() {
    if !enabled() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let incident = dir.path().join("incident");
    assert_eq!(
        run_on_kind("incident", &incident),
        1,
        "the incident fails its expectations"
    );
    let s = summary(&incident);
    assert_eq!(s["target"], "kind");
    assert_eq!(s["partial"], false);
    // The real EndpointSlice controller removes the hints when the node joins 2a, with the
    // message the local target's model writes.
    let events = s["hints"]["events"].as_array().unwrap();
    assert!(
        events.iter().any(|e| e["message"]
            .as_str()
            .unwrap_or("")
            .contains("(4 endpoints, 2 zones)")),
        "{events:?}"
    );
    // Zone-2a clients reach 2 of 4 pods while hints are on: two pods starve.
    let starved = expectation(&s, "starvedPods");
    assert_eq!(starved["passed"], false, "{starved}");
    let agreement = &s["modelAgreement"];
    assert!(agreement["checks"].as_u64().unwrap_or(0) > 0, "{agreement}");
    eprintln!(
        "model agreement: {} of {} checks",
        agreement["agreed"], agreement["checks"]
    );

    let fixed = dir.path().join("fixed");
    assert_eq!(run_on_kind("fixed", &fixed), 0, "the fix passes");
    let s = summary(&fixed);
    assert_eq!(s["verdict"], "pass");
    assert_eq!(s["hints"]["events"].as_array().map_or(0, Vec::len), 0);
}

const AUTOSCALER_CLUSTER: &str = "harness-autoscaler-blind-spot";

fn run_autoscaler_on_kind(variant: &str, out: &Path) -> i32 {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness"));
    cmd.args([
        "run",
        "scenarios/autoscaler-blind-spot.yaml",
        "--target",
        "kind",
    ])
    .args([
        "--variant",
        variant,
        "--cluster",
        AUTOSCALER_CLUSTER,
        "--seed",
        "7",
    ])
    // A real cluster keeps Kubernetes' own clocks (the file's timeScale is 0.1).
    .args(["--time-scale", "1"])
    .arg("--out")
    .arg(out)
    .current_dir(workspace_root());
    if let Some(cpus) = std::env::var_os("HARNESS_E2E_HOST_CPUS") {
        cmd.arg("--host-cpus").arg(cpus);
    }
    cmd.status().unwrap().code().unwrap_or(-1)
}

/// Run by scripts/e2e-kind.sh after `topology_skew_on_kind`, on its own cluster.
#[test]
fn autoscaler_blind_spot_on_kind() {
    if !enabled() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let incident = dir.path().join("incident");
    assert_eq!(
        run_autoscaler_on_kind("incident", &incident),
        1,
        "the destination-side HPA misses the surge"
    );
    let s = summary(&incident);
    assert_eq!(s["target"], "kind");
    assert_eq!(s["partial"], false);
    let replicas = expectation(&s, "maxReplicas");
    assert_eq!(replicas["passed"], false, "{replicas}");
    let explanation = s["explanation"].to_string();
    assert!(explanation.contains("autoscaler"), "{explanation}");

    let fixed = dir.path().join("fixed");
    assert_eq!(
        run_autoscaler_on_kind("fixed", &fixed),
        0,
        "the source-side HPA scales"
    );
    let s = summary(&fixed);
    assert_eq!(s["verdict"], "pass");
    assert!(expectation(&s, "maxReplicas")["observed"].as_f64().unwrap() >= 12.0);
    assert_eq!(expectation(&s, "timeToScaleUp")["passed"], true);
}

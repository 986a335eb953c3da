//! `harness kind-config` as a user runs it from the workspace root: the top-level
//! `kind-config.yaml` is exactly what it writes for scenarios/topology-skew.yaml on the stated
//! 8-CPU host, `--output` writes the same bytes, and a scenario kind cannot represent exits 2.

mod support;

use support::{harness, workspace_root};

/// The command the top-level file says wrote it.
const TOP_LEVEL: &[&str] = &[
    "kind-config",
    "scenarios/topology-skew.yaml",
    "--host-cpus",
    "8",
];

#[test]
fn the_top_level_kind_config_is_what_kind_config_writes_for_topology_skew() {
    let out = harness(TOP_LEVEL);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = String::from_utf8(out.stdout).unwrap();
    let committed = std::fs::read_to_string(workspace_root().join("kind-config.yaml")).unwrap();
    assert!(
        written == committed,
        "kind-config.yaml is stale; regenerate it with\n  harness {} --output kind-config.yaml\n--- written ---\n{written}",
        TOP_LEVEL.join(" ")
    );
    assert!(committed.contains(&format!("#   harness {}\n", TOP_LEVEL.join(" "))));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("kind cluster harness-topology-skew for a 8-CPU host"),
        "{stderr}"
    );
}

#[test]
fn output_writes_the_file_and_the_host_size_changes_the_reservations() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kind.yaml");
    let out = harness(&[
        "kind-config",
        "scenarios/topology-skew.yaml",
        "--variant",
        "fixed",
        "--host-cpus",
        "2",
        "--output",
        path.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    let text = std::fs::read_to_string(&path).unwrap();
    // 4-CPU workers get 1000m of a 2-CPU host (scale 1/4): 1000m reserved; the 8-CPU spare none.
    assert_eq!(
        text.matches("kube-reserved: \"cpu=1000m\"").count(),
        4,
        "{text}"
    );
    assert_eq!(
        text.matches("kube-reserved: \"cpu=0m\"").count(),
        1,
        "{text}"
    );
    assert!(text.contains("(variant `fixed`)"));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("CPU scale 1/4 = 0.250000 (zone ratios exact)"),
        "{stderr}"
    );
}

#[test]
fn unrepresentable_scenarios_and_bad_files_exit_2() {
    let out = harness(&[
        "kind-config",
        "scenarios/topology-skew.yaml",
        "--host-cpus",
        "0",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("no kind cluster for this scenario"),
        "{stderr}"
    );
    let out = harness(&["kind-config", "scenarios/testdata/invalid-kind.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
}

//! `harness plan` on a large scenario: summarised per zone and node by default, every pod with
//! `--verbose`.

mod support;

use support::harness;

#[test]
fn a_thousand_pods_are_summarised_unless_verbose() {
    let args = [
        "plan",
        "scenarios/topology-skew.yaml",
        "--set",
        "service.replicas=1000",
    ];
    let short = harness(&args);
    assert_eq!(short.status.code(), Some(0));
    let short = String::from_utf8(short.stdout).unwrap();
    let mut verbose_args = args.to_vec();
    verbose_args.push("--verbose");
    let verbose = String::from_utf8(harness(&verbose_args).stdout).unwrap();
    let pod_lines = |t: &str| t.lines().filter(|l| l.starts_with("    pod-")).count();
    assert_eq!(pod_lines(&short), 0, "{short}");
    assert!(pod_lines(&verbose) >= 1000, "{}", pod_lines(&verbose));
    assert!(
        short.contains("    1000 pods (harness plan --verbose lists each):"),
        "{short}"
    );
    assert!(
        short.lines().count() < 200,
        "{} lines",
        short.lines().count()
    );
}

//! ingress-hot-podding on the kind target as a user types it: `harness plan --target kind`
//! writes the real controller's objects (`ingress.yaml`) and its image pin, with the generator
//! sending to the controller's Service; the versions and settings kind cannot run are refused
//! with exit 2 and the reason; and `harness run` refuses the unlocked controller image before
//! anything is started.

mod support;

use std::process::Output;

use support::{GOLDEN_PLAN, KIND_IMAGES, harness, plan_on_kind};

const FILE: &str = "scenarios/ingress-hot-podding.yaml";

fn plan(variant: &str, extra: &[&str], dir: &std::path::Path) -> Output {
    let flags = [&["--variant", variant], GOLDEN_PLAN, extra].concat();
    plan_on_kind(FILE, dir, KIND_IMAGES, &flags)
}

#[test]
fn plan_shows_the_ingress_controller_for_v0_16() {
    let dir = tempfile::tempdir().unwrap();
    let out = plan("v0-16", &["--set", "timeScale=1"], dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let ingress = std::fs::read_to_string(dir.path().join("ingress.yaml")).unwrap();
    for part in [
        "kind: StatefulSet",
        "name: haproxy-ingress",
        "kind: IngressClass",
        "kind: ConfigMap",
        "# harness rewrite 0",
        "quay.io/jcmoraisjr/haproxy-ingress:v0.16.1",
        "--sort-endpoints-by=random",
    ] {
        assert!(
            ingress.contains(part),
            "{part} missing from ingress.yaml:\n{ingress}"
        );
    }
    let pins = std::fs::read_to_string(dir.path().join("third-party.txt")).unwrap();
    assert!(
        pins.contains("haproxy-ingress v0.16.1") && pins.contains("harness pins lock"),
        "{pins}"
    );
    // The generator sends to the controller's Service, not to the service's.
    let generator =
        std::fs::read_to_string(dir.path().join("manifests/04-pod-gen-elb-clients.yaml")).unwrap();
    assert!(
        generator.contains("haproxy-ingress.harness-golden.svc.cluster.local:80"),
        "{generator}"
    );
}

#[test]
fn what_kind_cannot_run_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    // At the file's time scale 0.1: reload failures are pod restarts, which do not scale.
    let out = plan("v0-16", &[], dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("reloadFailureRate 0.25 at time scale 0.1")
            && stderr.contains("--time-scale 1"),
        "{stderr}"
    );
    // v0.6: an Ingress API Kubernetes no longer serves.
    let out = plan("incident", &["--set", "timeScale=1"], dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("ingress.version v0.6") && stderr.contains("v0-16-roundrobin-ip"),
        "{stderr}"
    );
}

#[test]
fn run_refuses_the_unlocked_controller_image_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let out = harness(&[
        "run",
        FILE,
        "--variant",
        "v0-16",
        "--target",
        "kind",
        "--time-scale",
        "1",
        "--out",
        dir.path().join("run").to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("haproxy-ingress") && stderr.contains("harness pins lock"),
        "{stderr}"
    );
    // Nothing was started: no output directory either.
    assert!(!dir.path().join("run").exists());
}

/// `--matrix` over the controller's settings on kind, as for a pre-upgrade comparison: each
/// cell's plan renders the real controller with that cell's settings, and a version kind cannot
/// run refuses the whole matrix before anything is written.
#[test]
fn a_matrix_over_the_controller_settings_plans_one_controller_per_cell() {
    let dir = tempfile::tempdir().unwrap();
    let out = plan(
        "v0-16-roundrobin-ip",
        &[
            "--set",
            "timeScale=1",
            "--matrix",
            "ingress.sortEndpointsBy=ip,random",
            "--matrix",
            "ingress.balanceAlgorithm=roundrobin,random(2)",
        ],
        dir.path(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(stdout.lines().skip(1).count(), 4, "{stdout}");
    for sort in ["ip", "random"] {
        for balance in ["roundrobin", "random(2)"] {
            // `random(2)` names its directory `random-2`.
            let cell = dir.path().join(format!(
                "ingress.sortEndpointsBy-{sort}_ingress.balanceAlgorithm-{}",
                balance.replace(['(', ')'], "-").trim_end_matches('-')
            ));
            let ingress = std::fs::read_to_string(cell.join("ingress.yaml"))
                .unwrap_or_else(|e| panic!("{}: {e}\n{stdout}", cell.display()));
            assert!(
                ingress.contains(&format!("--sort-endpoints-by={sort}")),
                "{sort}/{balance}:\n{ingress}"
            );
            assert!(
                ingress.contains(&format!("balance-algorithm: {balance}"))
                    || ingress.contains(&format!("balance-algorithm: '{balance}'"))
                    || ingress.contains(&format!("balance-algorithm: \"{balance}\"")),
                "{sort}/{balance}:\n{ingress}"
            );
        }
    }

    let refused = tempfile::tempdir().unwrap();
    let out = plan(
        "v0-16",
        &[
            "--set",
            "timeScale=1",
            "--matrix",
            "ingress.version=v0.6,v0.16",
        ],
        refused.path(),
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("v0.6"), "{stderr}");
    assert!(
        std::fs::read_dir(refused.path()).unwrap().next().is_none(),
        "nothing is written when a cell is refused"
    );
}

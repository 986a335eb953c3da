//! `harness plan --target kind` and `harness run --target kind` as a user types them: the dry
//! run writes the kind config and the manifests in apply order (the same objects the golden
//! files of harness-kind hold), and the usage rules of the kind target's flags exit 2 before
//! anything is started, naming the flag that would allow what was refused.

mod support;

use support::{GOLDEN_PLAN, KIND_IMAGES, harness, plan_on_kind, workspace_root};

#[test]
fn plan_writes_the_kind_config_and_the_manifests_in_apply_order() {
    let dir = tempfile::tempdir().unwrap();
    let out = plan_on_kind(
        "scenarios/topology-skew.yaml",
        dir.path(),
        KIND_IMAGES,
        GOLDEN_PLAN,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let config = std::fs::read_to_string(dir.path().join("kind-config.yaml")).unwrap();
    let top: String = std::fs::read_to_string(workspace_root().join("kind-config.yaml")).unwrap();
    let body = |text: &str| -> String {
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        body(&config),
        body(&top),
        "the same cluster as kind-config.yaml"
    );
    let stream = std::fs::read_to_string(dir.path().join("manifests.yaml")).unwrap();
    let golden = std::fs::read_to_string(
        workspace_root().join("harness/kind/tests/golden/manifests-topology-skew.yaml"),
    )
    .unwrap();
    assert_eq!(stream, golden);
    let mut files: Vec<String> = std::fs::read_dir(dir.path().join("manifests"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "01-namespace-harness-golden.yaml",
            "02-service-flagsvc.yaml",
            "03-deployment-flagsvc.yaml",
            "04-pod-gen-ingress-2a.yaml"
        ]
    );
}

#[test]
fn kind_flags_are_checked_before_anything_starts() {
    let foreign_context: &[&str] = &[
        "run",
        "scenarios/topology-skew.yaml",
        "--target",
        "kind",
        "--context",
        "prod-eks",
    ];
    let cases: &[(&[&str], &str)] = &[
        (
            &["plan", "scenarios/topology-skew.yaml", "--target", "kind"],
            "--output-dir",
        ),
        (foreign_context, "--context prod-eks"),
        (
            &[
                "run",
                "scenarios/topology-skew.yaml",
                "--target",
                "kind",
                "--cluster",
                "kind",
            ],
            "--cluster kind",
        ),
        (
            &[
                "run",
                "scenarios/topology-skew.yaml",
                "--cluster",
                "harness-x",
            ],
            "--cluster only apply to --target kind",
        ),
        (
            &[
                "run",
                "scenarios/topology-skew.yaml",
                "--target",
                "kind",
                "--allow-existing-cluster",
            ],
            "needs --context",
        ),
    ];
    for (args, needle) in cases {
        let out = harness(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
    // The refusal of a foreign context names the flag that would allow it.
    let out = harness(foreign_context);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-existing-cluster"));
}

/// Every variant of rollout-502 plans on kind (the load balancer's five objects before the
/// service's Deployment; the readiness-gate variant as its golden file), and a time scale whose
/// whole-second fields do not scale is refused with exit 2, naming the field.
#[test]
fn every_rollout_502_variant_plans_on_kind() {
    const LB_IMAGES: &str = "harness/kind/tests/fixtures/images-lb.json";
    const ROLLOUT: &str = "scenarios/rollout-502.yaml";
    for variant in [
        "incident",
        "fixed",
        "distroless",
        "app-drain",
        "slow-registration",
        "readiness-gate",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let flags = [&["--variant", variant], GOLDEN_PLAN].concat();
        let out = plan_on_kind(ROLLOUT, dir.path(), LB_IMAGES, &flags);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{variant}: {stderr}");
        assert!(
            stderr.contains("and 9 objects in apply order"),
            "{variant}: {stderr}"
        );
        if variant == "readiness-gate" {
            let stream = std::fs::read_to_string(dir.path().join("manifests.yaml")).unwrap();
            let golden = std::fs::read_to_string(
                workspace_root()
                    .join("harness/kind/tests/golden/manifests-rollout-502-readiness-gate.yaml"),
            )
            .unwrap();
            assert_eq!(stream, golden);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let out = plan_on_kind(ROLLOUT, dir.path(), LB_IMAGES, &["--set", "timeScale=0.05"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("service.readinessProbe.period: 10s at time scale 0.05 is 0.5 s"),
        "{stderr}"
    );
    // Without the load balancer's image: which image is missing, and how to build it.
    let out = plan_on_kind(ROLLOUT, dir.path(), KIND_IMAGES, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("no image for workload `loadbalancer`") && stderr.contains("make images"),
        "{stderr}"
    );
}

/// A plan is a dry run: without `make images` (no image list) it still writes every file, the
/// images named by their stand-ins, and says so on stderr and atop manifests.yaml.
#[test]
fn plan_on_kind_works_without_make_images() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-images.json");
    let out = plan_on_kind(
        "scenarios/topology-skew.yaml",
        &dir.path().join("plan"),
        missing.to_str().unwrap(),
        GOLDEN_PLAN,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!("note: no image list at {}", missing.display()))
            && stderr.contains("harness/<workload>:unbuilt")
            && stderr.contains("run `make images` before `harness run --target kind`"),
        "{stderr}"
    );
    let manifests = std::fs::read_to_string(dir.path().join("plan/manifests.yaml")).unwrap();
    assert!(manifests.starts_with("# no image list at "), "{manifests}");
    assert!(
        manifests.contains("image: harness/flagsvc:unbuilt"),
        "{manifests}"
    );
    assert!(
        manifests.contains("image: harness/sidecar:unbuilt"),
        "{manifests}"
    );
    assert!(!manifests.contains(":sha256-"), "no made-up content tags");
}

//! `scripts/e2e-kind.sh` (`make e2e-kind`) with recording fakes of `kind` and `docker` first on
//! PATH and a scripted `harness` (E2E_HARNESS): a `pins lock` that fails with a 404 and a
//! variant whose exit differs no longer end the script; every scenario and variant is tried,
//! the table names what was expected, what happened and why, and the exit code says that
//! something differed.

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

fn script(dir: &Path, name: &str, body: &str) {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/usr/bin/env bash\n{body}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The scripted harness: `pins lock` fails as a release's 404 would; `run` writes a summary
/// whose explanation names the variant and exits as the table below says (rollout-502's
/// `fixed` fails, as a regression would).
const HARNESS: &str = r#"
echo "$*" >> "$FAKE_LOG"
case "$1" in
  pins) echo "error: GET https://github.com/kedacore/keda/releases/download/v2.21.1/keda-2.21.1.yaml: 404 Not Found" >&2; exit 3 ;;
  kind-config) while [ $# -gt 0 ]; do [ "$1" = --output ] && echo "kind: Cluster" > "$2"; shift; done; exit 0 ;;
  run)
    file="$2"; variant=""; out=""
    while [ $# -gt 0 ]; do
      case "$1" in --variant) variant="$2" ;; --out) out="$2" ;; esac
      shift
    done
    scenario="$(basename "$file" .yaml)"
    case "$scenario/$variant" in
      topology-skew/incident|rollout-502/incident|rollout-502/distroless|rollout-502/slow-registration|rollout-502/fixed|zone-latency/no-routing) code=1 ;;
      *) code=0 ;;
    esac
    mkdir -p "$out"
    echo "{\"verdict\": \"x\", \"explanation\": [\"$scenario $variant explained\"]}" > "$out/summary.json"
    exit "$code" ;;
esac
"#;

#[test]
fn every_scenario_runs_and_the_table_says_what_differed() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let log = dir.path().join("calls.log");
    script(&bin, "harness", HARNESS);
    script(
        &bin,
        "kind",
        "echo \"kind $*\" >> \"$FAKE_LOG\"\n[ \"$1\" = get ] && exit 0\nexit 0\n",
    );
    script(
        &bin,
        "docker",
        "echo \"docker $*\" >> \"$FAKE_LOG\"\necho 4\n",
    );
    let results = dir.path().join("results");
    let root = support::workspace_root();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let out = Command::new("bash")
        .arg(root.join("scripts/e2e-kind.sh"))
        .env("PATH", path)
        .env("FAKE_LOG", &log)
        .env("E2E_HARNESS", bin.join("harness"))
        .env("E2E_RESULTS", &results)
        .env("E2E_LOCK_PINS", "1")
        .env_remove("KEEP_CLUSTER")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    let calls = std::fs::read_to_string(&log).unwrap();
    // The failed lock did not stop the scenarios that need no pins.
    assert!(calls.contains("pins lock"), "{calls}");
    for variant in [
        "incident",
        "fixed",
        "distroless",
        "slow-registration",
        "readiness-gate",
    ] {
        assert!(
            calls.contains(&format!("run scenarios/rollout-502.yaml --target kind --cluster harness-rollout-502 --variant {variant} ")),
            "{calls}"
        );
    }
    assert!(calls.contains("kind create cluster"), "{calls}");
    assert!(
        calls.contains("kind delete cluster --name harness-rollout-502"),
        "{calls}"
    );
    let table = std::fs::read_to_string(results.join("summary.md")).unwrap();
    assert!(
        table.contains("| rollout-502 | fixed | 0 | 1 | rollout-502 fixed explained |"),
        "{table}"
    );
    assert!(
        table.contains("| topology-skew | incident | 1 | 1 | topology-skew incident explained |"),
        "{table}"
    );
    assert!(
        table.contains(
            "| zone-latency | prefer-same-zone | 0 | 0 | zone-latency prefer-same-zone explained |"
        ),
        "{table}"
    );
    // Pins missing and the lock failed: those rows say so instead of a silent stop.
    let unlocked = std::fs::read_to_string(root.join("harness/kind/third-party.yaml"))
        .unwrap()
        .lines()
        .any(|l| {
            let l = l.trim();
            l == "sha256: null" || l == "digest: null"
        });
    if unlocked {
        assert!(
            table.contains(
                "| autoscaler-blind-spot | incident | 1 | not run | harness pins lock failed"
            ),
            "{table}"
        );
    }
    assert!(
        stdout.contains("| scenario | variant | expected | got | why |"),
        "{stdout}"
    );
}

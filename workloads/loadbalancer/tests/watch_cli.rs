//! The binary in watch mode: the in-cluster flags' errors, and a balancer that finds its API
//! server through `KUBECONFIG` (as `kube::Client::try_default()` does outside a pod), follows
//! the Service's EndpointSlices and refuses `PUT /endpoints`.

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use mock_apiserver::ApiServer;
use support::*;
use workload_contract::listening;

fn balancer() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_loadbalancer"));
    cmd.env_remove("POD_NAMESPACE").env_remove("KUBECONFIG");
    cmd
}

fn fails_with(args: &[&str]) -> String {
    let out = balancer().args(args).output().unwrap();
    assert!(!out.status.success(), "{args:?} succeeded");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn missing_namespace_or_target_port_is_an_error_naming_the_fix() {
    let err = fails_with(&["--watch-service", "flagsvc", "--target-port", "8081"]);
    assert!(
        err.contains("--namespace") && err.contains("POD_NAMESPACE"),
        "{err}"
    );
    let err = fails_with(&["--watch-service", "flagsvc", "--namespace", NS]);
    assert!(err.contains("--target-port"), "{err}");
    let err = fails_with(&["--readiness-gate", GATE]);
    assert!(err.contains("--watch-service"), "{err}");
}

#[test]
fn without_a_kubernetes_client_it_fails_before_listening() {
    let dir = tempfile::tempdir().unwrap();
    let out = balancer()
        .args(LOOPBACK_LISTENERS)
        .args(WATCH_FLAGSVC)
        .args(["--namespace", NS])
        .env("KUBECONFIG", dir.path().join("missing"))
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env_remove("KUBERNETES_SERVICE_PORT")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("listening"), "{stdout}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("needs a Kubernetes client"), "{err}");
    assert!(err.contains("KUBECONFIG"), "{err}");
}

#[test]
fn help_lists_the_watch_flags() {
    let out = balancer().arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--watch-service",
        "--namespace",
        "--target-port",
        "--readiness-gate",
        "POD_NAMESPACE",
    ] {
        assert!(help.contains(flag), "{flag} missing from --help:\n{help}");
    }
}

#[tokio::test]
async fn the_binary_watches_through_kubeconfig_and_refuses_put() {
    let server = ApiServer::start(|seen| slices_then_quiet(seen, vec![one_ready_slice()])).await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    let mut child = balancer()
        .args(LOOPBACK_LISTENERS)
        .args(WATCH_FLAGSVC)
        .env("POD_NAMESPACE", NS)
        .env("KUBECONFIG", &kubeconfig)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        line
    })
    .await
    .unwrap();
    let addrs = listening::parse(&line).unwrap_or_else(|| panic!("not a listening line: {line}"));
    let admin = addrs["admin"];
    wait_until("the watched endpoint", || async move {
        endpoint_pods(admin).await == ["pod-0"]
    })
    .await;
    let (code, message) =
        request(admin, "PUT", "/endpoints", r#"{"endpoints":[]}"#.to_owned()).await;
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(code, 409, "{message}");
    assert!(message.contains("--watch-service"), "{message}");
    let slices = server
        .seen()
        .into_iter()
        .find(|s| s.path().ends_with("/endpointslices"))
        .unwrap();
    assert_eq!(
        slices.path(),
        "/apis/discovery.k8s.io/v1/namespaces/harness-r1/endpointslices"
    );
}

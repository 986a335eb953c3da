//! The workload images as real containers (testcontainers): flagsvc, its sidecar and loadgen on
//! a private, internal Docker network the test creates, talking by container name (resolved by
//! the static binaries through Docker's DNS). Every request is accounted for across the three
//! processes: loadgen's 2xx equal what the sidecar admitted and got back from flagsvc, its 503s
//! equal the sidecar's rejections, and every response is attributed (`x-pod`) to the pod the
//! containers were told they are. Nothing is published on the host; the sidecar's metrics are
//! read at its container address on the test's network.
//!
//! Skipped, saying so, only where no Docker engine answers; `HARNESS_REQUIRE_DOCKER=1` (set by
//! .ci/run when the engine runs) turns that skip into a failure.

mod support;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use harness_kind::exec::Cmd;
use harness_kind::images::BuiltImage;
use serde_json::Value;
use support::docker::{Network, built_images, docker_or_skip, unique_id};
use testcontainers::core::WaitFor;
use testcontainers::{GenericImage, RunnableImage, clients};

fn image(built: &BuiltImage, args: &[&str]) -> RunnableImage<GenericImage> {
    let image = GenericImage::new(built.repository(), built.tag());
    RunnableImage::from((image, args.iter().map(|a| a.to_string()).collect()))
}

/// `GET http://addr/path` with HTTP/1.0 (a plain, unchunked body).
fn http_get(addr: &str, path: &str) -> String {
    let mut stream = TcpStream::connect_timeout(&addr.parse().unwrap(), Duration::from_secs(5))
        .unwrap_or_else(|e| panic!("cannot reach {addr} on the test's Docker network: {e}"));
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    write!(stream, "GET {path} HTTP/1.0\r\n\r\n").unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    assert!(
        head.starts_with("HTTP/1.0 200") || head.starts_with("HTTP/1.1 200"),
        "{head}"
    );
    body.to_owned()
}

/// Prometheus text: `name{labels}` → value, summed over repeats.
fn metrics(text: &str) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let (series, value) = line.rsplit_once(' ').unwrap();
        *out.entry(series.to_owned()).or_default() += value.parse::<f64>().unwrap();
    }
    out
}

fn sum_prefixed(metrics: &BTreeMap<String, f64>, prefix: &str) -> u64 {
    metrics
        .iter()
        .filter(|(k, _)| k.starts_with(prefix))
        .map(|(_, v)| *v as u64)
        .sum()
}

fn count(report: &Value, field: &str, key: &str) -> u64 {
    report[field][key].as_u64().unwrap_or(0)
}

#[test]
fn requests_are_conserved_and_attributed_across_containers() {
    let Some(tools) = docker_or_skip("requests_are_conserved_and_attributed_across_containers")
    else {
        return;
    };
    let manifest = built_images(&tools);
    let (flagsvc, sidecar, loadgen) = (
        manifest.image("flagsvc").unwrap(),
        manifest.image("sidecar").unwrap(),
        manifest.image("loadgen").unwrap(),
    );

    let id = unique_id();
    // Declared before the client and the containers, so dropped after them.
    let network = Network::create(&tools, &format!("harness-test-{id}"), "containers", true);
    let docker = clients::Cli::default();
    let pod_env = [
        ("POD_NAME", "pod-a"),
        ("NODE_NAME", "node-a"),
        ("ZONE", "zone-a"),
    ];

    let mut app = image(
        flagsvc,
        &["--listen", "0.0.0.0:8080", "--service-time", "fixed:20ms"],
    )
    .with_network(network.name.clone())
    .with_container_name(format!("flagsvc-{id}"));
    let mut proxy = image(
        sidecar,
        &[
            "--listen",
            "0.0.0.0:8081",
            "--admin-listen",
            "0.0.0.0:9090",
            "--upstream",
            &format!("http://flagsvc-{id}:8080"),
            // One request at a time, one waiting: at 200 rps of 20 ms requests most are
            // turned away with 503, so both outcomes are counted.
            "--max-concurrency",
            "1",
            "--queue-size",
            "1",
        ],
    )
    .with_network(network.name.clone())
    .with_container_name(format!("sidecar-{id}"));
    for (key, value) in pod_env {
        app = app.with_env_var((key, value));
        proxy = proxy.with_env_var((key, value));
    }
    let app = docker.run(wait_for_listening(app));
    let proxy = docker.run(wait_for_listening(proxy));

    let generator = docker.run(
        image(
            loadgen,
            &[
                "run",
                "--url",
                &format!("http://sidecar-{id}:8081/flags/checkout"),
                "--rate",
                "200",
                "--duration",
                "3s",
                "--connections",
                "16",
                "--timeout",
                "5s",
                "--output",
                "json",
            ],
        )
        .with_network(network.name.clone())
        .with_container_name(format!("loadgen-{id}"))
        .with_env_var(("POD_NAME", "gen-a"))
        .with_env_var(("ZONE", "zone-a")),
    );
    let exit = tools
        .output(
            &Cmd::new("docker")
                .args(["wait", generator.id()])
                .timeout(Duration::from_secs(60)),
        )
        .unwrap();
    let logs = tools
        .output(&Cmd::new("docker").args(["logs", generator.id()]))
        .unwrap();
    assert_eq!(exit.stdout.trim(), "0", "loadgen failed: {}", logs.stderr);
    let report: Value = serde_json::from_str(&logs.stdout)
        .unwrap_or_else(|e| panic!("loadgen's report does not parse: {e}\n{}", logs.stdout));

    let ip = tools
        .output(&Cmd::new("docker").args([
            "inspect",
            "--format",
            &format!(
                "{{{{(index .NetworkSettings.Networks \"{}\").IPAddress}}}}",
                network.name
            ),
            proxy.id(),
        ]))
        .unwrap()
        .stdout;
    let sidecar_metrics = metrics(&http_get(&format!("{}:9090", ip.trim()), "/metrics"));

    let attempted = report["attempted"].as_u64().unwrap();
    let ok = count(&report, "responses", "200");
    let rejected = count(&report, "responses", "503");
    let responses: u64 = report["responses"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    let transport: u64 = report["transport_errors"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(transport, 0, "{report:#}");
    assert_eq!(attempted, responses, "{report:#}");
    assert_eq!(
        ok + rejected,
        responses,
        "only 200 and 503 expected: {report:#}"
    );
    assert!(
        ok > 50 && rejected > 50,
        "both outcomes must occur: {ok} ok, {rejected} rejected"
    );

    // Conservation across the containers.
    let m = |name: &str| sidecar_metrics.get(name).copied().unwrap_or(0.0) as u64;
    assert_eq!(
        m("sidecar_received_total"),
        attempted,
        "{sidecar_metrics:#?}"
    );
    assert_eq!(m("sidecar_admitted_total"), ok, "{sidecar_metrics:#?}");
    assert_eq!(m("sidecar_upstream_responses_total{code=\"200\"}"), ok);
    assert_eq!(
        sum_prefixed(&sidecar_metrics, "sidecar_rejected_total"),
        rejected
    );

    // Attribution: every response names the pod the containers were told they are.
    let by_backend = report["by_backend"].as_object().unwrap();
    assert_eq!(
        by_backend.keys().collect::<Vec<_>>(),
        ["pod-a"],
        "{report:#}"
    );
    assert_eq!(by_backend["pod-a"]["requests"].as_u64(), Some(responses));
    assert_eq!(count(&by_backend["pod-a"], "responses", "200"), ok);
    assert_eq!(report["config"]["origin"]["pod"], "gen-a");
    drop((generator, proxy, app));
}

fn wait_for_listening(image: RunnableImage<GenericImage>) -> RunnableImage<GenericImage> {
    // Both servers print `listening http=...` on stdout once bound.
    let (inner, args) = (image.inner().clone(), image.args().clone());
    let name = image.container_name().clone().unwrap();
    let network = image.network().clone().unwrap();
    let env: Vec<(String, String)> = image
        .env_vars()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut ready = RunnableImage::from((
        inner.with_wait_for(WaitFor::message_on_stdout("listening http=")),
        args,
    ))
    .with_network(network)
    .with_container_name(name);
    for pair in env {
        ready = ready.with_env_var(pair);
    }
    ready
}

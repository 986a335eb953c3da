//! Reports of generators that ran together merge exactly; the binary writes and merges them.

mod common;

use std::time::Duration;

use common::{config, full, http_server};
use loadgen::report::decode_histogram;
use loadgen::{Report, ReportExt, merge_reports};

async fn zone_server(zone: &'static str) -> common::TestServer {
    http_server(move |conn, _| async move {
        let pod = format!("{zone}-pod-{}", conn % 2);
        tokio::time::sleep(Duration::from_millis(if conn % 2 == 0 { 1 } else { 5 })).await;
        full(200, &pod, "")
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_generators_merge_into_exact_totals() {
    let (a, b) = (zone_server("a").await, zone_server("b").await);
    let ca = config(a.url("/"), 100.0, Duration::from_secs(1), 2);
    let cb = config(b.url("/"), 60.0, Duration::from_secs(1), 2);
    let (ra, rb) = tokio::join!(
        loadgen::run(ca, std::future::pending()),
        loadgen::run(cb, std::future::pending())
    );
    let (ra, rb) = (ra.unwrap(), rb.unwrap());
    let merged = merge_reports(&[ra.clone(), rb.clone()]);
    merged.check_invariants().unwrap();

    assert_eq!(merged.sources, 2);
    assert_eq!(merged.attempted, 160);
    assert_eq!(
        merged.responses["200"],
        ra.responses["200"] + rb.responses["200"]
    );
    assert_eq!(merged.by_backend.len(), 4);
    for (pod, backend) in ra.by_backend.iter().chain(&rb.by_backend) {
        assert_eq!(merged.by_backend[pod].requests, backend.requests, "{pod}");
    }
    // The merged histogram is the sum of both.
    let mut sum = decode_histogram(&ra.histogram).unwrap();
    sum.add(decode_histogram(&rb.histogram).unwrap()).unwrap();
    let merged_hist = decode_histogram(&merged.histogram).unwrap();
    assert_eq!(merged_hist.len(), 160);
    assert!(merged_hist == sum);
    assert_eq!(
        merged.latency_ms.p99,
        sum.value_at_quantile(0.99) as f64 / 1000.0
    );
    // A mixture's quantile lies between its parts' quantiles.
    let (lo, hi) = if ra.latency_ms.p50 < rb.latency_ms.p50 {
        (ra.latency_ms.p50, rb.latency_ms.p50)
    } else {
        (rb.latency_ms.p50, ra.latency_ms.p50)
    };
    assert!(lo <= merged.latency_ms.p50 && merged.latency_ms.p50 <= hi);
}

/// Runs `command` (at most 30 s) and asserts that it succeeded; its output.
async fn succeeds(command: &mut tokio::process::Command) -> std::process::Output {
    let out = tokio::time::timeout(Duration::from_secs(30), command.output())
        .await
        .unwrap()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_writes_json_reports_and_merges_them() {
    let server = zone_server("z").await;
    let dir = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_loadgen");
    let url = server.url("/flags").to_string();
    let mut paths = Vec::new();
    for k in 0..2 {
        let path = dir.path().join(format!("r{k}.json"));
        let out = succeeds(
            tokio::process::Command::new(bin)
                .args(["run", "--url", &url, "--rate", "50", "--duration", "500ms"])
                .args(["--connections", "2", "--output", "text", "--output-file"])
                .arg(&path),
        )
        .await;
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("25 attempted: 25 responses"), "{stdout}");
        paths.push(path);
    }
    let out = succeeds(tokio::process::Command::new(bin).arg("merge").args(&paths)).await;
    let merged: Report = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(merged.attempted, 50);
    assert_eq!(merged.sources, 2);
    merged.check_invariants().unwrap();

    // Usage errors exit with 2.
    let out = tokio::process::Command::new(bin)
        .args(["run", "--url", "https://x/", "--rate", "1"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

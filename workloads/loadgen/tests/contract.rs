//! The workload contract from loadgen's side: the arguments the harness builds
//! (`workload_contract::loadgen::RunArgs`) parse with loadgen's own command line, a report the
//! binary writes reads back into the type the harness reads, the source-side counter the
//! harness scrapes has the name it looks for, and the transport-error keys are the ones the
//! harness knows.

mod common;

use std::time::Duration;

use clap::Parser;
use common::{full, http_server};
use loadgen::cli::{Cli, Command};
use loadgen::{ErrorKind, Metrics, RateSpec};
use workload_contract::loadgen::{
    ATTEMPTED_TOTAL, ConnectionModel, Rate, Report, RunArgs, SCHEMA, SseStreams, TransportError,
};
use workload_contract::prometheus;

fn args(rate: Rate, report_file: std::path::PathBuf) -> RunArgs {
    RunArgs {
        url: "http://127.0.0.1:9/flags/a".into(),
        rate,
        duration: Duration::from_millis(2500),
        connections: 3,
        connection_model: ConnectionModel::PerRequest,
        timeout: Duration::from_millis(750),
        report_file,
        seed: 42,
        metrics_listen: Some("127.0.0.1:9100".parse().unwrap()),
        sse: Some(SseStreams {
            streams: 2,
            url: "http://127.0.0.1:9/stream".into(),
        }),
    }
}

#[test]
fn harness_arguments_parse_with_loadgens_cli() {
    let cases = [
        (Rate::PerSecond(12.5), RateSpec::Constant(12.5)),
        (Rate::Max, RateSpec::Max),
        (
            Rate::Ramp {
                from: 10.0,
                to: 200.0,
            },
            RateSpec::Ramp {
                from: 10.0,
                to: 200.0,
            },
        ),
    ];
    for (rate, expected) in cases {
        let given = args(rate, "/tmp/report.json".into());
        let argv = std::iter::once("loadgen".to_string()).chain(given.to_args());
        let cli = Cli::try_parse_from(argv).unwrap_or_else(|e| panic!("{given:?}: {e}"));
        let Command::Run(run) = cli.command else {
            panic!("expected `run`");
        };
        assert_eq!(
            run.output_file.as_deref(),
            Some(given.report_file.as_path())
        );
        assert_eq!(run.metrics_listen, given.metrics_listen);
        let c = run.to_config().unwrap();
        assert_eq!(c.url.to_string(), given.url);
        assert_eq!(c.rate, expected);
        assert_eq!(c.duration, given.duration);
        assert_eq!(c.connections, 3);
        assert_eq!(c.connection_model, ConnectionModel::PerRequest);
        assert_eq!(c.timeout, given.timeout);
        assert_eq!(c.seed, 42);
        assert_eq!(c.sse_streams, 2);
        assert_eq!(
            c.sse_url.map(|u| u.to_string()).as_deref(),
            Some("http://127.0.0.1:9/stream")
        );
    }
}

#[tokio::test]
async fn a_report_the_binary_writes_reads_back_into_the_harness_type() {
    // Connections alternate between two pods.
    let server = http_server(|conn, _req| async move {
        full(200, if conn % 2 == 0 { "pod-a" } else { "pod-b" }, "ok")
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let report_file = dir.path().join("loadgen-g.json");
    let given = RunArgs {
        url: format!("http://{}/flags/a", server.addr),
        rate: Rate::PerSecond(40.0),
        duration: Duration::from_secs(1),
        connections: 2,
        connection_model: ConnectionModel::KeepAlive,
        timeout: Duration::from_secs(2),
        report_file: report_file.clone(),
        seed: 1,
        metrics_listen: None,
        sse: None,
    };
    let status = tokio::time::timeout(
        Duration::from_secs(20),
        tokio::process::Command::new(env!("CARGO_BIN_EXE_loadgen"))
            .args(given.to_args())
            .env("RUST_LOG", "warn")
            .status(),
    )
    .await
    .expect("loadgen finishes")
    .unwrap();
    assert!(status.success(), "{status}");
    let text = std::fs::read_to_string(&report_file).unwrap();
    let report = Report::from_json(&text).unwrap_or_else(|e| panic!("{e}:\n{text}"));
    assert_eq!(report.schema, SCHEMA);
    assert!(!report.partial);
    assert_eq!(report.attempted, 40, "40 rps for 1 s, open loop");
    assert_eq!(report.responses.get("200"), Some(&40));
    assert!(report.started_at_unix_ms > 0);
    let rows: u64 = report.timeline.iter().map(|r| r.attempted).sum();
    assert_eq!(rows, 40);
    let per_pod: u64 = report
        .timeline
        .iter()
        .flat_map(|r| r.by_backend.values())
        .sum();
    assert_eq!(per_pod, 40);
    assert_eq!(
        report.by_backend.keys().collect::<Vec<_>>(),
        vec!["pod-a", "pod-b"]
    );
    for kind in TransportError::ALL {
        assert_eq!(report.transport_errors.get(kind.as_str()), Some(&0));
    }
}

#[tokio::test]
async fn the_source_side_counter_has_the_name_the_harness_scrapes() {
    let server = http_server(|_, _req| async { full(200, "pod-a", "ok") }).await;
    let mut config = common::config(server.url("/"), 40.0, Duration::from_millis(500), 2);
    config.seed = 3;
    let metrics = Metrics::new();
    let report = loadgen::run_with_metrics(config, metrics.clone(), std::future::pending())
        .await
        .unwrap();
    assert_eq!(report.attempted, 20);
    assert_eq!(
        prometheus::value(&metrics.encode(), ATTEMPTED_TOTAL),
        Some(20.0)
    );
}

#[test]
fn transport_error_kinds_are_the_harness_keys() {
    let loadgen: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
    let contract: Vec<&str> = TransportError::ALL.iter().map(|k| k.as_str()).collect();
    assert_eq!(loadgen, contract);
}

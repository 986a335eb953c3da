//! The workload contract from the sidecar's side: the arguments the harness builds
//! (`workload_contract::sidecar::SidecarArgs`) parse with the sidecar's own command line, and
//! the metrics a real sidecar renders parse with the harness's parser
//! (`SidecarMetrics::parse`) into the numbers that happened.

use std::time::Duration;

use clap::Parser;
use sidecar::Cli;
use workload_common::identity::Identity;
use workload_contract::sidecar::{ReadinessOnSaturation, SidecarArgs, SidecarMetrics};

use crate::support::one_holding_one_queued;
use workload_test_support::Upstream;

#[test]
fn harness_arguments_parse_with_the_sidecars_cli() {
    let bounded = SidecarArgs {
        listen: "127.0.0.1:0".parse().unwrap(),
        admin_listen: "127.0.0.1:0".parse().unwrap(),
        upstream: "http://127.0.0.1:4321".into(),
        max_concurrency: 7,
        queue_size: 12,
        queue_timeout: Duration::from_millis(250),
        drain_delay: Duration::from_millis(1500),
        readiness_on_saturation: Some(ReadinessOnSaturation {
            queue_above: 4,
            sustained_for: Duration::from_secs(2),
        }),
        termination_log: Some("/dev/termination-log".into()),
    };
    let unbounded = SidecarArgs {
        queue_size: 0,
        queue_timeout: Duration::ZERO,
        readiness_on_saturation: None,
        termination_log: None,
        ..bounded.clone()
    };
    for args in [bounded, unbounded] {
        let argv = std::iter::once("sidecar".to_string()).chain(args.to_args());
        let cli = Cli::try_parse_from(argv).unwrap_or_else(|e| panic!("{args:?}: {e}"));
        assert_eq!(
            (cli.listen, cli.admin_listen),
            (args.listen, args.admin_listen)
        );
        let c = cli.to_config(Identity::from_lookup(|_| None)).unwrap();
        assert_eq!(c.upstream.to_string(), format!("{}/", args.upstream));
        assert_eq!(c.max_concurrency, args.max_concurrency as usize);
        assert_eq!(
            c.queue_size,
            (args.queue_size > 0).then_some(args.queue_size as usize)
        );
        assert_eq!(
            c.queue_timeout,
            (!args.queue_timeout.is_zero()).then_some(args.queue_timeout)
        );
        assert_eq!(c.serve.drain_delay, args.drain_delay);
        assert_eq!(cli.termination_log, args.termination_log);
        assert_eq!(
            c.readiness.map(|r| (r.queue_above, r.for_at_least)),
            args.readiness_on_saturation
                .map(|r| (r.queue_above as usize, r.sustained_for))
        );
    }
}

#[test]
fn help_documents_every_flag() {
    use clap::CommandFactory;
    workload_test_support::assert_every_flag_has_help(&Cli::command());
}

#[tokio::test]
async fn rendered_metrics_parse_into_what_happened() {
    let upstream = Upstream::start().await;
    // A holds the slot, B waits in the queue, C finds the queue full.
    let (sidecar, a, b) = one_holding_one_queued(&upstream).await;
    assert_eq!(sidecar.get("/fast").await.status, 503);
    let busy = SidecarMetrics::parse(&sidecar.metrics_text().await);
    assert_eq!(
        busy,
        SidecarMetrics {
            in_flight: 1,
            queue_depth: 1,
            received: 3,
            admitted: 1,
            rejected_queue_full: 1,
            rejected_queue_timeout: 0,
        }
    );

    // B times out in the queue; A finishes; D goes through.
    assert_eq!(b.await.unwrap().unwrap().status, 503);
    upstream.gate.add_permits(1);
    assert_eq!(a.await.unwrap().unwrap().status, 200);
    assert_eq!(sidecar.get("/fast").await.status, 200);
    let after = SidecarMetrics::parse(&sidecar.metrics_text().await);
    assert_eq!(
        after,
        SidecarMetrics {
            in_flight: 0,
            queue_depth: 0,
            received: 4,
            admitted: 2,
            rejected_queue_full: 1,
            rejected_queue_timeout: 1,
        }
    );
}

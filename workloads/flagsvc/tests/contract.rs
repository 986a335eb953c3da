//! The harness's side of the workload contract parses with flagsvc's own command line: every
//! argument the harness builds (`workload_contract::flagsvc::FlagsvcArgs`) reaches the config.

use std::time::Duration;

use clap::Parser;
use flagsvc::ServiceTime;
use flagsvc::cli::Cli;
use workload_common::identity::Identity;
use workload_contract::flagsvc::{self as contract, FlagsvcArgs};

fn parse(args: &FlagsvcArgs) -> Cli {
    let argv = std::iter::once("flagsvc".to_string()).chain(args.to_args());
    Cli::try_parse_from(argv).unwrap_or_else(|e| panic!("{:?}: {e}", args.to_args()))
}

#[test]
fn harness_arguments_parse_with_flagsvcs_cli() {
    let cases = [
        (
            contract::ServiceTime::Fixed(Duration::from_millis(20)),
            ServiceTime::Fixed(Duration::from_millis(20)),
        ),
        (
            contract::ServiceTime::Exponential {
                mean: Duration::from_millis(7),
            },
            ServiceTime::Exponential {
                mean: Duration::from_millis(7),
            },
        ),
        (
            contract::ServiceTime::Cpu(Duration::from_millis(2)),
            ServiceTime::Cpu(Duration::from_millis(2)),
        ),
    ];
    for (given, expected) in cases {
        let args = FlagsvcArgs {
            listen: "127.0.0.1:0".parse().unwrap(),
            service_time: given,
            sse_interval: Duration::from_millis(250),
            drain_delay: Duration::from_millis(3500),
        };
        let cli = parse(&args);
        assert_eq!(cli.listen, args.listen);
        let config = cli.to_config(Identity::from_lookup(|_| None));
        assert_eq!(config.service_time, expected);
        assert_eq!(config.sse_heartbeat, Duration::from_millis(250));
        assert_eq!(config.serve.drain_delay, Duration::from_millis(3500));
    }
}

#[test]
fn the_identity_environment_is_the_one_flagsvc_reads() {
    let env = workload_contract::identity::env("pod-3", "node-a", "zone-1");
    let identity =
        Identity::from_lookup(|key| env.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone()));
    assert_eq!(
        (identity.pod, identity.node, identity.zone),
        ("pod-3".into(), "node-a".into(), "zone-1".into())
    );
}

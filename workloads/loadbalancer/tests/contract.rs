//! The harness's side of the workload contract parses with the balancer's own command line:
//! every argument the harness builds (`workload_contract::loadbalancer::LoadBalancerArgs`)
//! reaches the config.

use std::time::Duration;

use clap::Parser;
use loadbalancer::cli::Cli;
use workload_contract::loadbalancer::{HealthCheckArgs, LoadBalancerArgs};

#[test]
fn harness_arguments_parse_with_the_balancers_cli() {
    let passive = LoadBalancerArgs {
        listen: "127.0.0.1:0".parse().unwrap(),
        admin_listen: "127.0.0.1:0".parse().unwrap(),
        registration_lag: Duration::from_millis(500),
        deregistration_lag: Duration::from_secs(2),
        deregistration_delay: Duration::from_secs(3),
        health_check: None,
        bucket: Duration::from_millis(100),
    };
    let active = LoadBalancerArgs {
        health_check: Some(HealthCheckArgs {
            interval: Duration::from_millis(1500),
            timeout: Duration::from_secs(1),
            healthy_threshold: 3,
            unhealthy_threshold: 4,
            path: "/healthz".into(),
        }),
        ..passive.clone()
    };
    for args in [passive, active] {
        let argv = std::iter::once("loadbalancer".to_string()).chain(args.to_args());
        let cli = Cli::try_parse_from(argv).unwrap_or_else(|e| panic!("{args:?}: {e}"));
        assert_eq!(
            (cli.listen, cli.admin_listen),
            (args.listen, args.admin_listen)
        );
        let c = cli.to_config().unwrap();
        let group = c.target_group;
        assert_eq!(group.registration_lag, args.registration_lag);
        assert_eq!(group.deregistration_lag, args.deregistration_lag);
        assert_eq!(group.deregistration_delay, args.deregistration_delay);
        assert_eq!(c.proxy.bucket, args.bucket);
        assert_eq!(group.active_health_checks, args.health_check.is_some());
        if let Some(hc) = &args.health_check {
            assert_eq!(group.health_check.interval, hc.interval);
            assert_eq!(group.health_check.healthy_threshold, hc.healthy_threshold);
            assert_eq!(
                group.health_check.unhealthy_threshold,
                hc.unhealthy_threshold
            );
            let probe = c.health_probe.expect("active checks are probed");
            assert_eq!(
                (probe.path.as_str(), probe.timeout),
                (hc.path.as_str(), hc.timeout)
            );
        }
    }
}

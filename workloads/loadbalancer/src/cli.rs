//! The command line ([`Cli`], clap derive) and the [`Config`] it describes ([`Cli::to_config`],
//! which also checks the in-cluster flags: [`CliError`]). Durations are humantime strings
//! (`250ms`, `5s`, `1m`).

use std::net::SocketAddr;
use std::time::Duration;

use clap::Parser;

use crate::Config;
use crate::controller::HealthProbe;
use crate::endpoint_watch::WatchSpec;
use crate::proxy::LbConfig;
use crate::target_group::{HealthCheckSpec, TargetGroupSpec};

/// ALB-like load balancer in IP target mode: proxies each request straight to a pod address,
/// round robin over the routable targets. Targets come from the Service's ready endpoints,
/// fed with PUT /endpoints on the admin port ({"endpoints":[{"pod":"pod-0","addr":"IP:PORT"}]}),
/// or, in a cluster, by a watch of the Service's EndpointSlices (--watch-service, with
/// --target-port; optionally --readiness-gate, as the AWS Load Balancer Controller does it);
/// a target registers --registration-lag after its endpoint turned ready and stops getting new
/// requests --deregistration-lag after its endpoint left, then drains. GET /stats on the admin
/// port gives per-pod accounting (JSON), GET /metrics the same for Prometheus.
#[derive(Debug, Clone, Parser)]
#[command(name = "loadbalancer", version)]
pub struct Cli {
    /// Address to accept client traffic on (port 0 picks a free port; the bound addresses are
    /// printed on stdout as `listening http=ADDR admin=ADDR`).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Address of the admin listener: PUT/GET /endpoints, GET /stats, GET /targets, /metrics, /healthz.
    #[arg(long, default_value = "127.0.0.1:9901")]
    pub admin_listen: SocketAddr,
    /// From an endpoint turning ready to its target's registration (the controller's lag).
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    pub registration_lag: Duration,
    /// From an endpoint leaving to its target's deregistration; until then new requests still
    /// go to it (the incident's 502 window).
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub deregistration_lag: Duration,
    /// How long a deregistered target drains (deregistration_delay.timeout_seconds).
    #[arg(long, default_value = "300s", value_parser = humantime::parse_duration)]
    pub deregistration_delay: Duration,
    /// Active HTTP health checks of every target at this interval. Off unless given: a target
    /// then turns healthy at registration.
    #[arg(long, value_parser = humantime::parse_duration)]
    pub health_check_interval: Option<Duration>,
    /// A health check that has no answer within this time fails.
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    pub health_check_timeout: Duration,
    /// Path of the health checks (GET; 200-399 is healthy).
    #[arg(long, default_value = "/readyz")]
    pub health_check_path: String,
    /// Consecutive passes that turn an unhealthy target healthy.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    pub healthy_threshold: u32,
    /// Consecutive failures that turn a target unhealthy.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..))]
    pub unhealthy_threshold: u32,
    /// Longest wait for a target's response head, and longest silence between frames of a
    /// relayed body (the ALB idle timeout; 504 after it).
    #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
    pub target_timeout: Duration,
    /// Longest wait for the TCP connection to a target (504 connect-timeout after it).
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub connect_timeout: Duration,
    /// How long an idle pooled connection to a target is kept.
    #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
    pub pool_idle_timeout: Duration,
    /// A client must send its complete request head within this time.
    #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
    pub client_header_timeout: Duration,
    /// Width of the accounting buckets in /stats.
    #[arg(long, default_value = "1s", value_parser = humantime::parse_duration)]
    pub bucket: Duration,
    /// In a cluster: take the targets from this Service's EndpointSlices (label
    /// kubernetes.io/service-name=NAME, watched with the pod's service account or KUBECONFIG)
    /// instead of PUT /endpoints, which then answers 409. Needs --target-port and a namespace.
    #[arg(long, value_name = "NAME", requires = "target_port")]
    pub watch_service: Option<String>,
    /// Namespace of the watched Service and its pods.
    #[arg(long, value_name = "NS", env = "POD_NAMESPACE")]
    pub namespace: Option<String>,
    /// With --watch-service: the pod port requests go to (targets are POD_IP:PORT).
    #[arg(long, value_name = "PORT", requires = "watch_service")]
    pub target_port: Option<u16>,
    /// With --watch-service: a pod readiness gate, as the AWS Load Balancer Controller runs it.
    /// Endpoints not ready yet are registered too when their pod lists this condition type in
    /// spec.readinessGates and is ContainersReady; the condition is set on the pod's status
    /// (True once its target is healthy, False with the target's state as reason otherwise).
    /// Example: target-health.harness.io/flagsvc.
    #[arg(long, value_name = "CONDITION_TYPE", requires = "watch_service")]
    pub readiness_gate: Option<String>,
}

/// Flags that do not fit together.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CliError {
    #[error(
        "--watch-service {service} needs the Service's namespace: pass --namespace NS or set POD_NAMESPACE (in a pod, from the downward API's metadata.namespace)"
    )]
    MissingNamespace { service: String },
    #[error("--watch-service needs --target-port PORT: the pod port the targets are sent to")]
    MissingTargetPort,
    #[error(
        "--readiness-gate {0:?} is not a pod condition type; give one like target-health.harness.io/flagsvc (no spaces, not empty)"
    )]
    BadReadinessGate(String),
    #[error("--{flag} must not be empty")]
    Empty { flag: &'static str },
}

impl Cli {
    /// The in-cluster endpoint feed these flags describe; `None` without --watch-service.
    pub fn watch_spec(&self) -> Result<Option<WatchSpec>, CliError> {
        let Some(service) = self.watch_service.clone() else {
            return Ok(None);
        };
        if service.is_empty() {
            return Err(CliError::Empty {
                flag: "watch-service",
            });
        }
        let namespace = self
            .namespace
            .clone()
            .filter(|ns| !ns.is_empty())
            .ok_or_else(|| CliError::MissingNamespace {
                service: service.clone(),
            })?;
        let target_port = self.target_port.ok_or(CliError::MissingTargetPort)?;
        if let Some(gate) = &self.readiness_gate
            && (gate.is_empty() || gate.chars().any(char::is_whitespace))
        {
            return Err(CliError::BadReadinessGate(gate.clone()));
        }
        Ok(Some(WatchSpec {
            service,
            namespace,
            target_port,
            readiness_gate: self.readiness_gate.clone(),
        }))
    }

    /// The configuration these flags describe.
    pub fn to_config(&self) -> Result<Config, CliError> {
        let defaults = TargetGroupSpec::default();
        let health_check = match self.health_check_interval {
            Some(interval) => HealthCheckSpec {
                interval,
                healthy_threshold: self.healthy_threshold,
                unhealthy_threshold: self.unhealthy_threshold,
                initial_checks: defaults.health_check.initial_checks,
            },
            // No health checks: a target takes traffic from its registration on.
            None => HealthCheckSpec {
                initial_checks: 0,
                ..defaults.health_check
            },
        };
        Ok(Config {
            proxy: LbConfig {
                target_timeout: self.target_timeout,
                connect_timeout: self.connect_timeout,
                pool_idle_timeout: self.pool_idle_timeout,
                client_header_timeout: self.client_header_timeout,
                bucket: self.bucket,
            },
            target_group: TargetGroupSpec {
                registration_lag: self.registration_lag,
                deregistration_lag: self.deregistration_lag,
                deregistration_delay: self.deregistration_delay,
                health_check,
                active_health_checks: self.health_check_interval.is_some(),
            },
            health_probe: self.health_check_interval.map(|_| HealthProbe {
                path: self.health_check_path.clone(),
                timeout: self.health_check_timeout,
            }),
            watch: self.watch_spec()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn help_documents_every_flag() {
        workload_test_support::assert_every_flag_has_help(&Cli::command());
    }

    /// Moved with the scenario → target-group mapping from harness-local's lb_sync.rs.
    #[test]
    fn without_health_checks_targets_are_routable_from_registration() {
        let cli = Cli::try_parse_from([
            "loadbalancer",
            "--registration-lag",
            "500ms",
            "--deregistration-lag",
            "2s",
            "--deregistration-delay",
            "3s",
        ])
        .unwrap();
        let mut group = crate::TargetGroup::new(cli.to_config().unwrap().target_group);
        group.on_endpoint_ready("pod-0", Duration::ZERO);
        assert!(group.routable(Duration::from_millis(400)).is_empty());
        assert_eq!(group.routable(Duration::from_millis(500)), vec!["pod-0"]);
        group.on_endpoint_removed("pod-0", Duration::from_secs(1));
        assert_eq!(
            group.routable(Duration::from_millis(2900)),
            vec!["pod-0"],
            "lag"
        );
        assert!(
            group.routable(Duration::from_secs(3)).is_empty(),
            "deregistered"
        );
    }

    #[test]
    fn without_health_checks_targets_are_healthy_from_registration() {
        let cli = Cli::try_parse_from(["loadbalancer", "--deregistration-lag", "2s"]).unwrap();
        let config = cli.to_config().unwrap();
        assert_eq!(
            config.target_group.deregistration_lag,
            Duration::from_secs(2)
        );
        assert!(!config.target_group.active_health_checks);
        assert_eq!(config.target_group.health_check.initial_checks, 0);
        assert!(config.health_probe.is_none());
        let cli = Cli::try_parse_from(["loadbalancer", "--health-check-interval", "5s"]).unwrap();
        let config = cli.to_config().unwrap();
        assert!(config.target_group.active_health_checks);
        assert_eq!(
            config.target_group.health_check.interval,
            Duration::from_secs(5)
        );
        assert_eq!(
            config.health_probe.map(|p| p.path).as_deref(),
            Some("/readyz")
        );
    }

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("loadbalancer").chain(args.iter().copied()))
    }

    #[test]
    fn watch_flags_describe_the_watch() {
        let cli = parse(&[
            "--watch-service",
            "flagsvc",
            "--namespace",
            "harness-r1",
            "--target-port",
            "8081",
            "--readiness-gate",
            "target-health.harness.io/flagsvc",
        ])
        .unwrap();
        assert_eq!(
            cli.to_config().unwrap().watch,
            Some(WatchSpec {
                service: "flagsvc".into(),
                namespace: "harness-r1".into(),
                target_port: 8081,
                readiness_gate: Some("target-health.harness.io/flagsvc".into()),
            })
        );
        assert_eq!(parse(&[]).unwrap().to_config().unwrap().watch, None);
    }

    #[test]
    fn watch_without_namespace_or_target_port_is_an_error() {
        let cli = parse(&["--watch-service", "flagsvc", "--target-port", "8081"]).unwrap();
        // POD_NAMESPACE may be set where the tests run; the check is on the parsed value.
        let cli = Cli {
            namespace: None,
            ..cli
        };
        let err = cli.to_config().unwrap_err();
        assert_eq!(
            err,
            CliError::MissingNamespace {
                service: "flagsvc".into()
            }
        );
        assert!(err.to_string().contains("--namespace"), "{err}");
        assert!(err.to_string().contains("POD_NAMESPACE"), "{err}");
        let err = parse(&["--watch-service", "flagsvc", "--namespace", "ns"]).unwrap_err();
        assert!(err.to_string().contains("--target-port"), "{err}");
        let err = parse(&["--target-port", "8081"]).unwrap_err();
        assert!(err.to_string().contains("--watch-service"), "{err}");
        let err = parse(&["--readiness-gate", "x/y"]).unwrap_err();
        assert!(err.to_string().contains("--watch-service"), "{err}");
        let cli = parse(&[
            "--watch-service",
            "flagsvc",
            "--namespace",
            "ns",
            "--target-port",
            "8081",
            "--readiness-gate",
            "has space",
        ])
        .unwrap();
        assert_eq!(
            cli.to_config().unwrap_err(),
            CliError::BadReadinessGate("has space".into())
        );
    }
}

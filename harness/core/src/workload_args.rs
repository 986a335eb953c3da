//! The workloads' command lines for a scenario, the same for every target: what `flagsvc`,
//! `sidecar`, `loadgen` and `loadbalancer` are started with, built from the scenario's
//! settings into the [`workload_contract`] argument types. Only the addresses differ between
//! targets (loopback ports locally, fixed container ports in a cluster), so they are
//! parameters. The scenario is in Kubernetes time; the workloads take wall time, so every
//! control-plane duration goes through the run's [`TimeScale`] here (the drain delay, which
//! stands in for a preStop sleep, the load's length, the load balancer's lags); the data
//! plane's own timings (service time, request and queue timeouts) do not.

use std::net::SocketAddr;
use std::path::PathBuf;

use std::time::Duration;

use workload_contract::flagsvc::{self, FlagsvcArgs};
use workload_contract::loadbalancer::{HealthCheckArgs, LoadBalancerArgs};
use workload_contract::loadgen::{self, RunArgs, SseStreams};
use workload_contract::sidecar::{ReadinessOnSaturation, SidecarArgs};

use crate::clock::TimeScale;
use crate::scenario::model::{
    App, ConnectionModel, Generator, Load, LoadBalancer, Rate, ServiceTime, Sidecar, Sse,
};

/// Width of the load balancer's accounting buckets: fine enough to place a request inside a
/// pod's termination.
pub const LB_BUCKET: Duration = Duration::from_millis(100);

/// How long a load balancer health check may take before it counts as failed.
pub const LB_HEALTH_CHECK_TIMEOUT: Duration = Duration::from_secs(1);

/// `flagsvc` of a pod whose revision runs `app`.
pub fn flagsvc_args(
    service_time: ServiceTime,
    sse: Option<Sse>,
    app: &App,
    scale: TimeScale,
    listen: SocketAddr,
) -> FlagsvcArgs {
    FlagsvcArgs {
        listen,
        service_time: match service_time {
            ServiceTime::Fixed(d) => flagsvc::ServiceTime::Fixed(d),
            ServiceTime::Exponential { mean } => flagsvc::ServiceTime::Exponential { mean },
            ServiceTime::Cpu(d) => flagsvc::ServiceTime::Cpu(d),
        },
        // Without SSE in the scenario no stream is opened; flagsvc's own default stays.
        sse_interval: sse.map_or(Duration::from_secs(1), |s| s.heartbeat_interval),
        drain_delay: scale.wall(app.drain_delay),
    }
}

/// The `sidecar` in front of a pod's flagsvc at `upstream`.
pub fn sidecar_args(
    limits: &Sidecar,
    app: &App,
    scale: TimeScale,
    listen: SocketAddr,
    admin_listen: SocketAddr,
    upstream: SocketAddr,
) -> SidecarArgs {
    SidecarArgs {
        listen,
        admin_listen,
        upstream: format!("http://{upstream}"),
        max_concurrency: limits.max_concurrency,
        queue_size: limits.queue_limit.unwrap_or(0),
        queue_timeout: limits.queue_timeout.unwrap_or_default(),
        drain_delay: scale.wall(app.drain_delay),
        readiness_on_saturation: limits
            .readiness_on_saturation
            .map(|r| ReadinessOnSaturation {
                queue_above: r.queue_above,
                sustained_for: r.sustained_for,
            }),
        // Where the final counters go is the target's (a file of the run, or the container's
        // terminationMessagePath).
        termination_log: None,
    }
}

/// `loadgen run` for `generator`, sending to `target` (`host:port` of its kube-proxy or the
/// load balancer) and writing its report to `report_file`.
pub fn loadgen_args(
    generator: &Generator,
    load: &Load,
    scale: TimeScale,
    target: &str,
    metrics_listen: Option<SocketAddr>,
    report_file: PathBuf,
    seed: u64,
) -> RunArgs {
    // A generator starting later runs from its start to the end of the load, without warm-up.
    let duration = scale.wall(if generator.start_at.is_zero() {
        load.warmup + load.duration
    } else {
        load.duration.saturating_sub(generator.start_at)
    });
    RunArgs {
        url: format!("http://{target}{}", generator.path),
        rate: match generator.rate {
            Rate::PerSecond(r) => loadgen::Rate::PerSecond(r),
            Rate::Max => loadgen::Rate::Max,
            Rate::Ramp { from, to } => loadgen::Rate::Ramp { from, to },
        },
        duration,
        connections: generator.connections,
        connection_model: match generator.connection_model {
            ConnectionModel::KeepAlive => loadgen::ConnectionModel::KeepAlive,
            ConnectionModel::PerRequest => loadgen::ConnectionModel::PerRequest,
        },
        timeout: load.request_timeout,
        report_file,
        seed,
        metrics_listen,
        sse: (generator.sse_streams > 0).then(|| SseStreams {
            streams: generator.sse_streams,
            url: format!("http://{target}/stream"),
        }),
    }
}

/// The scenario's `loadBalancer` as the `loadbalancer` workload's flags.
pub fn loadbalancer_args(
    spec: &LoadBalancer,
    scale: TimeScale,
    listen: SocketAddr,
    admin_listen: SocketAddr,
) -> LoadBalancerArgs {
    LoadBalancerArgs {
        listen,
        admin_listen,
        registration_lag: scale.wall(spec.registration_lag),
        deregistration_lag: scale.wall(spec.deregistration_lag),
        deregistration_delay: scale.wall(spec.deregistration_delay),
        health_check: spec.health_check.as_ref().map(|hc| HealthCheckArgs {
            interval: scale.wall(hc.interval),
            timeout: LB_HEALTH_CHECK_TIMEOUT,
            healthy_threshold: hc.healthy_threshold,
            unhealthy_threshold: hc.unhealthy_threshold,
            path: hc.path.clone(),
        }),
        bucket: LB_BUCKET,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::one_node_scenario;

    const SERVICE: &[&str] = &[
        "replicas: 2",
        "serviceTime: { fixed: 20ms }",
        "sidecar: { maxConcurrency: 4, queueSize: 8, queueTimeout: 250ms }",
        "app: { drainDelay: 30s }",
    ];
    const REST: &str = r#"loadBalancer:
  registrationLag: 5s
  deregistrationLag: 20s
  deregistrationDelay: 30s
  healthCheck: { interval: 10s }
load:
  warmup: 30s
  duration: 4m
  requestTimeout: 5s
  generators:
    - { name: g, zone: z, rate: 10, via: loadBalancer }
    - { name: late, zone: z, rate: 10, startAt: 1m }
"#;

    #[test]
    fn control_plane_durations_are_scaled_and_the_data_plane_is_not() {
        let s = one_node_scenario(SERVICE, REST);
        let scale = TimeScale::new(0.1).unwrap();
        let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let app = &s.service.app;
        let f = flagsvc_args(s.service.service_time, s.service.sse, app, scale, any);
        assert_eq!(f.drain_delay, Duration::from_secs(3));
        assert_eq!(
            f.service_time,
            flagsvc::ServiceTime::Fixed(Duration::from_millis(20))
        );
        let limits = s.service.sidecar.unwrap();
        let c = sidecar_args(&limits, app, scale, any, any, any);
        assert_eq!(c.drain_delay, Duration::from_secs(3));
        assert_eq!(c.queue_timeout, Duration::from_millis(250));
        let g = loadgen_args(
            &s.load.generators[0],
            &s.load,
            scale,
            "h:1",
            None,
            "r".into(),
            1,
        );
        assert_eq!(g.duration, Duration::from_secs(27), "(30 s + 4 min) × 0.1");
        assert_eq!(g.timeout, Duration::from_secs(5));
        let late = loadgen_args(
            &s.load.generators[1],
            &s.load,
            scale,
            "h:1",
            None,
            "r".into(),
            1,
        );
        assert_eq!(
            late.duration,
            Duration::from_secs(18),
            "(4 min − 1 min) × 0.1"
        );
        let lb = loadbalancer_args(s.load_balancer.as_ref().unwrap(), scale, any, any);
        assert_eq!(
            (
                lb.registration_lag,
                lb.deregistration_lag,
                lb.deregistration_delay
            ),
            (
                Duration::from_millis(500),
                Duration::from_secs(2),
                Duration::from_secs(3)
            )
        );
        let hc = lb.health_check.unwrap();
        assert_eq!(hc.interval, Duration::from_secs(1));
        assert_eq!(hc.timeout, LB_HEALTH_CHECK_TIMEOUT);
        assert_eq!(lb.bucket, LB_BUCKET);
    }
}

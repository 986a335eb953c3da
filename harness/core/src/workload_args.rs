//! The workloads' command lines for a scenario, the same for every target: what `flagsvc`,
//! `sidecar` and `loadgen` are started with, built from the scenario's settings into the
//! [`workload_contract`] argument types. Only the addresses differ between targets (loopback
//! ports locally, fixed container ports in a cluster), so they are parameters.

use std::net::SocketAddr;
use std::path::PathBuf;

use std::time::Duration;

use workload_contract::flagsvc::{self, FlagsvcArgs};
use workload_contract::loadbalancer::{HealthCheckArgs, LoadBalancerArgs};
use workload_contract::loadgen::{self, RunArgs, SseStreams};
use workload_contract::sidecar::{ReadinessOnSaturation, SidecarArgs};

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
        drain_delay: app.drain_delay,
    }
}

/// The `sidecar` in front of a pod's flagsvc at `upstream`.
pub fn sidecar_args(
    limits: &Sidecar,
    app: &App,
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
        drain_delay: app.drain_delay,
        readiness_on_saturation: limits
            .readiness_on_saturation
            .map(|r| ReadinessOnSaturation {
                queue_above: r.queue_above,
                sustained_for: r.sustained_for,
            }),
    }
}

/// `loadgen run` for `generator`, sending to `target` (`host:port` of its kube-proxy or the
/// load balancer) and writing its report to `report_file`.
pub fn loadgen_args(
    generator: &Generator,
    load: &Load,
    target: &str,
    metrics_listen: Option<SocketAddr>,
    report_file: PathBuf,
    seed: u64,
) -> RunArgs {
    // A generator starting later runs from its start to the end of the load, without warm-up.
    let duration = if generator.start_at.is_zero() {
        load.warmup + load.duration
    } else {
        load.duration.saturating_sub(generator.start_at)
    };
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
    listen: SocketAddr,
    admin_listen: SocketAddr,
) -> LoadBalancerArgs {
    LoadBalancerArgs {
        listen,
        admin_listen,
        registration_lag: spec.registration_lag,
        deregistration_lag: spec.deregistration_lag,
        deregistration_delay: spec.deregistration_delay,
        health_check: spec.health_check.as_ref().map(|hc| HealthCheckArgs {
            interval: hc.interval,
            timeout: LB_HEALTH_CHECK_TIMEOUT,
            healthy_threshold: hc.healthy_threshold,
            unhealthy_threshold: hc.unhealthy_threshold,
            path: hc.path.clone(),
        }),
        bucket: LB_BUCKET,
    }
}

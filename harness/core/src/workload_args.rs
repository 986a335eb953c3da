//! The workloads' command lines for a scenario, the same for every target: what `flagsvc`,
//! `sidecar` and `loadgen` are started with, built from the scenario's settings into the
//! [`workload_contract`] argument types. Only the addresses differ between targets (loopback
//! ports locally, fixed container ports in a cluster), so they are parameters.

use std::net::SocketAddr;
use std::path::PathBuf;

use workload_contract::flagsvc::{self, FlagsvcArgs};
use workload_contract::loadgen::{self, RunArgs, SseStreams};
use workload_contract::sidecar::{ReadinessOnSaturation, SidecarArgs};

use crate::scenario::model::{
    App, ConnectionModel, Generator, Load, Rate, ServiceTime, Sidecar, Sse,
};

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
        sse_interval: sse.map_or(std::time::Duration::from_secs(1), |s| s.heartbeat_interval),
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

//! A pod of the local target: flagsvc plus, when the scenario has one, the sidecar in front of
//! it, as two processes on loopback carrying the pod's identity in their environment.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use harness_core::scenario::model::{Service, ServiceTime};

use crate::LocalError;
use crate::bins::WorkloadBins;
use crate::process::{ProcessSpec, Supervised};

/// How long a workload may take to print its listening address.
const STARTUP_LIMIT: Duration = Duration::from_secs(10);

/// The processes of one pod.
#[derive(Debug)]
pub struct PodProcesses {
    pub name: String,
    pub flagsvc: Supervised,
    pub sidecar: Option<Supervised>,
    /// Where the pod's endpoint points: the sidecar, or flagsvc without one.
    pub addr: SocketAddr,
    /// The sidecar's admin (metrics) address.
    pub admin: Option<SocketAddr>,
}

fn duration_arg(d: Duration) -> String {
    format!("{}ms", d.as_millis())
}

fn service_time_arg(t: ServiceTime) -> String {
    match t {
        ServiceTime::Fixed(d) => format!("fixed:{}", duration_arg(d)),
        ServiceTime::Exponential { mean } => format!("exp:{}", duration_arg(mean)),
        ServiceTime::Cpu(d) => format!("cpu:{}", duration_arg(d)),
    }
}

impl PodProcesses {
    /// Starts flagsvc, then the sidecar pointing at it.
    pub async fn start(
        bins: &WorkloadBins,
        service: &Service,
        drain_delay: Duration,
        pod: &str,
        node: &str,
        zone: &str,
        log_dir: &Path,
    ) -> Result<Self, LocalError> {
        let env = vec![
            ("POD_NAME".to_string(), pod.to_string()),
            ("NODE_NAME".to_string(), node.to_string()),
            ("ZONE".to_string(), zone.to_string()),
            ("RUST_LOG".to_string(), "warn".to_string()),
        ];
        let heartbeat = service
            .sse
            .map(|s| s.heartbeat_interval)
            .unwrap_or(Duration::from_secs(1));
        let flagsvc = Supervised::spawn(ProcessSpec {
            name: format!("{pod}/flagsvc"),
            program: bins.flagsvc.clone(),
            args: vec![
                "--listen".into(),
                "127.0.0.1:0".into(),
                "--service-time".into(),
                service_time_arg(service.service_time),
                "--sse-interval".into(),
                duration_arg(heartbeat),
                "--drain-delay".into(),
                duration_arg(drain_delay),
            ],
            env: env.clone(),
            log_path: log_dir.join(format!("{pod}-flagsvc.log")),
            wait_listening: Some(STARTUP_LIMIT),
        })
        .await?;
        let app_addr = flagsvc.addr("http")?;
        let Some(limits) = &service.sidecar else {
            return Ok(PodProcesses {
                name: pod.to_string(),
                flagsvc,
                sidecar: None,
                addr: app_addr,
                admin: None,
            });
        };
        let mut args = vec![
            "--listen".into(),
            "127.0.0.1:0".into(),
            "--admin-listen".into(),
            "127.0.0.1:0".into(),
            "--upstream".into(),
            format!("http://{app_addr}"),
            "--max-concurrency".into(),
            limits.max_concurrency.to_string(),
            "--queue-size".into(),
            limits.queue_limit.unwrap_or(0).to_string(),
            "--queue-timeout".into(),
            duration_arg(limits.queue_timeout.unwrap_or(Duration::ZERO)),
            "--drain-delay".into(),
            duration_arg(drain_delay),
        ];
        if let Some(r) = &limits.readiness_on_saturation {
            args.extend([
                "--readiness-queue-above".into(),
                r.queue_above.to_string(),
                "--readiness-for".into(),
                duration_arg(r.sustained_for),
            ]);
        }
        let sidecar = Supervised::spawn(ProcessSpec {
            name: format!("{pod}/sidecar"),
            program: bins.sidecar.clone(),
            args,
            env,
            log_path: log_dir.join(format!("{pod}-sidecar.log")),
            wait_listening: Some(STARTUP_LIMIT),
        })
        .await?;
        let addr = sidecar.addr("http")?;
        let admin = Some(sidecar.addr("admin")?);
        Ok(PodProcesses {
            name: pod.to_string(),
            flagsvc,
            sidecar: Some(sidecar),
            addr,
            admin,
        })
    }

    /// Stops the pod as the kubelet does: SIGTERM to each container, SIGKILL after `grace`.
    /// Returns whether every container exited within the grace period.
    pub async fn stop(&mut self, grace: Duration) -> bool {
        let sidecar = async {
            match self.sidecar.as_mut() {
                Some(s) => s.terminate(grace).await,
                None => true,
            }
        };
        let (a, b) = tokio::join!(sidecar, self.flagsvc.terminate(grace));
        a && b
    }
}

//! A pod of the local target: flagsvc plus, when the scenario has one, the sidecar in front of
//! it, as two processes on loopback carrying the pod's identity in their environment.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use harness_core::clock::TimeScale;
use harness_core::scenario::model::{App, Service};
use harness_core::workload_args::{flagsvc_args, sidecar_args};
use workload_contract::identity;
use workload_contract::sidecar::SidecarMetrics;

use crate::LocalError;
use crate::bins::WorkloadBins;
use crate::process::{ProcessSpec, Supervised};

/// How long a workload may take to print its listening address.
const STARTUP_LIMIT: Duration = Duration::from_secs(10);

/// `127.0.0.1:0`: the workload binds a free port and prints it on its `listening` line.
fn any_loopback_port() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

/// Which pod, on which node of which zone.
#[derive(Debug, Clone, Copy)]
pub struct PodPlace<'a> {
    pub pod: &'a str,
    pub node: &'a str,
    pub zone: &'a str,
}

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
    /// Where the sidecar writes its final counters when it exits (`--termination-log`).
    pub totals: Option<PathBuf>,
}

impl PodProcesses {
    /// Starts flagsvc, then the sidecar pointing at it.
    pub async fn start(
        bins: &WorkloadBins,
        service: &Service,
        app: &App,
        scale: TimeScale,
        place: PodPlace<'_>,
        log_dir: &Path,
    ) -> Result<Self, LocalError> {
        let PodPlace { pod, node, zone } = place;
        let mut env = identity::env(pod, node, zone);
        env.push(("RUST_LOG".to_string(), "warn".to_string()));
        let flagsvc = Supervised::spawn(ProcessSpec {
            name: format!("{pod}/flagsvc"),
            program: bins.flagsvc.clone(),
            args: flagsvc_args(
                service.service_time,
                service.sse,
                app,
                scale,
                any_loopback_port(),
            )
            .to_args(),
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
                totals: None,
            });
        };
        let totals = log_dir.join(format!("{pod}-sidecar.totals"));
        let mut args = sidecar_args(
            limits,
            app,
            scale,
            any_loopback_port(),
            any_loopback_port(),
            app_addr,
        );
        args.termination_log = Some(totals.clone());
        let sidecar = Supervised::spawn(ProcessSpec {
            name: format!("{pod}/sidecar"),
            program: bins.sidecar.clone(),
            args: args.to_args(),
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
            totals: Some(totals),
        })
    }

    /// Stops the pod as the kubelet does: SIGTERM to each container, SIGKILL after `grace`.
    /// Returns whether every container exited within the grace period.
    /// The sidecar's final counters, once it has exited and written them.
    pub fn final_totals(&self) -> Option<SidecarMetrics> {
        let text = std::fs::read_to_string(self.totals.as_ref()?).ok()?;
        SidecarMetrics::parse_totals(&text)
    }

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

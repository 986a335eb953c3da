//! The load generators of the local target: one `loadgen` process per scenario generator,
//! aimed at its zone's kube-proxy forwarder, each writing its JSON report to the run
//! directory; stopped early with SIGTERM (loadgen then writes a partial report).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use harness_core::clock::TimeScale;
use harness_core::measure::GeneratorRun;
use harness_core::scenario::model::{Generator, Load};
use harness_core::workload_args::loadgen_args;
use nix::sys::signal::Signal;
use workload_contract::loadgen;

use crate::LocalError;
use crate::bins::WorkloadBins;
use crate::process::{ProcessSpec, Supervised};

/// Where a generator sends (its zone's forwarder or the load balancer) and serves its
/// source-side metrics.
#[derive(Debug, Clone, Copy)]
pub struct GeneratorAddrs {
    pub target: SocketAddr,
    pub metrics: SocketAddr,
}

/// A running generator.
#[derive(Debug)]
pub struct RunningGenerator {
    pub name: String,
    /// Where it serves its metrics (from its `listening metrics=ADDR` line).
    pub metrics: SocketAddr,
    pub zone: String,
    pub process: Supervised,
    pub report_path: PathBuf,
}

impl RunningGenerator {
    pub async fn start(
        bins: &WorkloadBins,
        generator: &Generator,
        load: &Load,
        scale: TimeScale,
        addrs: GeneratorAddrs,
        out_dir: &Path,
        seed: u64,
    ) -> Result<Self, LocalError> {
        let report_path = out_dir.join(format!("loadgen-{}.json", generator.name));
        // SIGTERM if the harness dies: loadgen then stops, and writes its partial report (the
        // pods are killed at the same moment, so its outstanding requests end at once).
        let process = Supervised::spawn_with_death_signal(
            ProcessSpec {
                name: format!("loadgen/{}", generator.name),
                program: bins.loadgen.clone(),
                args: loadgen_args(
                    generator,
                    load,
                    scale,
                    &addrs.target.to_string(),
                    Some(addrs.metrics),
                    report_path.clone(),
                    seed,
                )
                .to_args(),
                env: vec![("RUST_LOG".into(), "warn".into())],
                log_path: out_dir.join(format!("loadgen-{}.log", generator.name)),
                wait_listening: Some(STARTUP_LIMIT),
            },
            Signal::SIGTERM,
        )
        .await?;
        Ok(Self {
            metrics: process.addr("metrics")?,
            name: generator.name.clone(),
            zone: generator.zone.clone(),
            process,
            report_path,
        })
    }

    /// Waits for the generator to finish (at most `limit`; then stops it), or stops it at once
    /// when `stop_now`, and reads its report.
    pub async fn finish(
        mut self,
        stop_now: bool,
        limit: Duration,
    ) -> Result<GeneratorRun, LocalError> {
        if stop_now || self.process.wait(limit).await.is_none() {
            // SIGTERM: loadgen stops issuing, waits for in-flight requests, writes a partial report.
            self.process.terminate(Duration::from_secs(15)).await;
        }
        let text = std::fs::read_to_string(&self.report_path).map_err(|source| {
            LocalError::ReportUnreadable {
                generator: self.name.clone(),
                path: self.report_path.clone(),
                command: self.process.command_line().to_owned(),
                source,
            }
        })?;
        let report =
            loadgen::Report::from_json(&text).map_err(|source| LocalError::ReportInvalid {
                generator: self.name.clone(),
                path: self.report_path.clone(),
                command: self.process.command_line().to_owned(),
                source,
            })?;
        Ok(GeneratorRun {
            name: self.name,
            zone: self.zone,
            report,
        })
    }
}

/// How long loadgen may take to print its `listening metrics=ADDR` line.
const STARTUP_LIMIT: Duration = Duration::from_secs(10);

/// The metrics addresses of the generators started so far, shared with the control loops.
pub type LoadgenMetrics = std::sync::Arc<std::sync::Mutex<Vec<SocketAddr>>>;

/// Adds a started generator's metrics address.
pub fn push_metrics(all: &LoadgenMetrics, addr: SocketAddr) {
    all.lock().unwrap_or_else(|e| e.into_inner()).push(addr);
}

/// The addresses so far (a copy: no lock is held while scraping).
pub fn metrics_addrs(all: &LoadgenMetrics) -> Vec<SocketAddr> {
    all.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The started generators, poisoning ignored.
pub fn lock_generators(
    g: &std::sync::Mutex<Vec<RunningGenerator>>,
) -> std::sync::MutexGuard<'_, Vec<RunningGenerator>> {
    g.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::{ProcessSpec, Supervised};

    #[tokio::test]
    async fn a_generator_without_a_report_names_its_command() {
        let dir = tempfile::tempdir().unwrap();
        let process = Supervised::spawn(ProcessSpec {
            name: "loadgen/g".into(),
            program: "/bin/sh".into(),
            args: vec!["-c".into(), "exit 0".into()],
            env: vec![],
            log_path: dir.path().join("g.log"),
            wait_listening: None,
        })
        .await
        .unwrap();
        let generator = RunningGenerator {
            name: "g".into(),
            metrics: SocketAddr::from(([127, 0, 0, 1], 1)),
            zone: "z".into(),
            process,
            report_path: dir.path().join("loadgen-g.json"),
        };
        let err = generator
            .finish(false, Duration::from_secs(5))
            .await
            .unwrap_err();
        assert!(
            matches!(err, LocalError::ReportUnreadable { .. }),
            "{err:?}"
        );
        let text = err.to_string();
        assert!(text.contains("command: /bin/sh -c 'exit 0'"), "{text}");
        let io = std::error::Error::source(&err).unwrap();
        assert!(io.downcast_ref::<std::io::Error>().is_some());
    }
}

//! The command line: `loadgen run …` generates load and reports, `loadgen merge …` merges the
//! reports of generators that ran together. Exit codes: 0 done (request failures are results, not
//! errors), 2 invalid input or usage, 3 infrastructure error (cannot resolve, bind, write).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand, ValueEnum};
use http::{HeaderName, HeaderValue, Uri};
use workload_common::identity::Identity;

use crate::config::{ConnectionModel, Origin, RateSpec, RunConfig, parse_header};
use crate::error::LoadgenError;
use crate::profile::parse_schedule;
use crate::report::Report;

#[derive(Debug, Parser)]
#[command(
    name = "loadgen",
    version,
    about = "Open-loop HTTP load generator: coordinated-omission-correct latency, per-pod \
             attribution (x-pod), transport errors by kind, SSE streams, Prometheus metrics."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Send load to a URL for a duration and report what happened (SIGINT/SIGTERM stops early:
    /// requests being sent are waited for and the report is marked partial).
    Run(Box<RunArgs>),
    /// Merge JSON reports of generators that ran at the same time (e.g. one per zone).
    Merge(MergeArgs),
}

/// Report format on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Human summary (latency percentiles, counts, per-backend shares).
    Text,
    /// The JSON report (schema loadgen-report/v1, see REPORT.md).
    Json,
}

// The doc comments are the --help text: plain URLs read better there than rustdoc links.
#[allow(rustdoc::bare_urls)]
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Target URL, http only (e.g. http://flagsvc.default:8080/flags). Every response should
    /// carry an x-pod header naming the pod that served it.
    #[arg(long, value_name = "URL")]
    pub url: Uri,
    /// Requests per second, open loop (request i intended at start + i/rate; latency counted from
    /// that time). `max`: closed loop, each connection sends back-to-back. `FROM:TO`: linear ramp
    /// over the duration. `0`: no requests (SSE streams only).
    #[arg(
        long,
        value_name = "RPS|max|FROM:TO",
        required_unless_present = "schedule",
        conflicts_with = "schedule"
    )]
    pub rate: Option<RateSpec>,
    /// Step rate profile instead of --rate: text lines "OFFSET RPS" ("0s 100", "10s 500";
    /// '#' comments) or JSON {"steps":[{"at":"10s","rps":500}]}. Each step holds until the next.
    #[arg(long, value_name = "FILE")]
    pub schedule: Option<PathBuf>,
    /// How long requests are issued (humantime: 30s, 2m). Then requests being sent are waited
    /// for (each bounded by --timeout); requests still waiting for a connection count as dropped.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub duration: Duration,
    /// Connections: keep-alive connections held open, or concurrent per-request connections.
    #[arg(long, default_value_t = 64)]
    pub connections: usize,
    /// keep-alive: connections opened once and reused (kube-proxy picks a backend per
    /// connection, so this decides the distribution); per-request: a new TCP connection per
    /// request, at most --connections at once.
    #[arg(long, value_enum, default_value_t = ConnectionModel::KeepAlive)]
    pub connection_model: ConnectionModel,
    /// Most requests outstanding (waiting for a free connection or being sent). An arrival
    /// beyond it is counted as dropped, never silently skipped.
    #[arg(long, default_value_t = 10_000)]
    pub max_in_flight: u64,
    /// Per-request timeout, from the moment a connection starts on the request (includes the
    /// connect in per-request mode). Also bounds opening an SSE stream.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub timeout: Duration,
    /// Report format on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
    /// Write the JSON report to this file (then stdout gets only the text summary, if chosen).
    #[arg(long, value_name = "PATH")]
    pub output_file: Option<PathBuf>,
    /// Serve source-side Prometheus metrics (loadgen_attempted_total, loadgen_responses_total,
    /// ...) at http://ADDR/metrics while running. The bound address is printed first on stdout
    /// as `listening metrics=ADDR` (port 0 picks a free one).
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<SocketAddr>,
    /// Server-sent-event streams to hold open for the whole run, each on its own connection,
    /// reconnecting with exponential backoff (100 ms → 5 s).
    #[arg(long, default_value_t = 0, value_name = "K")]
    pub sse_streams: usize,
    /// Stream URL (default: the --url host with path /stream).
    #[arg(long, value_name = "URL")]
    pub sse_url: Option<Uri>,
    /// Extra request header, repeatable: --header 'x-origin-zone: 2a'.
    #[arg(long = "header", value_name = "NAME: VALUE", value_parser = parse_header)]
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// Seed for the randomness (SSE reconnect jitter).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// JSON reports to merge.
    #[arg(required = true, value_name = "REPORT")]
    pub reports: Vec<PathBuf>,
    /// Format on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Json)]
    pub output: OutputFormat,
    /// Write the merged JSON report to this file.
    #[arg(long, value_name = "PATH")]
    pub output_file: Option<PathBuf>,
}

impl RunArgs {
    /// The run these arguments describe (reads the schedule file).
    pub fn to_config(&self) -> Result<RunConfig, LoadgenError> {
        let rate = match (&self.schedule, &self.rate) {
            (Some(path), _) => {
                let text = std::fs::read_to_string(path).map_err(|e| {
                    LoadgenError::Config(format!("schedule {}: {e}", path.display()))
                })?;
                let steps = parse_schedule(&text).map_err(|e| {
                    LoadgenError::Config(format!("schedule {}: {e}", path.display()))
                })?;
                RateSpec::Steps(steps)
            }
            (None, Some(rate)) => rate.clone(),
            (None, None) => return Err(LoadgenError::Config("--rate or --schedule".into())),
        };
        let id = Identity::from_env();
        Ok(RunConfig {
            url: self.url.clone(),
            rate,
            duration: self.duration,
            connections: self.connections,
            connection_model: self.connection_model,
            max_in_flight: self.max_in_flight,
            timeout: self.timeout,
            headers: self.headers.clone(),
            sse_streams: self.sse_streams,
            sse_url: self.sse_url.clone(),
            metrics_listen: self.metrics_listen,
            announce_metrics: self.metrics_listen.is_some(),
            seed: self.seed,
            origin: Some(Origin {
                pod: id.pod,
                node: id.node,
                zone: id.zone,
            }),
        })
    }
}

/// Writes `contents` to a temporary file in `path`'s directory, syncs it and renames it into
/// place (one `rename(2)`, atomic within a filesystem), so a reader finds the previous file,
/// none, or the whole new one — never half a report, even if loadgen is killed while writing.
/// A failed write removes the temporary file.
pub fn write_atomically(path: &Path, contents: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    let name = path
        .file_name()
        .with_context(|| format!("writing {}: not a file path", path.display()))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".{}.tmp", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let written = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(contents.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.with_context(|| format!("writing {}", path.display()))
}

fn emit(report: &Report, output: OutputFormat, file: Option<&Path>) -> anyhow::Result<()> {
    let json = serde_json::to_string_pretty(report)?;
    if let Some(path) = file {
        write_atomically(path, &json)?;
    }
    match (output, file) {
        (OutputFormat::Json, None) => println!("{json}"),
        (OutputFormat::Json, Some(_)) => {}
        (OutputFormat::Text, _) => print!("{}", crate::text::render(report)),
    }
    Ok(())
}

fn exit_code(e: &LoadgenError) -> u8 {
    match e {
        LoadgenError::Config(_) | LoadgenError::Report(_) => 2,
        _ => 3,
    }
}

async fn run_command(args: &RunArgs) -> Result<(), (u8, anyhow::Error)> {
    let config = args.to_config().map_err(|e| (exit_code(&e), e.into()))?;
    let report = crate::run(config, workload_common::signal::terminate())
        .await
        .map_err(|e| (exit_code(&e), e.into()))?;
    emit(&report, args.output, args.output_file.as_deref()).map_err(|e| (3, e))
}

fn merge_command(args: &MergeArgs) -> Result<(), (u8, anyhow::Error)> {
    let mut reports = Vec::with_capacity(args.reports.len());
    for path in &args.reports {
        let parsed = std::fs::read_to_string(path)
            .map_err(anyhow::Error::from)
            .and_then(|t| serde_json::from_str::<Report>(&t).map_err(anyhow::Error::from))
            .with_context(|| format!("reading report {}", path.display()))
            .map_err(|e| (2, e))?;
        reports.push(parsed);
    }
    let merged = crate::try_merge_reports(&reports).map_err(|e| (2, e.into()))?;
    emit(&merged, args.output, args.output_file.as_deref()).map_err(|e| (3, e))
}

/// The binary's entry point.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    workload_common::init_tracing();
    // Pinned to one core (taskset, a CPU limit of one): the work-stealing scheduler has
    // nothing to steal and costs instructions per wake-up; the current-thread one runs every
    // connection on this thread (callgrind: see results/bench/profile-loadgen-2026-12-01.md).
    let one_core = std::thread::available_parallelism().is_ok_and(|n| n.get() == 1);
    let mut builder = if one_core {
        tokio::runtime::Builder::new_current_thread()
    } else {
        tokio::runtime::Builder::new_multi_thread()
    };
    let runtime = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::from(3);
        }
    };
    let result = match &cli.command {
        Command::Run(args) => runtime.block_on(run_command(args)),
        Command::Merge(args) => merge_command(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err((code, e)) => {
            eprintln!("error: {e:#}");
            ExitCode::from(code)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("loadgen").chain(args.iter().copied()))
    }

    #[test]
    fn run_flags_build_a_config() {
        let cli = parse(&[
            "run",
            "--url",
            "http://127.0.0.1:9/x",
            "--rate",
            "100:1000",
            "--duration",
            "30s",
            "--connections",
            "8",
            "--connection-model",
            "per-request",
            "--timeout",
            "250ms",
            "--header",
            "x-a: 1",
            "--header",
            "x-b: 2",
            "--sse-streams",
            "3",
            "--output",
            "json",
        ])
        .unwrap();
        let Command::Run(args) = cli.command else {
            panic!("expected run");
        };
        let cfg = args.to_config().unwrap();
        assert_eq!(
            cfg.rate,
            RateSpec::Ramp {
                from: 100.0,
                to: 1000.0
            }
        );
        assert_eq!(cfg.duration, Duration::from_secs(30));
        assert_eq!(cfg.connections, 8);
        assert_eq!(cfg.connection_model, ConnectionModel::PerRequest);
        assert_eq!(cfg.timeout, Duration::from_millis(250));
        assert_eq!(cfg.headers.len(), 2);
        assert_eq!(cfg.sse_streams, 3);
        assert_eq!(cfg.max_in_flight, 10_000);
        assert_eq!(args.output, OutputFormat::Json);
    }

    #[test]
    fn rate_or_schedule_is_required_and_exclusive() {
        assert!(parse(&["run", "--url", "http://h/"]).is_err());
        assert!(
            parse(&[
                "run",
                "--url",
                "http://h/",
                "--rate",
                "1",
                "--schedule",
                "f"
            ])
            .is_err()
        );
        assert!(parse(&["run", "--url", "http://h/", "--rate", "fast"]).is_err());
    }

    #[test]
    fn schedule_files_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("steps.txt");
        std::fs::write(&path, "0s 10\n5s 20\n").unwrap();
        let cli = parse(&[
            "run",
            "--url",
            "http://h/",
            "--schedule",
            path.to_str().unwrap(),
        ])
        .unwrap();
        let Command::Run(args) = cli.command else {
            panic!("expected run");
        };
        let RateSpec::Steps(steps) = args.to_config().unwrap().rate else {
            panic!("expected steps");
        };
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[1].rps, 20.0);
    }

    #[test]
    fn help_documents_every_flag() {
        use clap::CommandFactory;
        let cmd = Cli::command();
        let run = cmd.find_subcommand("run").unwrap();
        for arg in run.get_arguments() {
            if arg.get_id() == "help" {
                continue;
            }
            assert!(arg.get_help().is_some(), "--{} has no help", arg.get_id());
        }
    }
}

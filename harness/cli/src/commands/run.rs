//! `harness run FILE`: runs a scenario on a target and writes its results: summary.json,
//! junit.xml, report.md, report.html and timeline.jsonl in `results/<scenario>/<run-id>/` (or
//! `--out`). Exit 0 when every expectation held, 1 when one failed, 2 for invalid input, 3 for
//! an infrastructure error or an interrupted run (partial results are still written).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};
use harness_core::engine::{self, EngineError, RunContext, RunOptions, RunOutcome};
use harness_core::measure::RunData;
use harness_core::report::{Verdict, write_reports};
use harness_core::scenario::load_scenario;
use harness_local::LocalTarget;
use tokio_util::sync::CancellationToken;

use crate::exit::{Failure, Outcome};
use crate::invocation::{RunSpec, invocation};
use crate::progress::{Console, ProgressMode};

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The scenario file.
    pub file: PathBuf,
    /// Where to run. `local`: the workload binaries on loopback with a modelled control
    /// plane. The harness never falls back to another target.
    #[arg(long, value_enum, default_value_t = TargetName::Local)]
    pub target: TargetName,
    /// Apply this variant (see the file's `variants`).
    #[arg(long)]
    pub variant: Option<String>,
    /// Output directory (default: results/<scenario>/<run-id>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Seed for every random choice (scheduling ties, backend picks), so a run can be repeated.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Shrink every control-plane period, delay and timeout together with the scenario's clock
    /// (0 < SCALE <= 1; e.g. 0.1 turns a 15 s HPA sync into 1.5 s). Default: the scenario's
    /// `timeScale`, else 1. The data plane (service time, request timeout) is never scaled.
    #[arg(long, value_name = "SCALE")]
    pub time_scale: Option<f64>,
    /// How to show progress on stderr: `auto` draws live bars on a terminal and plain
    /// timestamped lines elsewhere (or when NO_COLOR is set).
    #[arg(long, value_enum, default_value_t = ProgressMode::Auto)]
    pub progress: ProgressMode,
    /// Leave the deployment running after the run (processes keep running until you stop
    /// them; on the local target they end with the harness process).
    #[arg(long)]
    pub keep: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TargetName {
    Local,
}

impl TargetName {
    /// The name as `--target` takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            TargetName::Local => "local",
        }
    }
}

pub fn run(args: RunArgs) -> Outcome {
    let scenario = load_scenario(&args.file, args.variant.as_deref())
        .map_err(|e| Failure::InvalidInput(anyhow!("{e}")))?;
    let time_scale = args.time_scale.unwrap_or(scenario.time_scale);
    if !(time_scale > 0.0 && time_scale <= 1.0) {
        return Err(Failure::InvalidInput(anyhow!(
            "--time-scale {time_scale}: must be more than 0 and at most 1 (e.g. 0.1)"
        )));
    }
    let scenario = harness_core::engine::time_scale::apply_time_scale(scenario, time_scale);
    let run_id = new_run_id(args.seed);
    let out_dir = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new("results").join(&scenario.name).join(&run_id));
    let ctx = RunContext {
        run_id,
        out_dir: out_dir.clone(),
        seed: args.seed,
        time_scale,
    };
    let variant = scenario.selected_variant.as_deref().unwrap_or("base");
    eprintln!(
        "running {} (variant {variant}) on target {}, seed {}, time scale {time_scale}, output {}",
        scenario.name,
        args.target.as_str(),
        args.seed,
        out_dir.display()
    );
    let runtime = tokio::runtime::Runtime::new()
        .map_err(|e| Failure::Infrastructure(anyhow!("cannot start the async runtime: {e}")))?;
    let mut outcome = runtime.block_on(async {
        let cancel = CancellationToken::new();
        let watcher = tokio::spawn(cancel_on_signal(cancel.clone()));
        let mut target = LocalTarget::new().map_err(|e| Failure::Infrastructure(e.into()))?;
        let progress = Console::new(args.progress);
        let options = RunOptions { keep: args.keep };
        let result = engine::run(&mut target, &scenario, &ctx, &options, cancel, &progress).await;
        progress.finish();
        watcher.abort();
        result.map_err(|e| match e {
            EngineError::Unsupported { .. } => Failure::InvalidInput(e.into()),
            EngineError::Target { .. } => Failure::Infrastructure(e.into()),
        })
    })?;
    outcome.summary.invocation = Some(invocation(&RunSpec {
        file: &args.file,
        variant: scenario.selected_variant.as_deref(),
        target: args.target.as_str(),
        seed: args.seed,
        time_scale,
    }));
    finish(&outcome, &out_dir)
}

/// Writes every output file and maps the outcome to an exit code.
fn finish(outcome: &RunOutcome, out_dir: &Path) -> Outcome {
    let written = write_reports(out_dir, &outcome.summary)
        .and_then(|_| write_timeline(&out_dir.join("timeline.jsonl"), &outcome.data))
        .with_context(|| format!("writing results to {}", out_dir.display()))
        .map_err(Failure::Infrastructure);
    written?;
    let s = &outcome.summary;
    println!();
    for line in &s.explanation {
        println!("  {line}");
    }
    let word = match s.verdict {
        Verdict::Pass => "PASS",
        Verdict::Fail => "FAIL",
    };
    let held = s.expectations.iter().filter(|e| e.passed).count();
    println!(
        "{word}{}: {held}/{} expectations held. Report: {}",
        if s.partial { " (partial)" } else { "" },
        s.expectations.len(),
        out_dir.join("report.html").display()
    );
    if let Some(e) = &outcome.error {
        return Err(Failure::Infrastructure(anyhow!(
            "{e}; partial results written to {}",
            out_dir.display()
        )));
    }
    if outcome.interrupted {
        return Err(Failure::Infrastructure(anyhow!(
            "interrupted; partial results written to {}",
            out_dir.display()
        )));
    }
    match s.verdict {
        Verdict::Pass => Ok(()),
        Verdict::Fail => Err(Failure::ExpectationFailed),
    }
}

/// One JSON object per line: control-plane events and sidecar samples, in time order.
fn write_timeline(path: &Path, data: &RunData) -> std::io::Result<()> {
    let mut lines: Vec<(f64, serde_json::Value)> = Vec::new();
    for e in &data.events {
        lines.push((
            e.t_s,
            serde_json::to_value(e).map_err(std::io::Error::other)?,
        ));
    }
    for pod in &data.pods {
        for s in &pod.samples {
            let mut v = serde_json::to_value(s).map_err(std::io::Error::other)?;
            if let Some(obj) = v.as_object_mut() {
                obj.insert("event".into(), "sample".into());
                obj.insert("pod".into(), pod.name.clone().into());
            }
            lines.push((s.t_s, v));
        }
    }
    lines.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
    for (_, v) in lines {
        writeln!(file, "{v}")?;
    }
    file.flush()
}

/// `YYYYMMDD-HHMMSS-xxxx`: sortable, unique enough for one machine.
fn new_run_id(seed: u64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let stamp = harness_core::engine::run::rfc3339_utc(now.as_millis() as u64)
        .replace(['-', ':'], "")
        .replace('T', "-")
        .trim_end_matches('Z')
        .to_string();
    let tag = (now.subsec_nanos() as u64 ^ seed.wrapping_mul(0x9e37_79b9)) & 0xffff;
    format!("{stamp}-{tag:04x}")
}

/// Cancels the run on Ctrl-C or SIGTERM.
async fn cancel_on_signal(cancel: CancellationToken) {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = match signal(SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
            cancel.cancel();
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    eprintln!("\ninterrupted: stopping the load, collecting what was measured, cleaning up");
    cancel.cancel();
}

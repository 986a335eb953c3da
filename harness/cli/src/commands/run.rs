//! `harness run FILE`: runs a scenario on a target and writes its results: summary.json,
//! junit.xml, report.md, report.html and timeline.jsonl in `results/<scenario>/<run-id>/` (or
//! `--out`). Exit 0 when every expectation held, 1 when one failed, 2 for invalid input, 3 for
//! an infrastructure error or an interrupted run (partial results are still written).
//! `--baseline DIR` compares the new run against a stored one (compare.* in the run's
//! directory; a regression beyond `--max-regression` exits 1, an incomparable pair 2);
//! `--matrix PATH=V1,V2` runs every combination of the values (several axes multiply),
//! compares each run against the first and rolls them up in one table (see `matrix::run`).

use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow};
use harness_core::clock::TimeScale;
use harness_core::compare::Bound;
use harness_core::engine::{EngineError, ExitStatus, RunContext, RunOptions, RunOutcome};
use harness_core::report::{Summary, Verdict, write_reports};
use harness_core::scenario::{Override, load_scenario_with};
use harness_kind::driver::{ClusterMode, CreateOptions, KindOptions, KindTarget, choose_mode};
use harness_kind::exec::Toolbox;
use harness_kind::node_image::NodeImage;
use harness_local::LocalTarget;
use tokio_util::sync::CancellationToken;

use super::matrix::Axis;
use super::out_dir;
use super::run_target::RunTarget;
use super::target::{KindCell, TargetName, refuse_node_image};
use crate::exit::{Failure, Outcome, worse};
use crate::invocation::{RunSpec, invocation};
use crate::progress::{Console, ProgressMode};

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The scenario file.
    pub file: PathBuf,
    /// Where to run. `local`: the workload binaries on loopback with a modelled control
    /// plane. `kind`: a kind cluster in Docker (created as `harness-<scenario>` and deleted at
    /// the end, unless --cluster or --keep), with Kubernetes' own controllers. The harness
    /// never falls back to another target.
    #[arg(long, value_enum, default_value_t = TargetName::Local)]
    pub target: TargetName,
    /// Apply this variant (see the file's `variants`); `base` is the base document.
    #[arg(long)]
    pub variant: Option<String>,
    /// Override one value of the scenario for this run (repeatable), e.g. `--set
    /// load.duration=30s --set load.generators[ingress-2a].rate=50`: a path of keys joined by
    /// `.`, list entries as [0] or [name]; applied after the variant, checked like the file.
    #[arg(long = "set", value_name = "PATH=VALUE", value_parser = Override::parse)]
    pub set: Vec<Override>,
    /// US dollars per GB crossing between zones, for the cross-zone cost estimate (the same as
    /// `--set cost.pricePerGb=USD`; default: the scenario's `cost.pricePerGb`, else 0.01, the
    /// common inter-zone list price each way — see docs/scenario-format.md#cost).
    #[arg(long = "price-per-gb", value_name = "USD", value_parser = price_per_gb)]
    pub price_per_gb: Option<f64>,
    /// Output directory (default: results/<scenario>/<run-id>). It must be new or empty: one
    /// holding another run's results is refused (exit 2) unless --replace.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// With --out: delete the results of the run already in that directory before this run
    /// starts (only a harness run's; a directory of other files is still refused).
    #[arg(long, requires = "out")]
    pub replace: bool,
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
    /// Leave the deployment running after the run (on the local target its processes end with
    /// the harness process; on kind the namespace, and a cluster the run created, stay).
    #[arg(long)]
    pub keep: bool,
    #[command(flatten)]
    pub kind: KindFlags,
    /// Compare this run against a stored run directory (CI regression gates): writes
    /// compare.json, compare.md and compare.html next to the run's reports.
    #[arg(long, value_name = "DIR")]
    pub baseline: Option<PathBuf>,
    /// With --baseline or --matrix: exit 1 when a run is worse than its base by more than
    /// VALUE on METRIC (repeatable; metrics as `harness compare` names them).
    #[arg(long = "max-regression", value_name = "METRIC=VALUE", value_parser = Bound::parse)]
    pub max_regression: Vec<Bound>,
    /// Run once per value (repeatable: several axes multiply), e.g. `--matrix
    /// ingress.version=v0.6,v0.16`: PATH as for --set, values separated by commas. Each
    /// combination's run goes into its own directory under the output directory
    /// (`ingress.version-v0.16`, several axes joined with `_`) and is compared against the first
    /// combination's run; a table of every cell ends the matrix (also matrix.md and matrix.json)
    /// and says which cell made the exit code. With --target kind also
    /// `kind.nodeImage=IMG1,IMG2`: one cluster per node image (a Kubernetes upgrade check).
    #[arg(long, value_name = "PATH=V1,V2,...", value_parser = Axis::parse)]
    pub matrix: Vec<Axis>,
}

/// The flags of `--target kind`.
#[derive(Debug, Clone, clap::Args)]
pub struct KindFlags {
    /// kind: reuse this cluster, created by the harness earlier (`harness-*`; see `kind get
    /// clusters`); it is not deleted at the end. The fast way to iterate.
    #[arg(long, value_name = "NAME")]
    pub cluster: Option<String>,
    /// kind: the kubeconfig context to use. Only `kind-harness-*` contexts, unless
    /// --allow-existing-cluster.
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// kind: run in the existing cluster of --context (e.g. a staging cluster): the cluster is
    /// never created or deleted, only the run's namespace; node actions are refused there
    /// (relabelNode is allowed with --may-touch-nodes).
    #[arg(long)]
    pub allow_existing_cluster: bool,
    /// kind, with --allow-existing-cluster: the scenario may relabel that cluster's Nodes (its
    /// other node actions need kind's node containers and are refused there).
    #[arg(long)]
    pub may_touch_nodes: bool,
    /// kind, with --allow-existing-cluster: before anything is created, ask the API server
    /// (SelfSubjectAccessReview) about every permission the run needs and refuse the run
    /// (exit 2) naming each one denied.
    #[arg(long)]
    pub check_access: bool,
    /// kind: the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config).
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,
    /// kind: the CPUs every kind node reports (default: this machine's online CPUs; under
    /// Docker Desktop, `docker info --format '{{.NCPU}}'`).
    #[arg(long, value_name = "N")]
    pub host_cpus: Option<u32>,
    /// kind: the image list `make images` wrote.
    #[arg(
        long,
        value_name = "PATH",
        default_value = "target/harness-images.json"
    )]
    pub images: PathBuf,
    /// kind: the node image, hence the Kubernetes version, of the cluster the harness creates
    /// (default: the pinned kindest/node:v1.34.11@sha256:...). `kindest/node:vX.Y.Z`, best
    /// pinned with the `@sha256:` digest kind's release notes list; Kubernetes v1.31.0 or
    /// newer. Not with --cluster or --context: an existing cluster's nodes keep their image.
    #[arg(long, value_name = "IMAGE", value_parser = NodeImage::parse)]
    pub node_image: Option<NodeImage>,
}

impl KindFlags {
    /// Whether the kind target creates the run's cluster (no --cluster, --context or
    /// --allow-existing-cluster).
    pub fn creates_cluster(&self) -> bool {
        self.cluster.is_none() && self.context.is_none() && !self.allow_existing_cluster
    }

    /// The kind-only flags given, for refusing them on another target.
    fn given(&self) -> Vec<&'static str> {
        let mut given = Vec::new();
        for (set, flag) in [
            (self.cluster.is_some(), "--cluster"),
            (self.context.is_some(), "--context"),
            (self.allow_existing_cluster, "--allow-existing-cluster"),
            (self.may_touch_nodes, "--may-touch-nodes"),
            (self.check_access, "--check-access"),
            (self.kubeconfig.is_some(), "--kubeconfig"),
            (self.host_cpus.is_some(), "--host-cpus"),
            (self.node_image.is_some(), "--node-image"),
        ] {
            if set {
                given.push(flag);
            }
        }
        given
    }

    /// The kind target's options, refusing contexts that are not the harness's (exit 2).
    fn options(&self) -> Result<KindOptions, Failure> {
        let mode = choose_mode(
            self.cluster.as_deref(),
            self.context.as_deref(),
            self.allow_existing_cluster,
        )
        .map_err(|e| Failure::InvalidInput(e.into()))?;
        if let Some(image) = &self.node_image
            && mode != ClusterMode::Create
        {
            return Err(Failure::InvalidInput(anyhow!(
                "--node-image {image}: the cluster exists (--cluster, --context or --allow-existing-cluster); its nodes' image is theirs. Drop --node-image, or leave out --cluster and --context so that the harness creates a cluster with that image"
            )));
        }
        if self.may_touch_nodes && !self.allow_existing_cluster {
            return Err(Failure::InvalidInput(anyhow!(
                "--may-touch-nodes is for --allow-existing-cluster; clusters the harness created are always its to change"
            )));
        }
        if self.check_access && !self.allow_existing_cluster {
            return Err(Failure::InvalidInput(anyhow!(
                "--check-access is for --allow-existing-cluster: in clusters the harness creates or reuses its kubeconfig is the cluster's admin"
            )));
        }
        Ok(KindOptions {
            mode,
            kubeconfig: self.kubeconfig.clone(),
            host_cpus: self
                .host_cpus
                .unwrap_or_else(harness_kind::host::online_cpus),
            images: self.images.clone(),
            tools: Toolbox::new(),
            may_touch_nodes: self.may_touch_nodes,
            check_access: self.check_access,
        })
    }
}

/// `--price-per-gb USD`: a finite price of 0 or more.
fn price_per_gb(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(usd) if usd.is_finite() && usd >= 0.0 => Ok(usd),
        _ => Err(format!(
            "`{text}`: US dollars per GB of 0 or more, such as 0.02 (AWS: $0.01 out of one zone and $0.01 into the other)"
        )),
    }
}

/// The scenario field `--price-per-gb` sets.
const PRICE_PATH: &str = "cost.pricePerGb";

pub fn run(mut args: RunArgs) -> Outcome {
    if let Some(price) = args.price_per_gb.take() {
        if args
            .set
            .iter()
            .any(|o| o.to_string().starts_with(&format!("--set {PRICE_PATH}=")))
        {
            return Err(Failure::InvalidInput(anyhow!(
                "--price-per-gb and --set {PRICE_PATH}=... both set the price; give one"
            )));
        }
        let price = Override::new(PRICE_PATH, &price.to_string())
            .map_err(|e| Failure::InvalidInput(anyhow!("--price-per-gb: {e}")))?;
        args.set.push(price);
    }
    if !args.matrix.is_empty() {
        return super::matrix::run::run_matrix(&args);
    }
    if args.baseline.is_none() && !args.max_regression.is_empty() {
        return Err(Failure::InvalidInput(anyhow!(
            "--max-regression needs something to compare with: add --baseline DIR or --matrix PATH=V1,V2"
        )));
    }
    if let Some(base) = &args.baseline {
        check_baseline(&args, base)?;
    }
    let ran = run_once(&args, &args.set, &KindCell::default(), args.out.clone())?;
    let verdict = ran.outcome;
    match &args.baseline {
        None => verdict,
        Some(base) => {
            let comparison =
                super::compare::compare_dirs(base, &ran.dir, &args.max_regression, &ran.dir)?;
            // The worse of the run's own verdict and the comparison's.
            let compared = super::compare::outcome_of(&comparison);
            worse(verdict, compared)
        }
    }
}

/// `--baseline DIR` before anything starts: a baseline that cannot be compared with this run
/// (another scenario, other expectations, a partial run, another target) is refused, exit 2.
fn check_baseline(args: &RunArgs, base: &Path) -> Result<(), Failure> {
    let stored = super::compare::read_summary(base)?;
    let scenario = load_scenario_with(&args.file, args.variant.as_deref(), &args.set)
        .map_err(|e| Failure::InvalidInput(anyhow!("{e}")))?;
    let planned = harness_core::compare::PlannedRun {
        scenario: scenario.name.clone(),
        variant: scenario.selected_variant.clone(),
        expectations: scenario
            .expectations
            .iter()
            .map(|e| (e.name.clone(), e.metric.as_str().to_owned()))
            .collect(),
        target: args.target.as_str().to_owned(),
    };
    match harness_core::compare::baseline_refusal(&stored, &planned) {
        None => Ok(()),
        Some(why) => Err(Failure::InvalidInput(anyhow!(
            "--baseline {}: cannot be this run's baseline: {why}; nothing was started",
            base.display()
        ))),
    }
}

/// One run's results, as [`run_once`] returns them.
pub struct Ran {
    /// Its output directory.
    pub dir: PathBuf,
    /// How it ended.
    pub outcome: Outcome,
    /// Why it did not complete or cannot be trusted (the error, "interrupted", the self-audit),
    /// without the directory the failure's message adds; `None` when it passed or failed.
    pub reason: Option<String>,
    /// Whether Ctrl-C or SIGTERM cut it short.
    pub interrupted: bool,
    /// Its summary, as written to summary.json.
    pub summary: Summary,
}

/// Runs the scenario once with `overrides`; returns its output directory, its outcome and its
/// summary (an error only when nothing was run or written).
pub fn run_once(
    args: &RunArgs,
    overrides: &[Override],
    cell: &KindCell,
    out: Option<PathBuf>,
) -> Result<Ran, Failure> {
    let scenario = load_scenario_with(&args.file, args.variant.as_deref(), overrides)
        .map_err(|e| Failure::InvalidInput(anyhow!("{e}")))?;
    let kind_options = match args.target {
        TargetName::Kind => {
            // A release the run would install without a recorded hash: refused up front.
            harness_kind::pinned::required_releases(&scenario)
                .map_err(|e| Failure::InvalidInput(e.into()))?;
            // So is an ingress controller image without a recorded digest.
            harness_kind::driver::ingress::required_image(&scenario, None)
                .map_err(|e| Failure::InvalidInput(e.into()))?;
            let options = args.kind.options()?;
            let chosen = cell
                .node_image
                .clone()
                .or_else(|| args.kind.node_image.clone());
            let create = CreateOptions {
                node_image: chosen.clone().unwrap_or_else(NodeImage::pinned),
                cluster_suffix: cell.cluster_suffix.clone(),
            };
            if options.mode == ClusterMode::Create {
                refuse_node_image(&args.file, &scenario, &create.node_image)?;
            }
            if let Some(warning) = chosen.as_ref().and_then(NodeImage::warning) {
                eprintln!("warning: {warning}");
            }
            Some((options, create))
        }
        TargetName::Local => {
            let given = args.kind.given();
            if !given.is_empty() {
                return Err(Failure::InvalidInput(anyhow!(
                    "{} only apply to --target kind",
                    given.join(", ")
                )));
            }
            None
        }
    };
    let time_scale =
        TimeScale::new(args.time_scale.unwrap_or(scenario.time_scale)).map_err(|e| {
            Failure::InvalidInput(anyhow!(
                "--time-scale {}: must be more than 0 and at most 1 (e.g. 0.1)",
                e.0
            ))
        })?;
    let runtime = tokio::runtime::Runtime::new()
        .map_err(|e| Failure::Infrastructure(anyhow!("cannot start the async runtime: {e}")))?;
    let mut target = match kind_options {
        None => RunTarget::Local(Box::new(
            LocalTarget::new().map_err(|e| Failure::Infrastructure(e.into()))?,
        )),
        Some((kind, create)) => {
            RunTarget::Kind(Box::new(KindTarget::new(kind).with_create(create)))
        }
    };
    let refused = |e: EngineError| match e.exit_status() {
        ExitStatus::InvalidInput => Failure::InvalidInput(e.into()),
        _ => Failure::Infrastructure(e.into()),
    };
    // Checked before anything is claimed or printed: a refused run leaves nothing behind.
    let run_id = new_run_id(args.seed);
    let planned_dir = out
        .clone()
        .unwrap_or_else(|| Path::new("results").join(&scenario.name).join(&run_id));
    let mut ctx = RunContext {
        run_id: run_id.clone(),
        out_dir: planned_dir,
        seed: args.seed,
        time_scale,
    };
    runtime
        .block_on(async {
            let cancel = CancellationToken::new();
            let watcher = tokio::spawn(cancel_on_signal(cancel.clone()));
            let checked = target.check(&scenario, &ctx, &cancel).await;
            watcher.abort();
            checked
        })
        .map_err(refused)?;
    // Claimed before anything starts: an unwritable or full directory stops the run here.
    let (run_id, claimed) = match &out {
        Some(given) => (
            run_id,
            out_dir::claim_given(given, args.replace).map_err(|e| match e {
                out_dir::ClaimError::Occupied(why) => Failure::InvalidInput(anyhow!(why)),
                out_dir::ClaimError::Unusable(e) => {
                    Failure::Infrastructure(anyhow!("{e:#}; nothing was started"))
                }
            }),
        ),
        None => {
            // The checked run id first; another only if that directory exists already.
            let mut first = Some(run_id);
            match out_dir::claim_fresh(&Path::new("results").join(&scenario.name), || {
                first.take().unwrap_or_else(|| new_run_id(args.seed))
            }) {
                Ok((id, dir)) => (id, Ok(dir)),
                Err(e) => (
                    String::new(),
                    Err(Failure::Infrastructure(anyhow!(
                        "{e:#}; nothing was started"
                    ))),
                ),
            }
        }
    };
    let claimed = claimed?;
    let out_dir = claimed.path.clone();
    ctx.run_id = run_id;
    ctx.out_dir = out_dir.clone();
    let variant = scenario.selected_variant.as_deref().unwrap_or("base");
    let shown: String = overrides.iter().map(|o| format!(", {o}")).collect();
    eprintln!(
        "running {} (variant {variant}{shown}) on target {}, seed {}, time scale {time_scale}, output {}",
        scenario.name,
        args.target.as_str(),
        args.seed,
        out_dir.display()
    );
    let mut outcome = runtime.block_on(async {
        let cancel = CancellationToken::new();
        let watcher = tokio::spawn(cancel_on_signal(cancel.clone()));
        let progress = Console::new(args.progress);
        let options = RunOptions { keep: args.keep };
        let outcome = target
            .run(&scenario, &ctx, &options, cancel, &progress)
            .await;
        progress.finish();
        watcher.abort();
        outcome
    });
    outcome.summary.invocation = Some(invocation(&RunSpec {
        file: &args.file,
        variant: scenario.selected_variant.as_deref(),
        overrides,
        target: args.target.as_str(),
        node_image: cell
            .node_image
            .as_ref()
            .or(args.kind.node_image.as_ref())
            .map(NodeImage::reference),
        seed: args.seed,
        time_scale: time_scale.factor(),
    }));
    let (verdict, reason) = finish(&outcome, &out_dir);
    if let Err(Failure::Infrastructure(_)) = &verdict
        && !out_dir.join("summary.json").is_file()
    {
        return Err(verdict.unwrap_err());
    }
    Ok(Ran {
        dir: out_dir,
        outcome: verdict,
        reason,
        interrupted: outcome.interrupted,
        summary: outcome.summary,
    })
}

/// Writes every output file and maps the outcome to an exit code; with it, for a run that did
/// not complete or cannot be trusted, why.
fn finish(outcome: &RunOutcome, out_dir: &Path) -> (Outcome, Option<String>) {
    let written = write_reports(out_dir, &outcome.summary, &outcome.data)
        .with_context(|| format!("writing results to {}", out_dir.display()));
    if let Err(e) = written {
        let why = format!("{e:#}");
        return (Err(Failure::Infrastructure(e)), Some(why));
    }
    let s = &outcome.summary;
    println!();
    for line in &s.explanation {
        println!("  {line}");
    }
    if let Some(audit) = &s.audit {
        println!("  {}", audit.headline());
    }
    println!(
        "{}. Report: {}",
        verdict_line(s),
        out_dir.join("report.html").display()
    );
    match outcome.exit_status() {
        ExitStatus::Passed => (Ok(()), None),
        ExitStatus::ExpectationFailed => (Err(Failure::ExpectationFailed), None),
        ExitStatus::InvalidInput | ExitStatus::Infrastructure => {
            let audit_violated = s.audit.as_ref().is_some_and(|a| !a.held);
            let why = match &outcome.error {
                Some(e) => harness_core::text::error_chain(e),
                None if outcome.interrupted => "interrupted".to_owned(),
                None if audit_violated => {
                    "the run's self-audit found numbers that do not reconcile (see `audit` in summary.json): the measurement is broken, so the verdict cannot be trusted".to_owned()
                }
                None => "interrupted".to_owned(),
            };
            let failure = Failure::Infrastructure(anyhow!(
                "{why}; partial results written to {}",
                out_dir.display()
            ));
            (Err(failure), Some(why))
        }
    }
}

/// `YYYYMMDD-HHMMSS-xxxx`: sortable, unique enough for one machine.
fn new_run_id(seed: u64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let stamp = harness_core::clock::rfc3339_utc(now.as_millis() as u64)
        .replace(['-', ':'], "")
        .replace('T', "-")
        .trim_end_matches('Z')
        .to_string();
    // The process id keeps two runs started in the same millisecond apart (and a taken
    // directory is skipped anyway, see `out_dir::claim_fresh`).
    let tag = (now.subsec_nanos() as u64
        ^ seed.wrapping_mul(0x9e37_79b9)
        ^ u64::from(std::process::id()).wrapping_mul(0x85eb_ca6b))
        & 0xffff;
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

/// The last line of a run on the terminal: the verdict and how many expectations held — and,
/// for a run that did not complete, that it did not and how many were not evaluated.
fn verdict_line(s: &harness_core::report::Summary) -> String {
    let held = s.expectations.iter().filter(|e| e.passed).count();
    let not_evaluated = s
        .expectations
        .iter()
        .filter(|e| e.incomplete.is_some())
        .count();
    let total = s.expectations.len();
    if s.partial {
        let why = s.partial_reason.as_deref().unwrap_or("cut short");
        return format!(
            "INCOMPLETE ({why}): {held} of {total} expectations held, {not_evaluated} not evaluated (their windows were not reached); never a pass"
        );
    }
    if let Some(audit) = s.audit.as_ref().filter(|a| !a.held) {
        return format!(
            "UNTRUSTED: {held}/{total} expectations held, but {} accounting check(s) of the self-audit were violated; never a pass",
            audit.violated
        );
    }
    let word = match s.verdict {
        Verdict::Pass => "PASS",
        Verdict::Fail => "FAIL",
    };
    format!("{word}: {held}/{total} expectations held")
}

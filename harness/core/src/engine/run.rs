//! The run sequence: check capabilities → deploy → warm-up → load with the timeline → collect
//! → evaluate → summarize → teardown. On Ctrl-C (the cancel token) or a failure after deploy,
//! the engine still collects what was measured and returns it marked partial; teardown always
//! runs unless the caller asked to keep the deployment.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::target::{Observation, RunContext, Target, TargetError, requirements};
use crate::clock::{RunClock, TimeScale, rfc3339_utc};
use crate::measure::{EventKind, RecordedEvent, RunData};
use crate::report::Summary;
use crate::scenario::model::Scenario;
use crate::text::error_chain;
use crate::verdict::evaluate::evaluate;
use crate::verdict::summarize::{RunFacts, summarize};

/// Where progress goes (a terminal bar, plain lines, or nowhere).
pub trait Progress {
    /// A new phase began (`deploy`, `warm-up`, `load`, `collect`, `teardown`).
    fn phase(&self, name: &str);
    /// Once a second during the load: seconds since load start and a snapshot.
    fn tick(&self, t_s: f64, total_s: f64, observation: &Observation);
    /// Something worth a line of its own (an action applied, a warning).
    fn note(&self, message: &str);
}

/// Progress that goes nowhere (tests).
pub struct Silent;

impl Progress for Silent {
    fn phase(&self, _: &str) {}
    fn tick(&self, _: f64, _: f64, _: &Observation) {}
    fn note(&self, _: &str) {}
}

/// What the caller decides about the run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Leave the deployment running after the run (no teardown).
    pub keep: bool,
}

/// Why a run did not produce a complete result.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The scenario needs what the target cannot do; nothing was started.
    #[error("target `{target}` cannot run this scenario; it does not support: {missing}")]
    Unsupported { target: String, missing: String },
    /// The target failed during `phase`; the cause is the source.
    #[error("{phase} failed")]
    Target {
        phase: &'static str,
        #[source]
        source: TargetError,
    },
    /// Ctrl-C before anything was measured.
    #[error("interrupted during {phase}")]
    Interrupted { phase: &'static str },
}

/// The result of a run that got as far as producing data.
#[derive(Debug)]
pub struct RunOutcome {
    pub summary: Summary,
    pub data: RunData,
    /// Set when the run was cut short by a failure (the summary is partial).
    pub error: Option<EngineError>,
    /// Set when the run was interrupted (Ctrl-C).
    pub interrupted: bool,
}

/// Everything that may refuse a run before anything is created: the capabilities the scenario
/// needs, the target's own refusals, then its preflight (asking outside). `Err(Unsupported)`
/// (exit 2) names what is refused; a failure to ask is `Err(Target)` (exit 3), after the
/// target's teardown. Callers that
/// claim resources for a run (an output directory) call this first and [`run_checked`] after.
pub async fn check<T: Target>(
    target: &mut T,
    scenario: &Scenario,
    ctx: &RunContext,
    cancel: &CancellationToken,
) -> Result<(), EngineError> {
    let mut missing: Vec<String> = requirements(scenario, ctx.time_scale)
        .difference(&target.capabilities())
        .map(ToString::to_string)
        .collect();
    if missing.is_empty() {
        missing = target.refusals(scenario, ctx.time_scale);
    }
    if missing.is_empty() {
        let asked = tokio::select! {
            r = target.preflight(scenario, ctx) => r.map_err(|source| EngineError::Target { phase: "preflight", source }),
            () = cancel.cancelled() => Err(EngineError::Interrupted { phase: "preflight" }),
        };
        missing = match asked {
            Ok(refused) => refused,
            Err(e) => {
                // Whatever the preflight opened is released.
                let _ = target.teardown().await;
                return Err(e);
            }
        };
    }
    if !missing.is_empty() {
        return Err(EngineError::Unsupported {
            target: target.name().to_string(),
            // Refusals are whole sentences with commas of their own.
            missing: missing.join("; "),
        });
    }
    Ok(())
}

/// Runs `scenario` on `target`: [`check`], then [`run_checked`]. Returns `Err` only when the
/// run was refused or its preflight failed (nothing was started).
pub async fn run<T: Target>(
    target: &mut T,
    scenario: &Scenario,
    ctx: &RunContext,
    options: &RunOptions,
    cancel: CancellationToken,
    progress: &dyn Progress,
) -> Result<RunOutcome, EngineError> {
    check(target, scenario, ctx, &cancel).await?;
    Ok(run_checked(target, scenario, ctx, options, cancel, progress).await)
}

/// Runs a scenario [`check`] passed. A deploy that fails or is interrupted still yields an
/// outcome: nothing measured, marked partial with where it stopped, after the teardown.
pub async fn run_checked<T: Target>(
    target: &mut T,
    scenario: &Scenario,
    ctx: &RunContext,
    options: &RunOptions,
    cancel: CancellationToken,
    progress: &dyn Progress,
) -> RunOutcome {
    let warnings = target.warnings(scenario, ctx);
    for warning in &warnings {
        progress.note(&format!("warning: {warning}"));
    }

    progress.phase("deploy");
    let deployed = tokio::select! {
        r = target.deploy(scenario, ctx) => r.map_err(|source| EngineError::Target { phase: "deploy", source }),
        () = cancel.cancelled() => Err(EngineError::Interrupted { phase: "deploy" }),
    };
    if let Err(e) = deployed {
        finish(target, options, progress).await;
        let interrupted = matches!(e, EngineError::Interrupted { .. });
        let reason = format!("{}: nothing was measured", error_chain(&e));
        let data = RunData {
            events: warning_notes(warnings, 0.0),
            ..RunData::default()
        };
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let summary = summarize_run(
            scenario,
            ctx,
            target.name(),
            &data,
            rfc3339_utc(now_ms),
            Some(reason),
        );
        return RunOutcome {
            summary,
            data,
            error: (!interrupted).then_some(e),
            interrupted,
        };
    }

    let scale = ctx.time_scale;
    let clock = RunClock::starting_after(
        scale.wall(scenario.load.warmup),
        scale.wall(scenario.load.duration),
    );
    let started_at = rfc3339_utc(clock.load_start_unix_ms);
    progress.phase("warm-up");
    let mut error = None;
    let mut interrupted = false;
    if let Err(source) = target.start_load(&clock).await {
        error = Some(EngineError::Target {
            phase: "start load",
            source,
        });
    } else {
        match drive_load(target, scenario, scale, &clock, &cancel, progress).await {
            Ok(was_interrupted) => interrupted = was_interrupted,
            Err(e) => error = Some(e),
        }
    }

    progress.phase("collect");
    let cut_short = interrupted || error.is_some();
    let data = match target.collect(cut_short).await {
        Ok(data) => data,
        Err(source) => {
            let e = EngineError::Target {
                phase: "collect",
                source,
            };
            progress.note(&format!(
                "{}; the report covers no load data",
                error_chain(&e)
            ));
            error.get_or_insert(e);
            RunData {
                load_started_unix_ms: clock.load_start_unix_ms,
                ..RunData::default()
            }
        }
    };
    finish(target, options, progress).await;
    let mut data = data;
    // The warnings stay with the run, told in its explanation as its notes are, first.
    let first = data.events.first().map_or(0.0, |e| e.t_s.min(0.0));
    data.events.splice(0..0, warning_notes(warnings, first));

    let partial_reason = match (&error, interrupted) {
        (Some(e), _) => Some(error_chain(e)),
        (None, true) => Some("interrupted by the user".to_string()),
        (None, false) => None,
    };
    let summary = summarize_run(
        scenario,
        ctx,
        target.name(),
        &data,
        started_at,
        partial_reason,
    );
    RunOutcome {
        summary,
        data,
        error,
        interrupted,
    }
}

/// The target's warnings as notes at `t_s`.
fn warning_notes(warnings: Vec<String>, t_s: f64) -> Vec<RecordedEvent> {
    warnings
        .into_iter()
        .map(|message| RecordedEvent {
            t_s,
            kind: EventKind::Note {
                message: format!("before the run: {message}"),
            },
        })
        .collect()
}

/// Evaluates the expectations over `data` and summarizes the run.
fn summarize_run(
    scenario: &Scenario,
    ctx: &RunContext,
    target: &str,
    data: &RunData,
    started_at: String,
    partial_reason: Option<String>,
) -> Summary {
    let scale = ctx.time_scale;
    let results = scenario
        .expectations
        .iter()
        .map(|e| evaluate(e, data, scale))
        .collect();
    let facts = RunFacts {
        scenario: scenario.name.clone(),
        variant: scenario.selected_variant.clone(),
        target: target.to_string(),
        run_id: ctx.run_id.clone(),
        seed: ctx.seed,
        started_at,
        time_scale: scale.factor(),
        partial_reason,
        ingress_controller: scenario.ingress.as_ref().map(|i| i.controller),
        price_per_gb: scenario.cost.price_per_gb,
        proxied_generators: scenario
            .load
            .generators
            .iter()
            .filter(|g| g.via != crate::scenario::model::Via::KubeProxy)
            .map(|g| g.name.clone())
            .collect(),
    };
    summarize(facts, data, results)
}

/// The load phase: observe once a second, apply timeline actions when due, stop at the end or
/// on cancel. Returns whether the run was interrupted.
async fn drive_load<T: Target>(
    target: &mut T,
    scenario: &Scenario,
    scale: TimeScale,
    clock: &RunClock,
    cancel: &CancellationToken,
    progress: &dyn Progress,
) -> Result<bool, EngineError> {
    let end = clock.load_start + clock.duration;
    let total_s = clock.duration.as_secs_f64();
    let mut pending = scenario.timeline.iter().peekable();
    let mut ticker = tokio::time::interval(Duration::from_secs(1));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut load_announced = false;
    loop {
        let next_action = pending.peek().map(|e| clock.load_start + scale.wall(e.at));
        let wake = next_action.map_or(end, |a| a.min(end));
        tokio::select! {
            biased;
            () = cancel.cancelled() => return Ok(true),
            () = tokio::time::sleep_until(wake) => {
                if tokio::time::Instant::now() >= end {
                    return Ok(false);
                }
                if let Some(event) = pending.next() {
                    progress.note(&format!("{:>6.1}s {event}", clock.now_s()));
                    target.act(event).await.map_err(|source| EngineError::Target { phase: "timeline action", source })?;
                }
            }
            _ = ticker.tick() => {
                let now = clock.now_s();
                if now >= 0.0 && !load_announced {
                    progress.phase("load");
                    load_announced = true;
                }
                match target.observe().await {
                    Ok(obs) => progress.tick(now, total_s, &obs),
                    Err(e) => progress.note(&format!("observe failed: {}", error_chain(&e))),
                }
            }
        }
    }
}

async fn finish<T: Target>(target: &mut T, options: &RunOptions, progress: &dyn Progress) {
    if options.keep {
        progress.note("--keep: leaving the deployment running");
        return;
    }
    progress.phase("teardown");
    if let Err(e) = target.teardown().await {
        progress.note(&format!("teardown failed: {}", error_chain(&e)));
    }
}

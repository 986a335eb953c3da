//! The engine without processes: a scripted fake [`Target`] records every call with the
//! (paused, auto-advancing) tokio clock, fails where a test tells it to, and hands back data
//! it builds from the actions it saw. Each test runs in milliseconds of real time.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use harness_core::clock::{RunClock, TimeScale};
use harness_core::engine::{
    self, Capability, EngineError, ExitStatus, Observation, RunContext, RunOptions, RunOutcome,
    Silent, Target, TargetError,
};
use harness_core::measure::{EventKind, GeneratorRun, RecordedEvent, RunData};
use harness_core::report::Verdict;
use harness_core::scenario::{Scenario, Threshold, TimelineEvent};
use harness_core::testing::one_node_scenario;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use workload_contract::loadgen::Report;
use workload_contract::loadgen::report::{BackendReport, TimelineRow};

/// The service's fields of the scripted run's scenario.
const SERVICE: &[&str] = &["replicas: 2", "serviceTime: { fixed: 1ms }"];
/// Warm-up 2 s, load 20 s, a kill at 5 s and a rollout (named `roll`) at 8 s. Expected: no
/// errors from the rollout on, only errors before it, at most half errors over the run.
const REST: &str = r#"load:
  warmup: 2s
  duration: 20s
  generators: [{ name: g, zone: z, rate: 10 }]
timeline:
  - { at: 5s, killPod: { pod: 0 } }
  - { at: 8s, name: roll, rollout: { restart: true } }
expect:
  - { name: no errors after the rollout, metric: errorRate, max: 0, window: { from: roll } }
  - { name: only errors before it, metric: errorRate, min: 1, window: { to: roll } }
  - { name: at most half errors, metric: errorRate, max: 0.5 }
"#;

fn scenario() -> Scenario {
    one_node_scenario(SERVICE, REST)
}

/// Where the fake fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum FailAt {
    #[default]
    Nowhere,
    Deploy,
    /// The n-th `act` (from 1).
    Act(usize),
}

/// One call the engine made, with the time since the test started.
#[derive(Debug, Clone, PartialEq)]
struct Call {
    what: String,
    at: Duration,
}

#[derive(Default)]
struct Script {
    capabilities: Option<BTreeSet<Capability>>,
    fail: FailAt,
    /// How long `deploy` takes.
    deploy_takes: Duration,
    /// Cancelled when `deploy` starts (a Ctrl-C during deploy).
    cancel_in_deploy: Option<CancellationToken>,
}

/// The fake target. Its data: one generator sending 10 requests a second from the load start,
/// all of them 503 until the first action named `roll` was applied, 200 afterwards.
struct Scripted {
    script: Script,
    started: Instant,
    calls: Arc<Mutex<Vec<Call>>>,
    clock: Option<RunClock>,
    acts: usize,
    /// Seconds since the load start at which `roll` was applied.
    rolled_at: Option<f64>,
    events: Vec<RecordedEvent>,
}

impl Scripted {
    fn new(script: Script) -> Self {
        Self {
            script,
            started: Instant::now(),
            calls: Arc::default(),
            clock: None,
            acts: 0,
            rolled_at: None,
            events: Vec::new(),
        }
    }

    fn record(&self, what: impl Into<String>) {
        self.calls.lock().unwrap().push(Call {
            what: what.into(),
            at: self.started.elapsed(),
        });
    }

    fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }

    /// The calls without the once-a-second `observe`s.
    fn sequence(&self) -> Vec<String> {
        self.calls()
            .into_iter()
            .map(|c| c.what)
            .filter(|w| w != "observe")
            .collect()
    }
}

fn failure(what: &str) -> TargetError {
    TargetError::new(
        what.to_owned(),
        std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "scripted failure"),
    )
}

impl Target for Scripted {
    fn name(&self) -> &'static str {
        "scripted"
    }

    fn capabilities(&self) -> BTreeSet<Capability> {
        self.script
            .capabilities
            .clone()
            .unwrap_or_else(|| Capability::ALL.into_iter().collect())
    }

    async fn deploy(&mut self, _: &Scenario, _: &RunContext) -> Result<(), TargetError> {
        self.record("deploy");
        if let Some(cancel) = &self.script.cancel_in_deploy {
            cancel.cancel();
        }
        tokio::time::sleep(self.script.deploy_takes).await;
        if self.script.fail == FailAt::Deploy {
            return Err(failure("starting pod-0"));
        }
        Ok(())
    }

    async fn start_load(&mut self, clock: &RunClock) -> Result<(), TargetError> {
        self.record("start_load");
        self.clock = Some(*clock);
        Ok(())
    }

    async fn act(&mut self, event: &TimelineEvent) -> Result<(), TargetError> {
        self.acts += 1;
        self.record(format!("act {event}"));
        if self.script.fail == FailAt::Act(self.acts) {
            return Err(failure(&format!("applying `{event}`")));
        }
        let now = self.clock.expect("load started").now_s();
        if event.name.as_deref() == Some("roll") {
            self.rolled_at = Some(now);
        }
        self.events.push(RecordedEvent {
            t_s: now,
            kind: EventKind::Action {
                name: event.name.clone(),
                description: event.to_string(),
            },
        });
        Ok(())
    }

    async fn observe(&mut self) -> Result<Observation, TargetError> {
        self.record("observe");
        Ok(Observation::default())
    }

    async fn collect(&mut self, interrupted: bool) -> Result<RunData, TargetError> {
        self.record(format!("collect interrupted={interrupted}"));
        let clock = self.clock.expect("load started");
        let duration_s = clock.now_s().clamp(0.0, clock.duration.as_secs_f64());
        let rows = (0..duration_s.ceil() as u64)
            .map(|t| {
                let ok = self.rolled_at.is_some_and(|r| t as f64 >= r);
                TimelineRow {
                    t,
                    attempted: 10,
                    responses: BTreeMap::from([((if ok { "200" } else { "503" }).into(), 10)]),
                    by_backend: BTreeMap::from([("pod-0".into(), 10)]),
                    ..TimelineRow::default()
                }
            })
            .collect::<Vec<_>>();
        // The report's totals are its rows' (the run's self-audit checks that they add up).
        let mut responses: BTreeMap<String, u64> = BTreeMap::new();
        for row in &rows {
            for (code, n) in &row.responses {
                *responses.entry(code.clone()).or_default() += n;
            }
        }
        let attempted = rows.iter().map(|r| r.attempted).sum();
        Ok(RunData {
            load_started_unix_ms: clock.load_start_unix_ms,
            duration_s,
            generators: vec![GeneratorRun {
                name: "g".into(),
                zone: "z".into(),
                report: Report {
                    started_at_unix_ms: clock.load_start_unix_ms,
                    attempted,
                    by_backend: BTreeMap::from([(
                        "pod-0".into(),
                        BackendReport {
                            requests: attempted,
                            responses: responses.clone(),
                            ..BackendReport::default()
                        },
                    )]),
                    responses,
                    timeline: rows,
                    ..Report::default()
                },
            }],
            events: self.events.clone(),
            ..RunData::default()
        })
    }

    async fn teardown(&mut self) -> Result<(), TargetError> {
        self.record("teardown");
        Ok(())
    }
}

fn ctx(scale: f64) -> RunContext {
    RunContext {
        run_id: "test".into(),
        out_dir: std::env::temp_dir(),
        seed: 1,
        time_scale: TimeScale::new(scale).unwrap(),
    }
}

async fn run(
    target: &mut Scripted,
    scale: f64,
    cancel: CancellationToken,
) -> Result<RunOutcome, EngineError> {
    run_scenario(target, &scenario(), scale, cancel).await
}

async fn run_scenario(
    target: &mut Scripted,
    scenario: &Scenario,
    scale: f64,
    cancel: CancellationToken,
) -> Result<RunOutcome, EngineError> {
    let options = RunOptions { keep: false };
    engine::run(target, scenario, &ctx(scale), &options, cancel, &Silent).await
}

#[tokio::test(start_paused = true)]
async fn calls_come_in_order_with_actions_at_their_times() {
    let mut target = Scripted::new(Script::default());
    let outcome = run(&mut target, 1.0, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        target.sequence(),
        [
            "deploy",
            "start_load",
            "act kill pod-0",
            "act roll: rollout restart",
            "collect interrupted=false",
            "teardown"
        ]
    );
    let at = |what: &str| {
        target
            .calls()
            .into_iter()
            .find(|c| c.what == what)
            .unwrap()
            .at
    };
    // The warm-up is 2 s; actions at 5 s and 8 s of the load.
    assert_eq!(at("act kill pod-0"), Duration::from_secs(7));
    assert_eq!(at("act roll: rollout restart"), Duration::from_secs(10));
    assert_eq!(at("collect interrupted=false"), Duration::from_secs(22));
    let observes = target
        .calls()
        .iter()
        .filter(|c| c.what == "observe")
        .count();
    assert!((20..=24).contains(&observes), "once a second: {observes}");
    assert!(!outcome.summary.partial);
    assert_eq!(outcome.summary.duration_s, 20.0);
    assert!(outcome.summary.expectations.iter().all(|e| e.passed));
    assert_eq!(outcome.summary.verdict, Verdict::Pass);
    assert_eq!(outcome.exit_status(), ExitStatus::Passed);
    assert_eq!(ExitStatus::Passed.code(), 0);
}

#[tokio::test(start_paused = true)]
async fn windows_follow_the_actions_on_the_run_clock() {
    // At scale 0.5 the rollout at 8 s of Kubernetes time comes 4 s into the load.
    let mut scenario = scenario();
    // A bound the run misses: 40% errors.
    scenario.expectations[2].max = Some(Threshold::Value(0.3));
    let mut target = Scripted::new(Script::default());
    let outcome = run_scenario(&mut target, &scenario, 0.5, CancellationToken::new())
        .await
        .unwrap();
    let at = target
        .calls()
        .into_iter()
        .find(|c| c.what.starts_with("act roll"))
        .unwrap()
        .at;
    assert_eq!(at, Duration::from_secs(1 + 4), "warm-up 1 s, then 4 s");
    let s = &outcome.summary;
    assert_eq!(s.time_scale, 0.5);
    assert_eq!(s.duration_s, 10.0);
    let after = &s.expectations[0];
    assert_eq!((after.window.from_s, after.window.to_s), (4.0, 10.0));
    assert_eq!(after.observed, Some(0.0), "no 503 from the rollout on");
    assert!(after.passed);
    let before = &s.expectations[1];
    assert_eq!((before.window.from_s, before.window.to_s), (0.0, 4.0));
    assert_eq!(before.observed, Some(1.0), "only 503 before it");
    assert!(before.passed);
    // Seconds 0–3 were all 503: 40 of 100 requests.
    let whole = &s.expectations[2];
    assert_eq!(whole.observed, Some(0.4));
    assert!(!whole.passed);
    assert_eq!(s.verdict, Verdict::Fail);
    assert_eq!(outcome.exit_status(), ExitStatus::ExpectationFailed);
    assert_eq!(ExitStatus::ExpectationFailed.code(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_scenario_the_target_cannot_run_is_refused_before_anything_starts() {
    let mut no_rollout: BTreeSet<Capability> = Capability::ALL.into_iter().collect();
    no_rollout.remove(&Capability::Rollout);
    let mut target = Scripted::new(Script {
        capabilities: Some(no_rollout),
        ..Script::default()
    });
    let result = run(&mut target, 1.0, CancellationToken::new()).await;
    let err = result.as_ref().unwrap_err();
    assert!(
        matches!(err, EngineError::Unsupported { missing, .. } if missing == "the rollout action"),
        "{err}"
    );
    assert_eq!(ExitStatus::of(&result), ExitStatus::InvalidInput);
    assert_eq!(ExitStatus::InvalidInput.code(), 2);
    assert!(target.calls().is_empty(), "{:?}", target.calls());

    // A target that cannot shrink time refuses --time-scale, and says why.
    let mut real_time_only: BTreeSet<Capability> = Capability::ALL.into_iter().collect();
    real_time_only.remove(&Capability::TimeScale);
    let mut target = Scripted::new(Script {
        capabilities: Some(real_time_only.clone()),
        ..Script::default()
    });
    let err = run(&mut target, 0.1, CancellationToken::new())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("a time scale below 1") && err.contains("run with --time-scale 1"),
        "{err}"
    );
    assert!(target.calls().is_empty());
    // ... and runs at scale 1.
    let mut target = Scripted::new(Script {
        capabilities: Some(real_time_only),
        ..Script::default()
    });
    assert!(
        run(&mut target, 1.0, CancellationToken::new())
            .await
            .is_ok()
    );
}

#[tokio::test(start_paused = true)]
async fn a_failing_action_cuts_the_run_short_but_keeps_what_was_measured() {
    let mut target = Scripted::new(Script {
        fail: FailAt::Act(2),
        ..Script::default()
    });
    let outcome = run(&mut target, 1.0, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        target.sequence(),
        [
            "deploy",
            "start_load",
            "act kill pod-0",
            "act roll: rollout restart",
            "collect interrupted=true",
            "teardown"
        ]
    );
    assert!(matches!(
        outcome.error,
        Some(EngineError::Target {
            phase: "timeline action",
            ..
        })
    ));
    let s = &outcome.summary;
    assert!(s.partial);
    assert_eq!(
        s.partial_reason.as_deref(),
        Some("timeline action failed: applying `roll: rollout restart`: scripted failure")
    );
    assert_eq!(s.duration_s, 8.0, "measured up to the failure");
    assert_eq!(s.verdict, Verdict::Fail, "a partial run never passes");
    assert!(s.explanation[0].starts_with("the run was cut short (timeline action failed"));
    assert_eq!(outcome.exit_status(), ExitStatus::Infrastructure);
    assert_eq!(ExitStatus::Infrastructure.code(), 3);
}

#[tokio::test(start_paused = true)]
async fn ctrl_c_mid_run_gives_a_partial_summary_and_still_tears_down() {
    let mut target = Scripted::new(Script::default());
    let cancel = CancellationToken::new();
    let ctrl_c = cancel.clone();
    tokio::spawn(async move {
        // 2 s warm-up + 7 s of load: after the kill, before the rollout.
        tokio::time::sleep(Duration::from_secs(9)).await;
        ctrl_c.cancel();
    });
    let outcome = run(&mut target, 1.0, cancel).await.unwrap();
    assert_eq!(
        target.sequence(),
        [
            "deploy",
            "start_load",
            "act kill pod-0",
            "collect interrupted=true",
            "teardown"
        ]
    );
    assert!(outcome.interrupted);
    let s = &outcome.summary;
    assert!(s.partial);
    assert_eq!(s.partial_reason.as_deref(), Some("interrupted by the user"));
    assert_eq!(s.duration_s, 7.0);
    // The rollout never came: its window is empty, which is a failure, never a pass.
    assert_eq!(s.expectations[0].observed, None);
    assert!(!s.expectations[0].passed);
    // Nor was the window reached: not evaluated, an error in JUnit.
    let why = s.expectations[0].incomplete.as_deref().unwrap_or_default();
    assert!(why.starts_with("the run stopped after 7.0s"), "{why}");
    let junit = harness_core::report::render_junit(s);
    assert!(junit.contains("name=\"the run completed\""), "{junit}");
    assert!(!junit.contains("errors=\"0\""), "{junit}");
    assert_eq!(outcome.exit_status(), ExitStatus::Infrastructure);
}

#[tokio::test(start_paused = true)]
async fn a_failed_or_interrupted_deploy_is_torn_down_and_measures_nothing() {
    let mut target = Scripted::new(Script {
        fail: FailAt::Deploy,
        deploy_takes: Duration::from_secs(3),
        ..Script::default()
    });
    let outcome = run(&mut target, 1.0, CancellationToken::new())
        .await
        .unwrap();
    assert!(matches!(
        outcome.error,
        Some(EngineError::Target {
            phase: "deploy",
            ..
        })
    ));
    assert!(!outcome.interrupted);
    // Nothing measured, and the summary says where the run stopped.
    assert!(outcome.data.generators.is_empty());
    let why = outcome
        .summary
        .partial_reason
        .as_deref()
        .unwrap_or_default();
    assert!(
        why.starts_with("deploy failed") && why.ends_with("nothing was measured"),
        "{why}"
    );
    assert!(outcome.summary.partial);
    assert_eq!(outcome.exit_status(), ExitStatus::Infrastructure);
    assert_eq!(target.sequence(), ["deploy", "teardown"]);

    let cancel = CancellationToken::new();
    let mut target = Scripted::new(Script {
        deploy_takes: Duration::from_secs(60),
        cancel_in_deploy: Some(cancel.clone()),
        ..Script::default()
    });
    let outcome = run(&mut target, 1.0, cancel).await.unwrap();
    assert!(outcome.interrupted && outcome.error.is_none());
    assert_eq!(
        outcome.summary.partial_reason.as_deref(),
        Some("interrupted during deploy: nothing was measured")
    );
    assert_eq!(outcome.exit_status(), ExitStatus::Infrastructure);
    assert_eq!(target.sequence(), ["deploy", "teardown"]);
    let torn_down = target.calls().last().unwrap().at;
    assert!(
        torn_down < Duration::from_secs(1),
        "not after the deploy: {torn_down:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn keep_leaves_the_deployment_running() {
    let mut target = Scripted::new(Script::default());
    let options = RunOptions { keep: true };
    let outcome = engine::run(
        &mut target,
        &scenario(),
        &ctx(1.0),
        &options,
        CancellationToken::new(),
        &Silent,
    )
    .await
    .unwrap();
    assert!(!target.sequence().contains(&"teardown".to_string()));
    assert_eq!(outcome.exit_status(), ExitStatus::Passed);
}

//! The engine: one sequence for every target (plan → deploy → warm-up → load and timeline →
//! collect → assert → report), the [`Target`] trait it drives, the run's [`TimeScale`],
//! expectation evaluation, the summary and the sentences that explain the verdict.

pub mod evaluate;
pub mod exit;
pub mod explain;
pub mod ingress_view;
pub mod plan;
mod plan_text;
mod plan_warnings;
pub mod pod_views;
pub mod rebuild;
pub mod removals;
pub mod run;
pub mod series_views;
pub mod summarize;
pub mod target;
pub mod time_scale;

pub use exit::ExitStatus;
pub use run::{EngineError, Progress, RunOptions, RunOutcome, Silent, run};
pub use target::{
    BoxError, Capability, Observation, PodObservation, RunClock, RunContext, Target, TargetError,
    error_chain, requirements,
};
pub use time_scale::{InvalidTimeScale, TimeScale};

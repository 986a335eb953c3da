//! The engine: one sequence for every target (plan → deploy → warm-up → load and timeline →
//! collect → assert → report), the [`Target`] trait it drives, expectation evaluation and the
//! summary that explains the verdict.

pub mod evaluate;
pub mod plan;
pub mod pod_views;
pub mod rebuild;
pub mod run;
pub mod series_views;
pub mod summarize;
pub mod target;
pub mod time_scale;

pub use run::{EngineError, Progress, RunOptions, RunOutcome, Silent, run};
pub use target::{
    Capability, Observation, PodObservation, RunClock, RunContext, Target, TargetError,
    requirements,
};

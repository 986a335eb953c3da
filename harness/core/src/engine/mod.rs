//! The engine: one sequence for every target (plan → deploy → warm-up → load and timeline →
//! collect → assert → report), the [`Target`] trait it drives, expectation evaluation and the
//! summary that explains the verdict.

pub mod evaluate;
pub mod plan;
pub mod run;
pub mod summarize;
pub mod target;
pub mod time_scale;

pub use run::{EngineError, Progress, RunOptions, RunOutcome, Silent, run};
pub use target::{
    BoxError, Capability, Observation, PodObservation, RunClock, RunContext, Target, TargetError,
    error_chain, requirements,
};
pub use time_scale::{InvalidTimeScale, TimeScale};

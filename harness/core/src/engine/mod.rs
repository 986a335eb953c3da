//! The engine: one sequence for every target (capabilities → deploy → warm-up → load and
//! timeline → collect → verdict → teardown), the [`Target`] contract it drives, and how a run
//! ends ([`ExitStatus`]). What the verdict is made of lives in [`crate::verdict`], the dry run
//! in [`crate::plan`], the clocks in [`crate::clock`].

pub mod exit;
pub mod run;
pub mod target;

pub use exit::ExitStatus;
pub use run::{EngineError, Progress, RunOptions, RunOutcome, Silent, check, run, run_checked};
pub use target::{
    BoxError, Capability, Observation, PodObservation, RunContext, Target, TargetError,
    requirements,
};

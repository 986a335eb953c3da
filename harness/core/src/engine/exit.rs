//! How a run ends, as an exit status every caller maps the same way: 0 every expectation
//! held, 1 an expectation failed (a result, not an error), 2 invalid input or usage (the
//! scenario asks for what the target cannot do), 3 an infrastructure error, an interrupted
//! run (partial results are still written) or a run whose self-audit found that its own
//! numbers do not reconcile.

use super::run::{EngineError, RunOutcome};
use crate::report::Verdict;

/// The four ways a run ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    Passed,
    ExpectationFailed,
    InvalidInput,
    Infrastructure,
}

impl ExitStatus {
    /// The process exit code.
    pub const fn code(self) -> i32 {
        match self {
            ExitStatus::Passed => 0,
            ExitStatus::ExpectationFailed => 1,
            ExitStatus::InvalidInput => 2,
            ExitStatus::Infrastructure => 3,
        }
    }

    /// The status of what [`super::run`] returned.
    pub fn of(result: &Result<RunOutcome, EngineError>) -> ExitStatus {
        match result {
            Ok(outcome) => outcome.exit_status(),
            Err(e) => e.exit_status(),
        }
    }
}

impl EngineError {
    /// A refused scenario is the user's input; everything else is infrastructure.
    pub fn exit_status(&self) -> ExitStatus {
        match self {
            EngineError::Unsupported { .. } => ExitStatus::InvalidInput,
            EngineError::Target { .. } | EngineError::Interrupted { .. } => {
                ExitStatus::Infrastructure
            }
        }
    }
}

impl RunOutcome {
    /// A run cut short by a failure or Ctrl-C, or whose self-audit found a violated
    /// invariant (a broken measurement), is infrastructure whatever its expectations say;
    /// otherwise the verdict decides.
    pub fn exit_status(&self) -> ExitStatus {
        let audit_violated = self.summary.audit.as_ref().is_some_and(|a| !a.held);
        if self.error.is_some() || self.interrupted || audit_violated {
            return ExitStatus::Infrastructure;
        }
        match self.summary.verdict {
            Verdict::Pass => ExitStatus::Passed,
            Verdict::Fail => ExitStatus::ExpectationFailed,
        }
    }
}

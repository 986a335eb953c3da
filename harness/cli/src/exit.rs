//! Exit codes shared by every subcommand: 0 all expectations held (or the command succeeded),
//! 1 an expectation failed, 2 invalid input or usage, 3 an infrastructure error — the codes of
//! `harness_core::engine::ExitStatus`, which also decides how a run maps to them.

use std::fmt;

use harness_core::engine::ExitStatus;

/// How a subcommand ended, when it did not simply succeed.
#[derive(Debug)]
pub enum Failure {
    /// At least one expectation did not hold. The report has already been written.
    ExpectationFailed,
    /// The user's input (file, flag, field) is wrong; the message says where and how to fix it.
    InvalidInput(anyhow::Error),
    /// Something outside the user's input broke (a process, a port, the filesystem).
    Infrastructure(anyhow::Error),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::ExpectationFailed => write!(f, "at least one expectation failed"),
            Failure::InvalidInput(e) => write!(f, "invalid input: {e:#}"),
            Failure::Infrastructure(e) => write!(f, "infrastructure error: {e:#}"),
        }
    }
}

pub type Outcome = Result<(), Failure>;

/// The outcome with the higher exit code.
pub fn worse(a: Outcome, b: Outcome) -> Outcome {
    let code = |o: &Outcome| match o {
        Ok(()) => 0,
        Err(Failure::ExpectationFailed) => 1,
        Err(Failure::InvalidInput(_)) => 2,
        Err(Failure::Infrastructure(_)) => 3,
    };
    if code(&b) > code(&a) { b } else { a }
}

/// Prints the failure (if any) to stderr and returns the process exit code.
pub fn code_for(outcome: Outcome) -> i32 {
    match outcome {
        Ok(()) => ExitStatus::Passed.code(),
        Err(Failure::ExpectationFailed) => ExitStatus::ExpectationFailed.code(),
        Err(f @ Failure::InvalidInput(_)) => {
            eprintln!("error: {f}");
            ExitStatus::InvalidInput.code()
        }
        Err(f @ Failure::Infrastructure(_)) => {
            eprintln!("error: {f}");
            ExitStatus::Infrastructure.code()
        }
    }
}

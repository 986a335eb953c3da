//! Live progress of `harness run` on stderr: on a terminal, indicatif bars (the phase with
//! elapsed and remaining time, achieved rate, error rate, pods ready and hints, then one bar
//! per pod with its requests in flight against the sidecar's limit); elsewhere — CI logs, a
//! pipe, `NO_COLOR`, `--progress plain` — plain timestamped lines.

mod bars;
mod plain;
mod status;

use std::io::IsTerminal;

use harness_core::engine::{Observation, Progress};

/// `--progress`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ProgressMode {
    /// Bars on a terminal, plain lines otherwise (and with NO_COLOR set).
    Auto,
    /// Live bars (needs a terminal on stderr).
    Bar,
    /// Timestamped lines.
    Plain,
    /// Nothing until the verdict.
    None,
}

/// Where progress goes.
pub enum Console {
    Bars(bars::Bars),
    Plain(plain::Lines),
    Silent,
}

impl Console {
    pub fn new(mode: ProgressMode) -> Self {
        let terminal = std::io::stderr().is_terminal();
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let dumb = std::env::var("TERM").is_ok_and(|t| t == "dumb");
        match mode {
            ProgressMode::Auto if terminal && !no_color && !dumb => {
                Console::Bars(bars::Bars::new())
            }
            ProgressMode::Bar => Console::Bars(bars::Bars::new()),
            ProgressMode::Auto | ProgressMode::Plain => Console::Plain(plain::Lines::default()),
            ProgressMode::None => Console::Silent,
        }
    }

    /// Clears the bars before the verdict is printed.
    pub fn finish(&self) {
        if let Console::Bars(b) = self {
            b.finish();
        }
    }
}

impl Progress for Console {
    fn phase(&self, name: &str) {
        match self {
            Console::Bars(b) => b.phase(name),
            Console::Plain(p) => p.phase(name),
            Console::Silent => {}
        }
    }

    fn tick(&self, t_s: f64, total_s: f64, obs: &Observation) {
        match self {
            Console::Bars(b) => b.tick(t_s, total_s, obs),
            Console::Plain(p) => p.tick(t_s, total_s, obs),
            Console::Silent => {}
        }
    }

    fn note(&self, message: &str) {
        match self {
            Console::Bars(b) => b.note(message),
            Console::Plain(p) => p.note(message),
            Console::Silent => {}
        }
    }
}

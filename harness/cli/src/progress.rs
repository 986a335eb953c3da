//! Live progress of a run: a progress bar with a one-line status on a terminal, plain
//! timestamped lines (every 5 s of load) when stderr is not a terminal (CI logs).

use std::io::IsTerminal;

use harness_core::engine::{Observation, Progress};
use indicatif::{ProgressBar, ProgressStyle};

/// Writes progress to stderr.
pub struct Console {
    bar: Option<ProgressBar>,
}

impl Console {
    pub fn new() -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(0);
            bar.set_style(
                ProgressStyle::with_template("{bar:30} {pos:>4}/{len}s {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar
        });
        Self { bar }
    }

    fn line(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => eprintln!("{text}"),
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

fn status(obs: &Observation) -> String {
    let ready = obs.pods.iter().filter(|p| p.ready).count();
    let in_flight: Vec<String> = obs
        .pods
        .iter()
        .map(|p| {
            if p.queue_depth > 0 {
                format!("{}+{}q", p.in_flight, p.queue_depth)
            } else {
                p.in_flight.to_string()
            }
        })
        .collect();
    format!(
        "pods ready {ready}/{} · in flight [{}] · hints {}",
        obs.pods.len(),
        in_flight.join(" "),
        if obs.hints_enabled { "on" } else { "off" }
    )
}

impl Progress for Console {
    fn phase(&self, name: &str) {
        self.line(&format!("== {name}"));
    }

    fn tick(&self, t_s: f64, total_s: f64, obs: &Observation) {
        match &self.bar {
            Some(bar) => {
                bar.set_length(total_s.ceil() as u64);
                bar.set_position(t_s.max(0.0).floor() as u64);
                bar.set_message(status(obs));
            }
            None => {
                let second = t_s.round() as i64;
                if second % 5 == 0 {
                    eprintln!("{t_s:>6.1}s {}", status(obs));
                }
            }
        }
    }

    fn note(&self, message: &str) {
        self.line(message);
    }
}

//! Plain progress: one timestamped line per phase and note, and a status line every 5 s of
//! load, e.g. `08:28:01Z load 12s/40s · 28s left · 100 rps · errors 48.1% · pods ready 4/4 ·
//! hints on · in flight pod-0 20/20+93q, pod-1 20/20+96q, ...`.

use std::sync::Mutex;

use harness_core::engine::Observation;

use super::status;

/// Seconds of load between status lines.
const EVERY_S: i64 = 5;

#[derive(Default)]
pub struct Lines {
    /// The last load second a status line was written for.
    last: Mutex<Option<i64>>,
}

fn stamp() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = now.as_secs() % 86_400;
    format!(
        "{:02}:{:02}:{:02}Z",
        secs / 3600,
        (secs % 3600) / 60,
        secs % 60
    )
}

fn line(text: &str) {
    eprintln!("{} {text}", stamp());
}

impl Lines {
    pub fn phase(&self, name: &str) {
        line(&format!("phase {name}"));
    }

    pub fn note(&self, message: &str) {
        line(message.trim_start());
    }

    pub fn tick(&self, t_s: f64, total_s: f64, obs: &Observation) {
        let second = t_s.max(0.0).floor() as i64;
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let due = match *last {
            None => true,
            Some(prev) => second / EVERY_S > prev / EVERY_S,
        };
        if !due {
            return;
        }
        *last = Some(second);
        let pods: Vec<String> = obs
            .pods
            .iter()
            .map(|p| {
                let mut s = format!("{} {}", p.name, p.in_flight);
                if p.max_concurrency > 0 {
                    s.push_str(&format!("/{}", p.max_concurrency));
                }
                if p.queue_depth > 0 {
                    s.push_str(&format!("+{}q", p.queue_depth));
                }
                if !p.ready {
                    s.push_str(" unready");
                }
                s
            })
            .collect();
        line(&format!(
            "load {} · {} · in flight {}",
            status::clock(t_s, total_s),
            status::summary(obs),
            pods.join(", ")
        ));
    }
}

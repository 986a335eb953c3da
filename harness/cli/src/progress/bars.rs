//! Terminal progress with indicatif: a main bar for the phase (a spinner during deploy and
//! warm-up; during the load the elapsed share of it, time left, achieved rate, error rate,
//! pods ready and hints), and one bar per pod of its requests in flight against the
//! sidecar's limit (red at the limit), added and removed as pods come and go. Notes print
//! above the bars.

use std::sync::Mutex;
use std::time::Duration;

use harness_core::engine::{Observation, PodObservation};
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

use super::status;

pub struct Bars {
    multi: MultiProgress,
    state: Mutex<State>,
}

struct State {
    main: ProgressBar,
    pods: Vec<(String, ProgressBar)>,
    loading: bool,
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("█░")
}

fn spinner_style() -> ProgressStyle {
    style("{spinner:.cyan} {prefix:.bold} {elapsed:>4} {msg}")
}

fn load_style() -> ProgressStyle {
    style("{prefix:.bold} ▕{bar:30.cyan/blue}▏ {msg}")
}

fn pod_style(saturated: bool) -> ProgressStyle {
    if saturated {
        style("  {prefix:<10} ▕{bar:20.red/white}▏ {msg}")
    } else {
        style("  {prefix:<10} ▕{bar:20.green/white}▏ {msg}")
    }
}

impl Bars {
    pub fn new() -> Self {
        let multi = MultiProgress::new();
        let main = multi.add(ProgressBar::new_spinner());
        main.set_style(spinner_style());
        main.enable_steady_tick(Duration::from_millis(120));
        Self {
            multi,
            state: Mutex::new(State {
                main,
                pods: Vec::new(),
                loading: false,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn phase(&self, name: &str) {
        let mut s = self.lock();
        s.main.set_prefix(name.to_string());
        s.loading = name == "load";
        if s.loading {
            s.main.disable_steady_tick();
            s.main.set_style(load_style());
        } else {
            s.main.set_style(spinner_style());
            s.main.set_message("");
            s.main.enable_steady_tick(Duration::from_millis(120));
        }
        if matches!(name, "collect" | "teardown") {
            for (_, bar) in s.pods.drain(..) {
                bar.finish_and_clear();
                self.multi.remove(&bar);
            }
        }
    }

    pub fn note(&self, message: &str) {
        let _ = self.multi.println(message);
    }

    pub fn tick(&self, t_s: f64, total_s: f64, obs: &Observation) {
        let mut s = self.lock();
        if s.loading {
            s.main.set_length(total_s.ceil().max(1.0) as u64);
            s.main.set_position(t_s.max(0.0).floor() as u64);
            s.main.set_message(format!(
                "{} · {}",
                status::clock(t_s, total_s),
                status::summary(obs)
            ));
        } else {
            s.main.set_message(status::summary(obs));
        }
        self.sync_pods(&mut s, &obs.pods);
    }

    /// One bar per observed pod, in the observation's order.
    fn sync_pods(&self, s: &mut State, pods: &[PodObservation]) {
        s.pods.retain(|(name, bar)| {
            let keep = pods.iter().any(|p| &p.name == name);
            if !keep {
                bar.finish_and_clear();
                self.multi.remove(bar);
            }
            keep
        });
        for p in pods {
            let bar = match s.pods.iter().find(|(name, _)| name == &p.name) {
                Some((_, bar)) => bar.clone(),
                None => {
                    let bar = self.multi.add(ProgressBar::new(1));
                    bar.set_prefix(p.name.clone());
                    s.pods.push((p.name.clone(), bar.clone()));
                    bar
                }
            };
            let limit = p.max_concurrency.max(1);
            bar.set_style(pod_style(
                p.max_concurrency > 0 && p.in_flight >= p.max_concurrency,
            ));
            bar.set_length(limit);
            bar.set_position(p.in_flight.min(limit));
            bar.set_message(format!("{} · {}", status::pod_load(p), p.zone));
        }
    }

    pub fn finish(&self) {
        let mut s = self.lock();
        for (_, bar) in s.pods.drain(..) {
            bar.finish_and_clear();
        }
        s.main.finish_and_clear();
        let _ = self.multi.clear();
    }
}

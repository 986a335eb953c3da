//! Error rates, latency, hint flaps, saturation and rejection rates over a window.

use std::collections::BTreeMap;

use workload_contract::loadgen::{StatusCode, TransportError};

use super::{EventKind, Measured, RunData, Window};

/// Whether a `responses` key is a 2xx status (a key that is no status code is not).
pub fn is_success_key(key: &str) -> bool {
    key.parse::<StatusCode>().is_ok_and(StatusCode::is_success)
}

/// Whether a `responses` key is a 5xx status.
pub fn is_server_error_key(key: &str) -> bool {
    key.parse::<StatusCode>()
        .is_ok_and(StatusCode::is_server_error)
}

/// Request outcomes summed over generators inside a window: responses by status code and
/// transport errors by kind, keyed as the loadgen report keys them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcomes {
    pub attempted: u64,
    pub responses: BTreeMap<String, u64>,
    pub transport_errors: BTreeMap<String, u64>,
    pub dropped: u64,
}

impl Outcomes {
    pub fn non_2xx(&self) -> u64 {
        self.responses
            .iter()
            .filter(|(code, _)| !is_success_key(code))
            .map(|(_, n)| n)
            .sum()
    }

    pub fn http_5xx(&self) -> u64 {
        self.responses
            .iter()
            .filter(|(code, _)| is_server_error_key(code))
            .map(|(_, n)| n)
            .sum()
    }

    /// Transport errors of one kind.
    pub fn transport_of(&self, kind: TransportError) -> u64 {
        self.transport_errors
            .get(kind.as_str())
            .copied()
            .unwrap_or(0)
    }

    pub fn transport(&self) -> u64 {
        self.transport_errors.values().sum()
    }

    pub fn errors(&self) -> u64 {
        self.non_2xx() + self.transport()
    }

    fn describe(&self) -> String {
        let mut parts: Vec<String> = self
            .responses
            .iter()
            .filter(|(code, _)| !is_success_key(code))
            .map(|(code, n)| format!("{n}× {code}"))
            .collect();
        parts.extend(
            self.transport_errors
                .iter()
                .filter(|(_, n)| **n > 0)
                .map(|(kind, n)| format!("{n}× {kind}")),
        );
        if parts.is_empty() {
            format!("no errors in {} attempts", self.attempted)
        } else {
            format!(
                "{} of {} attempts failed: {}",
                self.errors(),
                self.attempted,
                parts.join(", ")
            )
        }
    }
}

/// Sums every generator's per-second rows inside `window`.
pub fn outcomes(run: &RunData, window: Window) -> Outcomes {
    let mut out = Outcomes::default();
    for (_, second, row) in run.load_seconds() {
        if !window.has_second(second) {
            continue;
        }
        out.attempted += row.attempted;
        out.dropped += row.dropped;
        for (code, n) in &row.responses {
            *out.responses.entry(code.clone()).or_default() += n;
        }
        for (kind, n) in &row.transport_errors {
            *out.transport_errors.entry(kind.clone()).or_default() += n;
        }
    }
    out
}

fn rate(numerator: u64, o: &Outcomes) -> Measured {
    Measured {
        value: (o.attempted > 0).then(|| numerator as f64 / o.attempted as f64),
        evidence: o.describe(),
    }
}

/// Non-2xx responses plus transport errors over attempts.
pub fn error_rate(run: &RunData, window: Window) -> Measured {
    let o = outcomes(run, window);
    rate(o.errors(), &o)
}

/// 5xx responses over attempts.
pub fn http_5xx_rate(run: &RunData, window: Window) -> Measured {
    let o = outcomes(run, window);
    rate(o.http_5xx(), &o)
}

/// Transport errors (refused, reset, timeout, other) over attempts.
pub fn transport_error_rate(run: &RunData, window: Window) -> Measured {
    let o = outcomes(run, window);
    rate(o.transport(), &o)
}

/// Client timeouts over attempts: requests that hung instead of failing fast.
pub fn timeout_rate(run: &RunData, window: Window) -> Measured {
    let o = outcomes(run, window);
    rate(o.transport_of(TransportError::Timeout), &o)
}

/// p99 latency in seconds. Per-generator-second p99s are all the window data keeps, so this is
/// their maximum: an upper bound of the window's true p99 (each second has ≤ 1% above its p99).
pub fn latency_p99(run: &RunData, window: Window) -> Measured {
    let worst = run
        .load_seconds()
        .filter(|(_, second, _)| window.has_second(*second))
        .filter_map(|(g, second, row)| row.latency_ms_p99.map(|p| (p, g.name.as_str(), second)))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match worst {
        Some((ms, generator, second)) => Measured {
            value: Some(ms / 1000.0),
            evidence: format!("worst p99 {ms:.1} ms ({generator}, second {second})"),
        },
        None => Measured {
            value: None,
            evidence: "no responses in the window".into(),
        },
    }
}

/// A change of the Service's topology hints between enabled and disabled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HintSwitch {
    pub t_s: f64,
    pub enabled: bool,
}

/// The hints' switches between enabled and disabled, one per instant: changes recorded at the
/// same instant (one timeline action that deletes a pod and creates its replacement, say) are
/// what one sync of the EndpointSlice controller would see, so only their net effect counts.
pub fn hint_switches(run: &RunData) -> Vec<HintSwitch> {
    let mut switches: Vec<HintSwitch> = Vec::new();
    let mut state: Option<bool> = None;
    let mut i = 0;
    while i < run.events.len() {
        let t = run.events[i].t_s;
        let mut last = None;
        while i < run.events.len() && run.events[i].t_s == t {
            if let EventKind::Hints { enabled, .. } = run.events[i].kind {
                last = Some(enabled);
            }
            i += 1;
        }
        if let Some(enabled) = last {
            if state.is_some_and(|s| s != enabled) {
                switches.push(HintSwitch { t_s: t, enabled });
            }
            state = Some(enabled);
        }
    }
    switches
}

/// Switches of the hints between enabled and disabled in the window, each with how long the
/// new state lasted.
pub fn hint_flaps(run: &RunData, window: Window) -> Measured {
    let switches = hint_switches(run);
    let mut told = Vec::new();
    for (i, s) in switches.iter().enumerate() {
        if !window.has_instant(s.t_s) {
            continue;
        }
        let lasted = match switches.get(i + 1) {
            Some(next) => format!("for {:.1}s", next.t_s - s.t_s),
            None => format!("for {:.1}s, to the end", (run.duration_s - s.t_s).max(0.0)),
        };
        told.push(format!(
            "{} at {:.1}s ({lasted})",
            if s.enabled { "on" } else { "off" },
            s.t_s
        ));
    }
    Measured {
        value: Some(told.len() as f64),
        evidence: if told.is_empty() {
            "hints never switched".into()
        } else {
            format!("hints switched {}", told.join(", "))
        },
    }
}

/// Highest in-flight ÷ concurrency limit seen at any sidecar in the window.
pub fn max_saturation(run: &RunData, window: Window) -> Measured {
    let mut worst: Option<(f64, &str, f64, u64)> = None;
    for pod in &run.pods {
        if pod.max_concurrency == 0 {
            continue;
        }
        for s in pod.samples.iter().filter(|s| window.has_instant(s.t_s)) {
            let ratio = s.in_flight as f64 / pod.max_concurrency as f64;
            if worst.is_none_or(|w| ratio > w.0) {
                worst = Some((ratio, &pod.name, s.t_s, s.queue_depth));
            }
        }
    }
    match worst {
        Some((ratio, pod, t, queue)) => Measured {
            value: Some(ratio),
            evidence: format!(
                "{pod} at {:.0}% of its limit at {t:.1}s (queue {queue})",
                ratio * 100.0
            ),
        },
        None => Measured {
            value: None,
            evidence: "no sidecar samples in the window".into(),
        },
    }
}

/// Sidecar rejections (queue full or timed out) over requests offered to the sidecars.
pub fn rejected_rate(run: &RunData, window: Window) -> Measured {
    let (mut admitted, mut full, mut timeout) = (0u64, 0u64, 0u64);
    for pod in &run.pods {
        let first = counter_at(&pod.samples, window.from_s);
        let last = counter_at(&pod.samples, window.to_s);
        admitted += last.0.saturating_sub(first.0);
        full += last.1.saturating_sub(first.1);
        timeout += last.2.saturating_sub(first.2);
    }
    let offered = admitted + full + timeout;
    Measured {
        value: (offered > 0).then(|| (full + timeout) as f64 / offered as f64),
        evidence: format!(
            "{full} rejected queue-full, {timeout} queue-timeout, {admitted} admitted"
        ),
    }
}

/// Cumulative (admitted, queue_full, queue_timeout) at the last sample at or before `t_s`.
fn counter_at(samples: &[super::PodSample], t_s: f64) -> (u64, u64, u64) {
    samples
        .iter()
        .take_while(|s| s.t_s <= t_s)
        .last()
        .map(|s| (s.admitted, s.rejected_queue_full, s.rejected_queue_timeout))
        .unwrap_or((0, 0, 0))
}

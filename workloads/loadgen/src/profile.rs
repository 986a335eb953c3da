//! Arrival schedules: when request *i* is meant to be sent.
//!
//! A rate profile is a piecewise-linear rate function r(t) over the run's duration (a constant
//! rate is one flat segment, `--rate A:B` one sloped segment, `--schedule` one flat segment per
//! step). The cumulative count N(t) = ∫₀ᵗ r is what decides the arrivals: request *i* (0-based) is
//! intended at the t where N(t) = i, so at a constant rate R request *i* is at i/R. The run
//! schedules every *i* with an intended time before the end of the duration.
//!
//! Step schedule files (`--schedule FILE`) come in two spellings:
//!
//! ```text
//! # plain text: "<offset> <requests per second>" per line; '#' starts a comment
//! 0s   100
//! 10s  500
//! 20s  0      # silence from 20 s on
//! ```
//!
//! ```json
//! {"steps": [{"at": "0s", "rps": 100}, {"at": "10s", "rps": 500}]}
//! ```
//!
//! Offsets are humantime durations (`1m30s`, `500ms`) or plain numbers of seconds. Each step holds
//! its rate until the next step or the end of the run; before the first step the rate is 0.

use std::time::Duration;

use serde::Deserialize;

/// One step of a step schedule: from `at` (offset from the start) on, send `rps` per second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    pub at: Duration,
    pub rps: f64,
}

/// One linear piece of the rate function.
#[derive(Debug, Clone, Copy)]
struct Segment {
    start: f64,
    len: f64,
    r0: f64,
    r1: f64,
    /// Arrivals before this segment, N(start).
    before: f64,
}

impl Segment {
    fn count(&self) -> f64 {
        (self.r0 + self.r1) * 0.5 * self.len
    }

    /// Offset inside the segment at which the cumulative count reaches `y` (0 ≤ y ≤ count).
    fn offset_of(&self, y: f64) -> f64 {
        if y <= 0.0 {
            return 0.0;
        }
        // n(τ) = r0·τ + a·τ², a = (r1 − r0) / (2·len); the root in the numerically stable form
        // τ = 2y / (r0 + √(r0² + 4ay)) also covers a = 0 and falling ramps.
        let a4 = 2.0 * (self.r1 - self.r0) / self.len;
        let disc = (self.r0 * self.r0 + a4 * y).max(0.0);
        let denom = self.r0 + disc.sqrt();
        if denom <= 0.0 {
            return self.len;
        }
        (2.0 * y / denom).clamp(0.0, self.len)
    }
}

/// A rate function over a fixed duration, answering "when is arrival *i*".
#[derive(Debug, Clone)]
pub struct RateProfile {
    segments: Vec<Segment>,
    total: u64,
}

impl RateProfile {
    /// `rps` requests per second for `duration`.
    pub fn constant(rps: f64, duration: Duration) -> Self {
        Self::ramp(rps, rps, duration)
    }

    /// A rate rising (or falling) linearly from `from` to `to` over `duration`.
    pub fn ramp(from: f64, to: f64, duration: Duration) -> Self {
        Self::from_pieces(vec![(0.0, duration.as_secs_f64(), from, to)])
    }

    /// A step profile cut at `duration`. Steps must be sorted by `at`.
    pub fn steps(steps: &[Step], duration: Duration) -> Self {
        let end = duration.as_secs_f64();
        let mut pieces = Vec::with_capacity(steps.len());
        for (k, step) in steps.iter().enumerate() {
            let start = step.at.as_secs_f64().min(end);
            let stop = steps
                .get(k + 1)
                .map_or(end, |next| next.at.as_secs_f64().min(end));
            pieces.push((start, stop - start, step.rps, step.rps));
        }
        Self::from_pieces(pieces)
    }

    fn from_pieces(pieces: Vec<(f64, f64, f64, f64)>) -> Self {
        let mut segments = Vec::with_capacity(pieces.len());
        let mut before = 0.0;
        for (start, len, r0, r1) in pieces {
            if len <= 0.0 || (r0 <= 0.0 && r1 <= 0.0) {
                continue;
            }
            let seg = Segment {
                start,
                len,
                r0: r0.max(0.0),
                r1: r1.max(0.0),
                before,
            };
            before += seg.count();
            segments.push(seg);
        }
        // Arrival i is scheduled when N(t_i) = i < N(end); the epsilon keeps an exact integer
        // total (100 rps × 10 s = 1000) from gaining a phantom arrival through rounding.
        let total = (before - 1e-9).ceil().max(0.0) as u64;
        Self { segments, total }
    }

    /// Number of arrivals scheduled in the whole duration.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Intended offset of arrival `i` from the start of the run (`i < total()`; later indices are
    /// clamped to the end of the last segment).
    pub fn offset(&self, i: u64) -> Duration {
        let x = i as f64;
        let k = self
            .segments
            .partition_point(|s| s.before <= x)
            .saturating_sub(1);
        match self.segments.get(k) {
            Some(seg) => Duration::from_secs_f64(seg.start + seg.offset_of(x - seg.before)),
            None => Duration::ZERO,
        }
    }
}

/// Parses a step schedule (plain text or JSON, see the module doc).
pub fn parse_schedule(text: &str) -> Result<Vec<Step>, String> {
    let trimmed = text.trim_start();
    let steps = if trimmed.starts_with('{') || trimmed.starts_with('[') {
        parse_json(trimmed)?
    } else {
        parse_text(text)?
    };
    validate_steps(&steps)?;
    Ok(steps)
}

fn parse_text(text: &str) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [at, rps] = fields.as_slice() else {
            return Err(format!(
                "line {}: expected \"<offset> <rps>\", got {line:?}",
                n + 1
            ));
        };
        let at = parse_offset(at).map_err(|e| format!("line {}: {e}", n + 1))?;
        let rps = rps
            .parse::<f64>()
            .map_err(|_| format!("line {}: {rps:?} is not a rate", n + 1))?;
        steps.push(Step { at, rps });
    }
    Ok(steps)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonSchedule {
    steps: Vec<JsonStep>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonStep {
    at: JsonOffset,
    rps: f64,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum JsonOffset {
    Seconds(f64),
    Text(String),
}

fn parse_json(text: &str) -> Result<Vec<Step>, String> {
    let raw: Vec<JsonStep> = if text.starts_with('[') {
        serde_json::from_str(text).map_err(|e| e.to_string())?
    } else {
        serde_json::from_str::<JsonSchedule>(text)
            .map_err(|e| e.to_string())?
            .steps
    };
    raw.into_iter()
        .map(|s| {
            let at = match s.at {
                JsonOffset::Seconds(secs) => seconds(secs)?,
                JsonOffset::Text(t) => parse_offset(&t)?,
            };
            Ok(Step { at, rps: s.rps })
        })
        .collect()
}

fn seconds(secs: f64) -> Result<Duration, String> {
    Duration::try_from_secs_f64(secs).map_err(|_| format!("{secs} is not a valid offset"))
}

fn parse_offset(s: &str) -> Result<Duration, String> {
    match s.parse::<f64>() {
        Ok(secs) => seconds(secs),
        Err(_) => humantime::parse_duration(s).map_err(|e| format!("offset {s:?}: {e}")),
    }
}

fn validate_steps(steps: &[Step]) -> Result<(), String> {
    if steps.is_empty() {
        return Err("the schedule has no steps".into());
    }
    for (k, step) in steps.iter().enumerate() {
        if !step.rps.is_finite() || step.rps < 0.0 {
            return Err(format!(
                "step {}: rate {} must be a finite number ≥ 0",
                k + 1,
                step.rps
            ));
        }
        if k > 0 && step.at <= steps[k - 1].at {
            return Err(format!(
                "step {}: offsets must increase ({:?} after {:?})",
                k + 1,
                step.at,
                steps[k - 1].at
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(d: Duration) -> f64 {
        d.as_secs_f64() * 1000.0
    }

    #[test]
    fn constant_rate_is_evenly_spaced() {
        let p = RateProfile::constant(100.0, Duration::from_secs(10));
        assert_eq!(p.total(), 1000);
        assert_eq!(p.offset(0), Duration::ZERO);
        assert!((ms(p.offset(1)) - 10.0).abs() < 1e-6);
        assert!((ms(p.offset(999)) - 9990.0).abs() < 1e-6);
    }

    #[test]
    fn fractional_totals_round_up() {
        // 3 rps for 1.5 s: N(end) = 4.5, arrivals at 0, 1/3, 2/3, 1, 4/3 s.
        let p = RateProfile::constant(3.0, Duration::from_millis(1500));
        assert_eq!(p.total(), 5);
        assert!((ms(p.offset(4)) - 1333.333).abs() < 0.01);
    }

    #[test]
    fn ramp_integrates_the_rate() {
        // 0 → 200 rps over 10 s: N(t) = 10 t², N(10) = 1000; arrival 250 at t = 5 s.
        let p = RateProfile::ramp(0.0, 200.0, Duration::from_secs(10));
        assert_eq!(p.total(), 1000);
        assert_eq!(p.offset(0), Duration::ZERO);
        assert!((ms(p.offset(250)) - 5000.0).abs() < 1e-3);
        assert!((ms(p.offset(10)) - 1000.0).abs() < 1e-3);
        // Falling ramp 200 → 0: N(t) = 200t − 10t², arrival 750 at t = 5 s.
        let down = RateProfile::ramp(200.0, 0.0, Duration::from_secs(10));
        assert_eq!(down.total(), 1000);
        assert!((ms(down.offset(750)) - 5000.0).abs() < 1e-3);
    }

    #[test]
    fn steps_hold_until_the_next_and_cut_at_the_duration() {
        let steps = parse_schedule("# warm up\n0s 10\n2s 0   # pause\n3s 100\n").unwrap();
        assert_eq!(steps.len(), 3);
        let p = RateProfile::steps(&steps, Duration::from_secs(4));
        // 2 s at 10 rps + 1 s at 0 + 1 s at 100 rps.
        assert_eq!(p.total(), 120);
        assert!((ms(p.offset(19)) - 1900.0).abs() < 1e-6);
        assert!((ms(p.offset(20)) - 3000.0).abs() < 1e-6);
        assert!((ms(p.offset(119)) - 3990.0).abs() < 1e-6);
    }

    #[test]
    fn json_schedules_parse() {
        let steps = parse_schedule(r#"{"steps": [{"at": "0s", "rps": 5}, {"at": 1.5, "rps": 7}]}"#)
            .unwrap();
        assert_eq!(
            steps,
            vec![
                Step {
                    at: Duration::ZERO,
                    rps: 5.0
                },
                Step {
                    at: Duration::from_millis(1500),
                    rps: 7.0
                }
            ]
        );
        let bare = parse_schedule(r#"[{"at": "250ms", "rps": 1}]"#).unwrap();
        assert_eq!(bare[0].at, Duration::from_millis(250));
        // No arrivals before the first step.
        let p = RateProfile::steps(&bare, Duration::from_millis(1250));
        assert_eq!(p.total(), 1);
        assert_eq!(p.offset(0), Duration::from_millis(250));
    }

    #[test]
    fn bad_schedules_are_rejected_with_the_line() {
        let err = parse_schedule("0s 10\n1s\n").unwrap_err();
        assert!(err.contains("line 2"), "{err}");
        assert!(parse_schedule("0s 10\n0s 20\n").is_err());
        assert!(parse_schedule("0s -1\n").is_err());
        assert!(parse_schedule("\n# nothing\n").is_err());
        assert!(parse_schedule(r#"{"steps": [{"at": "0s", "rate": 1}]}"#).is_err());
    }
}

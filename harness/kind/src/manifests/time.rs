//! The scenario's durations (Kubernetes time) at the run's time scale, as the whole seconds
//! Kubernetes fields hold (`periodSeconds`, `terminationGracePeriodSeconds`, `minReadySeconds`,
//! the preStop `sleep.seconds`, HPA `behavior` windows...). A value that does not scale to a
//! whole number of seconds at least the field's minimum is refused with the field, the scaled
//! value and a time scale that would work — never rounded, since rounding would change the
//! ratios the time scale keeps. [`Timings`] collects what a run used, for the report.

use std::fmt;
use std::time::Duration;

use harness_core::clock::TimeScale;

/// How far from a whole number a scaled value may be (floating-point error of the product).
const WHOLE_EPSILON: f64 = 1e-6;

/// A duration that Kubernetes cannot hold at this time scale.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{field}: {kubernetes} at time scale {scale} is {scaled} s, but Kubernetes holds it in whole seconds, at least {min}; {fix}"
)]
pub struct UnscalableSeconds {
    /// The scenario field, e.g. `service.readinessProbe.period`.
    pub field: String,
    /// The scenario's value, e.g. `10s`.
    pub kubernetes: String,
    /// The time scale, as given (`0.05`).
    pub scale: String,
    /// The value at the scale, in seconds (`0.5`).
    pub scaled: String,
    pub min: i64,
    /// What to do instead.
    pub fix: String,
}

fn show(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

/// The smallest time scale at least `scale` (and at most 1) at which `d` is a whole number of
/// seconds no less than `min`.
fn working_scale(d: Duration, scale: f64, min: i64) -> Option<f64> {
    let secs = d.as_secs_f64();
    if secs <= 0.0 {
        return None;
    }
    let needed = (secs * scale - WHOLE_EPSILON).ceil().max(min as f64);
    // As it would be typed (four decimals): only if that makes a whole number too.
    let candidate: f64 = trim(needed / secs).parse().ok()?;
    let product = secs * candidate;
    let whole = (product - product.round()).abs() <= WHOLE_EPSILON;
    (candidate <= 1.0 && whole).then_some(candidate)
}

/// `d` of `field` at `scale` in whole seconds, refused when it is not whole or below `min`.
pub fn whole_seconds(
    field: &str,
    d: Duration,
    scale: TimeScale,
    min: i64,
) -> Result<i64, Box<UnscalableSeconds>> {
    let scaled = d.as_secs_f64() * scale.factor();
    let whole = scaled.round();
    if (scaled - whole).abs() <= WHOLE_EPSILON && whole >= min as f64 {
        return Ok(whole as i64);
    }
    let fix = match working_scale(d, scale.factor(), min) {
        Some(s) if (s - 1.0).abs() > WHOLE_EPSILON => format!(
            "run at a time scale where it is whole (e.g. --time-scale {}) or at --time-scale 1, or change {field}",
            trim(s)
        ),
        _ => format!("run at --time-scale 1, or write {field} in whole seconds (at least {min})"),
    };
    Err(Box::new(UnscalableSeconds {
        field: field.to_owned(),
        kubernetes: show(d),
        scale: trim(scale.factor()),
        scaled: trim(scaled),
        min,
        fix,
    }))
}

/// A factor printed without float noise (`0.1`, not `0.1000000000000000055`).
fn trim(s: f64) -> String {
    let text = format!("{s:.4}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// The real timings a run on kind used: each scenario duration as written and as the cluster
/// runs it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timings {
    pub scale: f64,
    /// (what, the scenario's value, the value in the cluster).
    pub entries: Vec<(String, Duration, Duration)>,
}

impl Timings {
    pub fn new(scale: TimeScale) -> Self {
        Timings {
            scale: scale.factor(),
            entries: Vec::new(),
        }
    }

    pub fn push(&mut self, what: &str, kubernetes: Duration, real: Duration) {
        self.entries.push((what.to_owned(), kubernetes, real));
    }
}

impl fmt::Display for Timings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "real timings on kind at time scale {}:",
            trim(self.scale)
        )?;
        for (i, (what, k, real)) in self.entries.iter().enumerate() {
            let sep = if i == 0 { " " } else { ", " };
            write!(f, "{sep}{what} {} (scenario {})", show(*real), show(*k))?;
        }
        if self.entries.is_empty() {
            f.write_str(" no scenario durations")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scale(f: f64) -> TimeScale {
        TimeScale::new(f).unwrap()
    }

    #[test]
    fn whole_values_scale_and_others_are_refused_with_a_scale_that_works() {
        let s = Duration::from_secs;
        assert_eq!(whole_seconds("p", s(10), scale(0.1), 1), Ok(1));
        assert_eq!(whole_seconds("g", s(60), scale(0.1), 0), Ok(6));
        assert_eq!(whole_seconds("g", s(0), scale(0.1), 0), Ok(0));
        assert_eq!(whole_seconds("p", s(30), TimeScale::REAL, 1), Ok(30));
        let e = whole_seconds("service.readinessProbe.period", s(10), scale(0.05), 1).unwrap_err();
        assert_eq!(e.scaled, "0.5");
        assert_eq!(e.min, 1);
        assert!(e.fix.contains("--time-scale 0.1"), "{}", e.fix);
        let text = e.to_string();
        assert!(
            text.starts_with("service.readinessProbe.period: 10s at time scale 0.05 is 0.5 s"),
            "{text}"
        );
        // 25 s × 0.1 = 2.5 s: the next whole value, 3 s, needs 0.12.
        let e = whole_seconds("x", s(25), scale(0.1), 0).unwrap_err();
        assert!(e.fix.contains("--time-scale 0.12"), "{}", e.fix);
        // 30 s needs 1/15 for 2 s: not a scale one can type; the general advice instead.
        let e = whole_seconds("g", s(30), scale(0.05), 0).unwrap_err();
        assert!(e.fix.starts_with("run at --time-scale 1"), "{}", e.fix);
        // Not whole even at scale 1.
        let e = whole_seconds("x", Duration::from_millis(1500), TimeScale::REAL, 1).unwrap_err();
        assert!(e.fix.contains("whole seconds"), "{}", e.fix);
    }

    #[test]
    fn timings_read_as_a_note() {
        let mut t = Timings::new(scale(0.1));
        t.push(
            "preStop sleep",
            Duration::from_secs(30),
            Duration::from_secs(3),
        );
        t.push(
            "registration lag",
            Duration::from_secs(5),
            Duration::from_millis(500),
        );
        assert_eq!(
            t.to_string(),
            "real timings on kind at time scale 0.1: preStop sleep 3s (scenario 30s), registration lag 500ms (scenario 5s)"
        );
    }
}

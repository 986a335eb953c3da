// Ported from kubernetes/kubernetes v1.34 (release-1.34 line; source read at
// staging/src/k8s.io/apimachinery/pkg/util/intstr/intstr.go (GetScaledValueFromIntOrPercent,
// getIntOrPercentValueSafely) and intstr_test.go @316eff8dee1b).
//! `maxSurge` / `maxUnavailable` values: an integer or a percentage, scaled against the desired
//! replica count the way `intstr.GetScaledValueFromIntOrPercent` does it.
//!
//! Upstream keeps the raw `IntOrString` and fails at use time on a string that is not a
//! percentage ("200", "40%%", "a%"). Here the string form is checked once, by
//! [`IntOrPercent::parse`], with the same acceptance rules; scaling a parsed value cannot fail.
//! Percentages scale in `f64` exactly as upstream does (`value * total / 100`, then `Ceil` when
//! rounding up, `Floor` when rounding down), so 39% of 10 is 4 rounded up and 3 rounded down.

use std::fmt;

/// An `IntOrString` that passed upstream's validation: a plain integer or a percentage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IntOrPercent {
    /// `intstr.FromInt32(n)`: used as is, never scaled.
    Int(i32),
    /// `intstr.FromString("n%")`: `n` percent of the total.
    Percent(i32),
}

/// Why a string is not a valid `IntOrString` percentage (upstream's error texts).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IntOrPercentError {
    #[error("invalid value for IntOrString: invalid type: string is not a percentage")]
    NotAPercentage(String),
    #[error("invalid value for IntOrString: invalid value {0:?}")]
    InvalidNumber(String),
}

impl IntOrPercent {
    /// A percentage, `percent%`.
    pub const fn percent(percent: i32) -> Self {
        IntOrPercent::Percent(percent)
    }

    /// The string form of an `IntOrString` (`intstr.FromString`), checked like upstream's
    /// `getIntOrPercentValueSafely`: it must end in exactly one `%` preceded by a decimal
    /// integer (an optional sign is accepted, as Go's `strconv.Atoi` does). A bare number in
    /// string form ("200") is rejected: upstream only treats `Int`-typed values as integers.
    pub fn parse(s: &str) -> Result<Self, IntOrPercentError> {
        let Some(number) = s.strip_suffix('%') else {
            return Err(IntOrPercentError::NotAPercentage(s.to_owned()));
        };
        parse_go_atoi(number)
            .map(IntOrPercent::Percent)
            .ok_or_else(|| IntOrPercentError::InvalidNumber(s.to_owned()))
    }

    /// `GetScaledValueFromIntOrPercent(v, total, roundUp)`.
    pub fn scaled_value(&self, total: i32, round_up: bool) -> i32 {
        match *self {
            IntOrPercent::Int(n) => n,
            IntOrPercent::Percent(p) => {
                let exact = f64::from(p) * f64::from(total) / 100.0;
                let rounded = if round_up {
                    exact.ceil()
                } else {
                    exact.floor()
                };
                // Go's int(float64) conversion; values here are small enough to fit.
                rounded as i32
            }
        }
    }
}

impl fmt::Display for IntOrPercent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IntOrPercent::Int(n) => write!(f, "{n}"),
            IntOrPercent::Percent(p) => write!(f, "{p}%"),
        }
    }
}

/// `strconv.Atoi` for base-10 input: optional sign, then at least one ASCII digit.
fn parse_go_atoi(s: &str) -> Option<i32> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse::<i32>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_rounding_follows_go_float_math() {
        let p = IntOrPercent::parse("39%").unwrap();
        assert_eq!(p.scaled_value(10, true), 4);
        assert_eq!(p.scaled_value(10, false), 3);
        assert_eq!(IntOrPercent::percent(25).scaled_value(12, true), 3);
        assert_eq!(IntOrPercent::percent(25).scaled_value(12, false), 3);
        assert_eq!(IntOrPercent::percent(25).scaled_value(10, true), 3);
        assert_eq!(IntOrPercent::percent(25).scaled_value(10, false), 2);
        assert_eq!(IntOrPercent::Int(7).scaled_value(100, false), 7);
    }

    #[test]
    fn display_round_trips() {
        for s in ["25%", "0%", "-5%"] {
            assert_eq!(IntOrPercent::parse(s).unwrap().to_string(), s);
        }
        assert_eq!(IntOrPercent::Int(3).to_string(), "3");
    }

    #[test]
    fn rejects_what_atoi_rejects() {
        for s in ["%", "+%", "1_0%", " 5%", "5 %", "0x10%"] {
            assert!(IntOrPercent::parse(s).is_err(), "{s}");
        }
        assert_eq!(IntOrPercent::parse("+5%"), Ok(IntOrPercent::Percent(5)));
    }
}

//! Parsing of written values into typed ones: durations (`humantime`), CPU quantities
//! (millicores), rates, pod references, pod counts or percentages. Each returns a user-facing
//! message on failure.

use std::time::Duration;

use super::format::Scalar;
use super::model::{IntOrPercent, Rate};
use kube_model::quantity::{self, QuantityError};

/// Parses a duration such as `250ms`, `30s`, `1m 30s` or `0s`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    use humantime::DurationError;
    const LIKE: &str = "write it like \"250ms\", \"30s\" or \"1m 30s\"";
    humantime::parse_duration(text).map_err(|e| match e {
        DurationError::UnknownUnit { unit, .. } => format!(
            "invalid duration `{text}`: unknown unit `{unit}` (units: ns, us, ms, s, m, h, d); {LIKE}"
        ),
        DurationError::NumberOverflow => format!("duration `{text}` is too large"),
        _ => format!("invalid duration `{text}`; {LIKE}"),
    })
}

/// Formats a duration the way a user would write it (`1m 30s`, `250ms`, `0s`).
pub fn format_duration(d: Duration) -> String {
    if d.is_zero() {
        "0s".to_owned()
    } else {
        humantime::format_duration(d).to_string()
    }
}

/// Parses a Kubernetes CPU quantity into millicores (`Quantity.MilliValue()`, via
/// [`kube_model::quantity`]): `4` → 4000, `0.5` → 500, `3500m` → 3500, rounding up below a
/// millicore. A bare number may also be written unquoted. Negative quantities are rejected.
pub fn parse_cpu_millis(value: &Scalar) -> Result<u64, String> {
    let text = value.to_string();
    match quantity::parse_cpu_millis(&text) {
        Ok(millis) => u64::try_from(millis)
            .map_err(|_| format!("invalid CPU quantity `{text}`; it must not be negative")),
        Err(QuantityError::Overflow(_)) => Err(format!("CPU quantity `{text}` is too large")),
        Err(_) => Err(format!(
            "invalid CPU quantity `{text}`; write cores such as \"4\" or \"0.5\", or millicores such as \"3500m\""
        )),
    }
}

/// Parses a generator rate: a positive number, `max`, or a ramp `from:to`.
pub fn parse_rate(value: &Scalar) -> Result<Rate, String> {
    let invalid = |shown: &str| {
        format!(
            "invalid rate `{shown}`; expected a number of requests per second such as 200, \"max\", or a ramp such as \"100:1000\""
        )
    };
    match value {
        Scalar::Number(n) => match n.as_f64() {
            Some(rps) if rps > 0.0 && rps.is_finite() => Ok(Rate::PerSecond(rps)),
            _ => Err(format!(
                "invalid rate `{n}`; the rate must be more than 0 requests per second"
            )),
        },
        Scalar::Text(t) if t == "max" => Ok(Rate::Max),
        Scalar::Text(t) => {
            let (from, to) = t.split_once(':').ok_or_else(|| invalid(t))?;
            let parse = |s: &str| s.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0);
            match (parse(from), parse(to)) {
                (Some(0.0), Some(0.0)) => Err(format!(
                    "invalid ramp `{t}`; at least one end must be more than 0"
                )),
                (Some(from), Some(to)) => Ok(Rate::Ramp { from, to }),
                _ => Err(invalid(t)),
            }
        }
    }
}

/// Parses a pod reference: an index (`3`) or a name (`pod-3`).
pub fn parse_pod(value: &Scalar) -> Result<u32, String> {
    let index = match value {
        Scalar::Number(n) => n.as_u64().and_then(|i| u32::try_from(i).ok()),
        Scalar::Text(t) => t.strip_prefix("pod-").and_then(|i| i.parse::<u32>().ok()),
    };
    index.ok_or_else(|| {
        format!("invalid pod `{value}`; expected a pod index such as 3 or a name such as \"pod-3\"")
    })
}

/// Parses a pod count or percentage (`intstr`): a whole number `2` or a percentage `"25%"`.
pub fn parse_int_or_percent(value: &Scalar) -> Result<IntOrPercent, String> {
    let parsed = match value {
        Scalar::Number(n) => n
            .as_u64()
            .and_then(|i| u32::try_from(i).ok())
            .map(IntOrPercent::Int),
        Scalar::Text(t) => t
            .strip_suffix('%')
            .filter(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|digits| digits.parse::<u32>().ok())
            .map(IntOrPercent::Percent),
    };
    parsed.ok_or_else(|| {
        format!("invalid value `{value}`; expected a whole number such as 1 or a percentage such as \"25%\"")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Scalar {
        Scalar::Text(s.to_owned())
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("1m 30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
        assert_eq!(
            parse_duration("20xs"),
            Err("invalid duration `20xs`: unknown unit `xs` (units: ns, us, ms, s, m, h, d); write it like \"250ms\", \"30s\" or \"1m 30s\"".into())
        );
        assert_eq!(
            parse_duration("s"),
            Err("invalid duration `s`; write it like \"250ms\", \"30s\" or \"1m 30s\"".into())
        );
        assert_eq!(
            parse_duration("99999999999999999999999s"),
            Err("duration `99999999999999999999999s` is too large".into())
        );
        assert_eq!(format_duration(Duration::from_secs(90)), "1m 30s");
        assert_eq!(format_duration(Duration::ZERO), "0s");
    }

    #[test]
    fn cpu_quantities_in_millicores() {
        assert_eq!(parse_cpu_millis(&text("4")), Ok(4000));
        assert_eq!(parse_cpu_millis(&text("3500m")), Ok(3500));
        assert_eq!(parse_cpu_millis(&text("0.5")), Ok(500));
        assert_eq!(parse_cpu_millis(&text("1.25")), Ok(1250));
        assert_eq!(parse_cpu_millis(&text("0")), Ok(0));
        assert_eq!(parse_cpu_millis(&Scalar::Number(8.into())), Ok(8000));
        let half = serde_json::Number::from_f64(2.5).unwrap();
        assert_eq!(parse_cpu_millis(&Scalar::Number(half)), Ok(2500));
    }

    #[test]
    fn cpu_fractions_below_a_millicore_round_up() {
        assert_eq!(parse_cpu_millis(&text("0.0001")), Ok(1));
        assert_eq!(parse_cpu_millis(&text("100.5m")), Ok(101));
    }

    #[test]
    fn invalid_cpu_quantities() {
        for bad in ["", "4 cores", "4x", "1.2.3"] {
            let err = parse_cpu_millis(&text(bad)).unwrap_err();
            assert!(
                err.starts_with(&format!("invalid CPU quantity `{bad}`; write cores")),
                "{err}"
            );
        }
        assert_eq!(
            parse_cpu_millis(&Scalar::Number((-2).into())),
            Err("invalid CPU quantity `-2`; it must not be negative".to_owned())
        );
        assert_eq!(
            parse_cpu_millis(&text("1E18")),
            Err("CPU quantity `1E18` is too large".to_owned())
        );
    }

    #[test]
    fn rates() {
        assert_eq!(
            parse_rate(&Scalar::Number(200.into())),
            Ok(Rate::PerSecond(200.0))
        );
        assert_eq!(parse_rate(&text("max")), Ok(Rate::Max));
        assert_eq!(
            parse_rate(&text("100:1000")),
            Ok(Rate::Ramp {
                from: 100.0,
                to: 1000.0
            })
        );
        assert_eq!(
            parse_rate(&text("0:50.5")),
            Ok(Rate::Ramp {
                from: 0.0,
                to: 50.5
            })
        );
        assert!(
            parse_rate(&text("0:0"))
                .unwrap_err()
                .contains("at least one end")
        );
        assert!(
            parse_rate(&text("fast"))
                .unwrap_err()
                .starts_with("invalid rate `fast`")
        );
        assert!(parse_rate(&Scalar::Number(0.into())).is_err());
    }

    #[test]
    fn int_or_percent() {
        assert_eq!(
            parse_int_or_percent(&Scalar::Number(2.into())),
            Ok(IntOrPercent::Int(2))
        );
        assert_eq!(
            parse_int_or_percent(&text("25%")),
            Ok(IntOrPercent::Percent(25))
        );
        assert_eq!(
            parse_int_or_percent(&text("150%")),
            Ok(IntOrPercent::Percent(150))
        );
        for bad in ["25", "%", "2.5%", "-1%"] {
            assert!(parse_int_or_percent(&text(bad)).is_err(), "{bad}");
        }
        assert!(parse_int_or_percent(&Scalar::Number((-1).into())).is_err());
    }

    #[test]
    fn pods() {
        assert_eq!(parse_pod(&Scalar::Number(3.into())), Ok(3));
        assert_eq!(parse_pod(&text("pod-12")), Ok(12));
        assert!(parse_pod(&text("web-1")).is_err());
        assert!(parse_pod(&Scalar::Number((-1).into())).is_err());
    }
}

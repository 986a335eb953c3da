//! `--max-regression METRIC=VALUE`: the bound a compared metric may worsen by, parsed with
//! its value in the metric's unit.

/// A bad `--max-regression`.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum BoundError {
    #[error("`{0}` is not METRIC=VALUE (e.g. `errorRate=0.01`)")]
    Syntax(String),
    #[error(
        "`{text}`: `{value}` is not a value of 0 or more (a number in the metric's unit, a percentage such as `1%`, or a duration such as `5ms`)"
    )]
    Value { text: String, value: String },
    #[error("--max-regression {metric}: no such compared metric; compared here: {known}")]
    UnknownMetric { metric: String, known: String },
    #[error("--max-regression {metric}: it has no better direction (it is shown, never gated)")]
    NoDirection { metric: String },
}

/// `--max-regression METRIC=VALUE`.
#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    pub metric: String,
    pub value: f64,
}

impl Bound {
    pub fn parse(text: &str) -> Result<Bound, BoundError> {
        let (metric, value) = text
            .split_once('=')
            .filter(|(m, v)| !m.trim().is_empty() && !v.trim().is_empty())
            .ok_or_else(|| BoundError::Syntax(text.to_owned()))?;
        let metric = metric.trim();
        let number = bound_value(metric, value.trim())
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| BoundError::Value {
                text: text.to_owned(),
                value: value.trim().to_owned(),
            })?;
        Ok(Bound {
            metric: metric.to_owned(),
            value: number,
        })
    }
}

/// A bound's value in `metric`'s unit, written as expectations are: a plain number, a
/// percentage (`1%` is 0.01, as rates are fractions) or a duration (`5ms`: milliseconds for
/// the `…Ms` metrics, else seconds, the base unit of spans of time).
fn bound_value(metric: &str, value: &str) -> Option<f64> {
    if let Ok(number) = value.parse::<f64>() {
        return Some(number);
    }
    if let Some(percent) = value.strip_suffix('%') {
        return percent.trim().parse::<f64>().ok().map(|p| p / 100.0);
    }
    let span = crate::scenario::units::parse_duration(value).ok()?;
    Some(if metric.ends_with("Ms") {
        span.as_secs_f64() * 1000.0
    } else {
        span.as_secs_f64()
    })
}

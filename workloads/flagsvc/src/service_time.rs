//! How long a flag lookup takes: a fixed delay, an exponentially distributed delay with a mean,
//! or CPU-bound work (a busy loop on a blocking thread, so the service really consumes CPU).

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, Instant};

use rand::Rng;

/// The service-time model of `GET /flags/{key}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServiceTime {
    /// Sleep exactly this long.
    Fixed(Duration),
    /// Sleep a duration drawn from an exponential distribution with this mean.
    Exponential { mean: Duration },
    /// Burn CPU for this long on a blocking thread.
    Cpu(Duration),
}

impl Default for ServiceTime {
    fn default() -> Self {
        ServiceTime::Fixed(Duration::ZERO)
    }
}

impl ServiceTime {
    /// Spends the service time for one request.
    pub async fn spend(self) {
        match self {
            ServiceTime::Fixed(d) if d.is_zero() => {}
            ServiceTime::Fixed(d) => tokio::time::sleep(d).await,
            ServiceTime::Exponential { mean } => {
                let d = sample_exponential(mean, &mut rand::rng());
                tokio::time::sleep(d).await;
            }
            ServiceTime::Cpu(d) => {
                let _ = tokio::task::spawn_blocking(move || burn_cpu(d)).await;
            }
        }
    }
}

/// Inverse-transform sample of Exp(1/mean).
pub fn sample_exponential(mean: Duration, rng: &mut impl Rng) -> Duration {
    // 1 - u lies in (0, 1], so ln never sees 0.
    let u: f64 = rng.random::<f64>();
    mean.mul_f64(-(1.0 - u).ln())
}

fn burn_cpu(duration: Duration) {
    let end = Instant::now() + duration;
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    while Instant::now() < end {
        for _ in 0..256 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        std::hint::black_box(x);
    }
}

/// Why a `--service-time` value was rejected.
#[derive(Debug, thiserror::Error)]
#[error("invalid service time `{input}`: {reason} (expected fixed:20ms, exp:20ms or cpu:2ms)")]
pub struct ParseServiceTimeError {
    input: String,
    reason: String,
}

impl FromStr for ServiceTime {
    type Err = ParseServiceTimeError;

    /// Parses `fixed:20ms`, `exp:20ms` (or `exponential:20ms`), `cpu:2ms`; a bare duration is fixed.
    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let err = |reason: String| ParseServiceTimeError {
            input: input.to_string(),
            reason,
        };
        let (kind, value) = input.split_once(':').unwrap_or(("fixed", input));
        let duration = humantime::parse_duration(value.trim()).map_err(|e| err(e.to_string()))?;
        match kind.trim() {
            "fixed" => Ok(ServiceTime::Fixed(duration)),
            "exp" | "exponential" => Ok(ServiceTime::Exponential { mean: duration }),
            "cpu" => Ok(ServiceTime::Cpu(duration)),
            other => Err(err(format!("unknown kind `{other}`"))),
        }
    }
}

impl fmt::Display for ServiceTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServiceTime::Fixed(d) => write!(f, "fixed:{}", humantime::format_duration(*d)),
            ServiceTime::Exponential { mean } => {
                write!(f, "exp:{}", humantime::format_duration(*mean))
            }
            ServiceTime::Cpu(d) => write!(f, "cpu:{}", humantime::format_duration(*d)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn parses_each_kind_and_round_trips() {
        for text in ["fixed:20ms", "exp:5ms", "cpu:2ms"] {
            let parsed: ServiceTime = text.parse().unwrap();
            assert_eq!(parsed.to_string(), text);
        }
        assert_eq!(
            "15ms".parse::<ServiceTime>().unwrap(),
            ServiceTime::Fixed(Duration::from_millis(15))
        );
        let err = "gamma:3ms".parse::<ServiceTime>().unwrap_err().to_string();
        assert!(err.contains("unknown kind `gamma`"), "{err}");
        assert!("fixed:soon".parse::<ServiceTime>().is_err());
    }

    #[test]
    fn exponential_samples_have_the_requested_mean() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        let mean = Duration::from_millis(20);
        let n = 20_000;
        let total: Duration = (0..n).map(|_| sample_exponential(mean, &mut rng)).sum();
        let observed = total.as_secs_f64() / n as f64;
        assert!((observed - 0.020).abs() < 0.001, "mean was {observed}");
    }

    #[tokio::test]
    async fn cpu_time_is_spent() {
        let start = Instant::now();
        ServiceTime::Cpu(Duration::from_millis(30)).spend().await;
        assert!(start.elapsed() >= Duration::from_millis(30));
    }
}

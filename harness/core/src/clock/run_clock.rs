//! The run's clock: `t = 0` is the load start (the end of the warm-up); every measurement,
//! event and sample of a run is on it, in wall-clock seconds.

use std::time::Duration;

/// The run's clock: `t = 0` is the load start (end of the warm-up).
#[derive(Debug, Clone, Copy)]
pub struct RunClock {
    pub load_start: tokio::time::Instant,
    pub load_start_unix_ms: u64,
    pub warmup: Duration,
    pub duration: Duration,
}

impl RunClock {
    /// A clock whose load start is `warmup` from now.
    pub fn starting_after(warmup: Duration, duration: Duration) -> Self {
        let now_unix = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Self {
            load_start: tokio::time::Instant::now() + warmup,
            load_start_unix_ms: (now_unix + warmup).as_millis() as u64,
            warmup,
            duration,
        }
    }

    /// Seconds since the load start (negative during the warm-up).
    pub fn t_s(&self, at: tokio::time::Instant) -> f64 {
        if at >= self.load_start {
            (at - self.load_start).as_secs_f64()
        } else {
            -(self.load_start - at).as_secs_f64()
        }
    }

    pub fn now_s(&self) -> f64 {
        self.t_s(tokio::time::Instant::now())
    }

    /// Seconds of load the run measured: the planned length, or up to now when `interrupted`.
    pub fn measured_s(&self, interrupted: bool) -> f64 {
        let planned = self.duration.as_secs_f64();
        if interrupted {
            self.now_s().clamp(0.0, planned)
        } else {
            planned
        }
    }
}

/// Formats Unix milliseconds as RFC 3339 UTC, to the second (`2026-11-29T21:33:25Z`).
pub fn rfc3339_utc(unix_ms: u64) -> String {
    let at = std::time::UNIX_EPOCH + Duration::from_millis(unix_ms - unix_ms % 1000);
    humantime::format_rfc3339_seconds(at).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_rfc3339() {
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00Z");
        // 2026-11-29T21:33:25Z
        assert_eq!(rfc3339_utc(1_795_988_005_000), "2026-11-29T21:33:25Z");
        assert_eq!(rfc3339_utc(951_782_400_000), "2000-02-29T00:00:00Z");
        // Milliseconds are cut, not rounded.
        assert_eq!(rfc3339_utc(951_782_400_999), "2000-02-29T00:00:00Z");
    }
}

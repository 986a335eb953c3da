//! flagsvc: the arguments the harness starts it with ([`FlagsvcArgs`]).

use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

use crate::flags::duration_flag;

/// Service time of `GET /flags/{key}` (`--service-time`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServiceTime {
    /// Sleep this long (`fixed:20ms`).
    Fixed(Duration),
    /// Sleep a time drawn from an exponential distribution with this mean (`exp:20ms`).
    Exponential { mean: Duration },
    /// Burn this much CPU (`cpu:2ms`).
    Cpu(Duration),
}

impl fmt::Display for ServiceTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServiceTime::Fixed(d) => write!(f, "fixed:{}", duration_flag(*d)),
            ServiceTime::Exponential { mean } => write!(f, "exp:{}", duration_flag(*mean)),
            ServiceTime::Cpu(d) => write!(f, "cpu:{}", duration_flag(*d)),
        }
    }
}

/// `flagsvc` as the harness runs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlagsvcArgs {
    pub listen: SocketAddr,
    pub service_time: ServiceTime,
    /// Heartbeat interval of SSE streams.
    pub sse_interval: Duration,
    /// How long it keeps serving after SIGTERM (wall time).
    pub drain_delay: Duration,
}

impl FlagsvcArgs {
    /// The command line after the program name.
    pub fn to_args(&self) -> Vec<String> {
        vec![
            "--listen".into(),
            self.listen.to_string(),
            "--service-time".into(),
            self.service_time.to_string(),
            "--sse-interval".into(),
            duration_flag(self.sse_interval),
            "--drain-delay".into(),
            duration_flag(self.drain_delay),
        ]
    }
}

//! loadgen: the arguments of `loadgen run` as the harness passes them ([`RunArgs`]), the
//! source-side metric the harness scrapes ([`ATTEMPTED_TOTAL`]), the transport-error kinds of
//! a report ([`TransportError`]) and the report itself ([`report`]).

pub mod report;

use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

pub use report::{ConnectionModel, Origin, Report, SCHEMA};

use crate::flags::duration_flag;

/// `loadgen_attempted_total`: requests sent so far (the source side of the autoscaler's view).
pub const ATTEMPTED_TOTAL: &str = "loadgen_attempted_total";
/// `loadgen_responses_total{code}`: responses by status code.
pub const RESPONSES_TOTAL: &str = "loadgen_responses_total";
/// `loadgen_transport_errors_total{kind}`: requests that got no response, by kind.
pub const TRANSPORT_ERRORS_TOTAL: &str = "loadgen_transport_errors_total";

/// A generator's source-side request counters (`loadgen --metrics-listen`), cumulative.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadgenCounters {
    pub attempted: u64,
    /// Responses of any status plus transport errors.
    pub completed: u64,
    /// Non-2xx responses plus transport errors.
    pub failed: u64,
}

impl std::ops::Add for LoadgenCounters {
    type Output = Self;

    fn add(self, o: Self) -> Self {
        Self {
            attempted: self.attempted + o.attempted,
            completed: self.completed + o.completed,
            failed: self.failed + o.failed,
        }
    }
}

impl LoadgenCounters {
    /// Picks loadgen's request counters out of its Prometheus text; missing series read as 0.
    pub fn parse(text: &str) -> LoadgenCounters {
        let mut c = LoadgenCounters::default();
        for sample in crate::prometheus::samples(text) {
            let value = sample.value.max(0.0) as u64;
            match sample.name {
                ATTEMPTED_TOTAL if sample.labels.is_empty() => c.attempted = value,
                RESPONSES_TOTAL => {
                    c.completed += value;
                    if !sample
                        .label("code")
                        .is_some_and(|code| code.starts_with('2'))
                    {
                        c.failed += value;
                    }
                }
                TRANSPORT_ERRORS_TOTAL => {
                    c.completed += value;
                    c.failed += value;
                }
                _ => {}
            }
        }
        c
    }
}

/// A generator's request rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rate {
    /// Open loop at this many requests per second.
    PerSecond(f64),
    /// Closed loop: every connection sends back-to-back.
    Max,
    /// Open loop, changing linearly from `from` to `to` over the duration.
    Ramp { from: f64, to: f64 },
}

impl fmt::Display for Rate {
    /// The `--rate` value: `500`, `max`, `100:1000`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rate::PerSecond(r) => write!(f, "{r}"),
            Rate::Max => f.write_str("max"),
            Rate::Ramp { from, to } => write!(f, "{from}:{to}"),
        }
    }
}

/// Server-sent-event streams to hold open beside the request load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseStreams {
    pub streams: u32,
    pub url: String,
}

/// `loadgen run` as the harness runs it: the JSON report goes to `report_file`.
#[derive(Debug, Clone, PartialEq)]
pub struct RunArgs {
    /// `http://host:port/path`.
    pub url: String,
    pub rate: Rate,
    /// Wall time requests are issued for.
    pub duration: Duration,
    pub connections: u32,
    pub connection_model: ConnectionModel,
    /// Per-request timeout.
    pub timeout: Duration,
    pub report_file: PathBuf,
    pub seed: u64,
    /// Where to serve the source-side metrics.
    pub metrics_listen: Option<SocketAddr>,
    /// `None`: no streams.
    pub sse: Option<SseStreams>,
}

impl RunArgs {
    /// The command line after the program name.
    pub fn to_args(&self) -> Vec<String> {
        let mut args = vec![
            "run".into(),
            "--url".into(),
            self.url.clone(),
            "--rate".into(),
            self.rate.to_string(),
            "--duration".into(),
            duration_flag(self.duration),
            "--connections".into(),
            self.connections.to_string(),
            "--connection-model".into(),
            self.connection_model.to_string(),
            "--timeout".into(),
            duration_flag(self.timeout),
            "--output".into(),
            "json".into(),
            "--output-file".into(),
            self.report_file.display().to_string(),
            "--seed".into(),
            self.seed.to_string(),
        ];
        if let Some(addr) = self.metrics_listen {
            args.extend(["--metrics-listen".into(), addr.to_string()]);
        }
        if let Some(sse) = &self.sse {
            args.extend([
                "--sse-streams".into(),
                sse.streams.to_string(),
                "--sse-url".into(),
                sse.url.clone(),
            ]);
        }
        args
    }
}

/// Why a request got no response: the keys of a report's `transport_errors` maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TransportError {
    /// The TCP connect was refused (a dead pod, a stale endpoint).
    ConnectRefused,
    /// Reset, broken pipe, or closed before a complete response.
    Reset,
    /// The request timeout expired.
    Timeout,
    /// Anything else.
    Other,
}

impl TransportError {
    /// Every kind, in report order.
    pub const ALL: [TransportError; 4] = [
        TransportError::ConnectRefused,
        TransportError::Reset,
        TransportError::Timeout,
        TransportError::Other,
    ];

    /// The key in a report.
    pub fn as_str(self) -> &'static str {
        match self {
            TransportError::ConnectRefused => "connect_refused",
            TransportError::Reset => "reset",
            TransportError::Timeout => "timeout",
            TransportError::Other => "other",
        }
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for TransportError {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        TransportError::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| format!("{s:?} is not a transport error kind"))
    }
}

/// A key of a report's `responses` maps: an HTTP status code (`"503"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StatusCode(pub u16);

impl StatusCode {
    /// 2xx.
    pub fn is_success(self) -> bool {
        (200..300).contains(&self.0)
    }

    /// 5xx.
    pub fn is_server_error(self) -> bool {
        (500..600).contains(&self.0)
    }
}

impl fmt::Display for StatusCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl FromStr for StatusCode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        s.parse::<u16>()
            .ok()
            .filter(|c| (100..1000).contains(c))
            .map(StatusCode)
            .ok_or_else(|| format!("{s:?} is not an HTTP status code"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_carry_every_setting() {
        let args = RunArgs {
            url: "http://127.0.0.1:9/flags/a".into(),
            rate: Rate::Ramp {
                from: 10.0,
                to: 20.5,
            },
            duration: Duration::from_millis(1500),
            connections: 4,
            connection_model: ConnectionModel::PerRequest,
            timeout: Duration::from_secs(2),
            report_file: "/tmp/r.json".into(),
            seed: 7,
            metrics_listen: Some("127.0.0.1:9100".parse().unwrap()),
            sse: Some(SseStreams {
                streams: 3,
                url: "http://127.0.0.1:9/stream".into(),
            }),
        };
        let text = args.to_args().join(" ");
        assert_eq!(
            text,
            "run --url http://127.0.0.1:9/flags/a --rate 10:20.5 --duration 1500ms \
             --connections 4 --connection-model per-request --timeout 2000ms --output json \
             --output-file /tmp/r.json --seed 7 --metrics-listen 127.0.0.1:9100 \
             --sse-streams 3 --sse-url http://127.0.0.1:9/stream"
        );
    }

    #[test]
    fn report_keys_parse() {
        assert_eq!("timeout".parse(), Ok(TransportError::Timeout));
        assert!("timed_out".parse::<TransportError>().is_err());
        let code: StatusCode = "503".parse().unwrap();
        assert!(code.is_server_error() && !code.is_success());
        assert!("5xx".parse::<StatusCode>().is_err());
    }
}

#[cfg(test)]
mod counter_tests {
    use super::*;

    #[test]
    fn parses_the_generators_counters() {
        let text = "# TYPE loadgen_attempted_total counter\nloadgen_attempted_total 120\n\
                    loadgen_responses_total{code=\"200\"} 90\nloadgen_responses_total{code=\"503\"} 5\n\
                    loadgen_transport_errors_total{kind=\"timeout\"} 20\n\
                    loadgen_transport_errors_total{kind=\"reset\"} 1\nloadgen_in_flight 4\n# EOF\n";
        assert_eq!(
            LoadgenCounters::parse(text),
            LoadgenCounters {
                attempted: 120,
                completed: 116,
                failed: 26,
            }
        );
    }
}

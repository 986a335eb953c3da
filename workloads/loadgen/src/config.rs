//! What a run does: [`RunConfig`] (built by the CLI or directly by tests and the harness), the
//! request rate ([`RateSpec`]) and the connection model ([`ConnectionModel`]).

use std::fmt;
use std::net::SocketAddr;
use std::str::FromStr;
use std::time::Duration;

use http::header::{ACCEPT, CONNECTION, HOST, USER_AGENT};
use http::{HeaderMap, HeaderName, HeaderValue, Uri};

use crate::error::LoadgenError;
use crate::profile::{RateProfile, Step};

/// How requests are paced.
#[derive(Debug, Clone, PartialEq)]
pub enum RateSpec {
    /// Open loop at a constant number of requests per second; 0 sends no requests (SSE only).
    Constant(f64),
    /// Open loop, rate rising (or falling) linearly from `from` to `to` over the duration.
    Ramp { from: f64, to: f64 },
    /// Open loop, step profile (see [`crate::profile`]).
    Steps(Vec<Step>),
    /// Closed loop at maximum throughput: every connection sends back-to-back.
    Max,
}

impl FromStr for RateSpec {
    type Err = String;

    /// `max`, `RPS` or `FROM:TO`.
    fn from_str(s: &str) -> Result<Self, String> {
        let number = |v: &str| -> Result<f64, String> {
            match v.trim().parse::<f64>() {
                Ok(r) if r.is_finite() && r >= 0.0 => Ok(r),
                _ => Err(format!("{v:?} is not a rate (requests per second ≥ 0)")),
            }
        };
        let s = s.trim();
        if s.eq_ignore_ascii_case("max") {
            Ok(Self::Max)
        } else if let Some((from, to)) = s.split_once(':') {
            Ok(Self::Ramp {
                from: number(from)?,
                to: number(to)?,
            })
        } else {
            Ok(Self::Constant(number(s)?))
        }
    }
}

impl fmt::Display for RateSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Constant(r) => write!(f, "{r}"),
            Self::Ramp { from, to } => write!(f, "{from}:{to}"),
            Self::Steps(steps) => write!(f, "schedule({} steps)", steps.len()),
            Self::Max => f.write_str("max"),
        }
    }
}

pub use workload_contract::loadgen::{ConnectionModel, Origin};

/// Everything a run needs. [`RunConfig::new`] gives the CLI defaults.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Target of the request load (`http://host:port/path?query`).
    pub url: Uri,
    pub rate: RateSpec,
    /// Requests are issued for this long (intended send times in `[0, duration)`).
    pub duration: Duration,
    /// Connection workers: keep-alive connections, or concurrent per-request connections.
    pub connections: usize,
    pub connection_model: ConnectionModel,
    /// At most this many requests outstanding (waiting for a connection or sending); an arrival
    /// beyond it is counted as dropped.
    pub max_in_flight: u64,
    /// Per-request limit from the moment a connection starts working on it.
    pub timeout: Duration,
    /// Extra request headers (also sent on SSE streams).
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// Server-sent-event streams held open for the whole run.
    pub sse_streams: usize,
    /// Stream URL; default: the host of `url` with path `/stream`.
    pub sse_url: Option<Uri>,
    /// Serve source-side Prometheus metrics here while running.
    pub metrics_listen: Option<SocketAddr>,
    /// Print `listening metrics=ADDR` on stdout once the metrics listener is bound (the `loadgen`
    /// binary does), so a caller can pass port 0 and learn the port without a race.
    pub announce_metrics: bool,
    /// Seeds the randomness (SSE reconnect jitter).
    pub seed: u64,
    pub origin: Option<Origin>,
}

impl RunConfig {
    /// A run against `url` with the CLI defaults: 100 rps for 10 s on 64 keep-alive connections.
    pub fn new(url: Uri) -> Self {
        Self {
            url,
            rate: RateSpec::Constant(100.0),
            duration: Duration::from_secs(10),
            connections: 64,
            connection_model: ConnectionModel::KeepAlive,
            max_in_flight: 10_000,
            timeout: Duration::from_secs(10),
            headers: Vec::new(),
            sse_streams: 0,
            sse_url: None,
            metrics_listen: None,
            announce_metrics: false,
            seed: 0,
            origin: None,
        }
    }

    pub(crate) fn validate(&self) -> Result<(), LoadgenError> {
        let bad = |m: String| Err(LoadgenError::Config(m));
        if self.duration.is_zero() {
            return bad("--duration must be > 0".into());
        }
        if self.timeout.is_zero() {
            return bad("--timeout must be > 0".into());
        }
        if self.connections == 0 && self.rate != RateSpec::Constant(0.0) {
            return bad("--connections must be ≥ 1".into());
        }
        if self.max_in_flight == 0 {
            return bad("--max-in-flight must be ≥ 1".into());
        }
        let rates: Vec<f64> = match &self.rate {
            RateSpec::Constant(r) => vec![*r],
            RateSpec::Ramp { from, to } => vec![*from, *to],
            RateSpec::Steps(steps) => steps.iter().map(|s| s.rps).collect(),
            RateSpec::Max => Vec::new(),
        };
        if let Some(r) = rates.iter().find(|r| !r.is_finite() || **r < 0.0) {
            return bad(format!("rate {r} must be a finite number ≥ 0"));
        }
        Ok(())
    }

    /// The open-loop arrival profile, or `None` for closed loop (`max`).
    pub(crate) fn profile(&self) -> Option<RateProfile> {
        match &self.rate {
            RateSpec::Constant(r) => Some(RateProfile::constant(*r, self.duration)),
            RateSpec::Ramp { from, to } => Some(RateProfile::ramp(*from, *to, self.duration)),
            RateSpec::Steps(steps) => Some(RateProfile::steps(steps, self.duration)),
            RateSpec::Max => None,
        }
    }

    /// The stream URL: `sse_url`, or `url`'s scheme and authority with path `/stream`.
    pub fn effective_sse_url(&self) -> Uri {
        if let Some(u) = &self.sse_url {
            return u.clone();
        }
        let mut parts = self.url.clone().into_parts();
        parts.path_and_query = Some(http::uri::PathAndQuery::from_static("/stream"));
        Uri::from_parts(parts).unwrap_or_else(|_| self.url.clone())
    }
}

/// A validated request target: where to connect and the request head to send.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub host_port: String,
    pub path: Uri,
    pub headers: HeaderMap,
    /// The request encoded once, for the keep-alive fast path.
    pub wire: std::sync::Arc<[u8]>,
}

/// What kind of requests a [`Target`] sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TargetKind {
    Requests(ConnectionModel),
    Stream,
}

impl Target {
    pub(crate) fn new(
        url: &Uri,
        extra: &[(HeaderName, HeaderValue)],
        kind: TargetKind,
    ) -> Result<Self, LoadgenError> {
        let bad = |m: &str| LoadgenError::Config(format!("{url}: {m}"));
        match url.scheme_str() {
            Some("http") => {}
            Some(other) => {
                return Err(bad(&format!(
                    "scheme {other:?} is not supported (http only)"
                )));
            }
            None => return Err(bad("missing scheme (http://host:port/path)")),
        }
        let authority = url.authority().ok_or_else(|| bad("missing host"))?;
        let host_port = format!(
            "{}:{}",
            authority.host(),
            authority.port_u16().unwrap_or(80)
        );
        let path: Uri = url
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .parse()
            .map_err(|_| bad("invalid path"))?;
        let mut headers = HeaderMap::new();
        let host = HeaderValue::from_str(authority.as_str()).map_err(|_| bad("invalid host"))?;
        headers.insert(HOST, host);
        headers.insert(USER_AGENT, HeaderValue::from_static("loadgen/0.1"));
        match kind {
            TargetKind::Requests(ConnectionModel::PerRequest) => {
                headers.insert(CONNECTION, HeaderValue::from_static("close"));
            }
            TargetKind::Requests(ConnectionModel::KeepAlive) => {}
            TargetKind::Stream => {
                headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
            }
        }
        for (name, value) in extra {
            headers.append(name.clone(), value.clone());
        }
        let wire = crate::wire::encode_request(&path.to_string(), &headers).into();
        Ok(Self {
            host_port,
            path,
            headers,
            wire,
        })
    }

    /// Resolves the host once (a Service name resolves to its ClusterIP).
    pub(crate) async fn resolve(&self) -> Result<SocketAddr, LoadgenError> {
        let err = |source| LoadgenError::Resolve {
            host: self.host_port.clone(),
            source,
        };
        tokio::net::lookup_host(&self.host_port)
            .await
            .map_err(err)?
            .next()
            .ok_or_else(|| err(std::io::Error::other("no addresses")))
    }

    pub(crate) fn request(&self) -> http::Request<http_body_util::Empty<bytes::Bytes>> {
        let mut req = http::Request::new(http_body_util::Empty::new());
        *req.uri_mut() = self.path.clone();
        *req.headers_mut() = self.headers.clone();
        req
    }
}

/// Parses `"name: value"` (the `--header` syntax).
pub fn parse_header(s: &str) -> Result<(HeaderName, HeaderValue), String> {
    let (name, value) = s
        .split_once(':')
        .ok_or_else(|| format!("{s:?}: expected \"name: value\""))?;
    let name = HeaderName::from_bytes(name.trim().as_bytes())
        .map_err(|_| format!("{name:?} is not a header name"))?;
    let value = HeaderValue::from_str(value.trim())
        .map_err(|_| format!("{value:?} is not a header value"))?;
    Ok((name, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_specs_parse() {
        assert_eq!("max".parse::<RateSpec>(), Ok(RateSpec::Max));
        assert_eq!("250".parse::<RateSpec>(), Ok(RateSpec::Constant(250.0)));
        assert_eq!(
            "100:1000".parse::<RateSpec>(),
            Ok(RateSpec::Ramp {
                from: 100.0,
                to: 1000.0
            })
        );
        assert!("-3".parse::<RateSpec>().is_err());
        assert!("fast".parse::<RateSpec>().is_err());
        assert!("1:x".parse::<RateSpec>().is_err());
    }

    #[test]
    fn targets_need_http_and_default_the_port_and_path() {
        let t = Target::new(
            &"http://svc.ns".parse().unwrap(),
            &[parse_header("x-origin-zone: 2a").unwrap()],
            TargetKind::Requests(ConnectionModel::PerRequest),
        )
        .unwrap();
        assert_eq!(t.host_port, "svc.ns:80");
        assert_eq!(t.path, "/");
        assert_eq!(t.headers[HOST], "svc.ns");
        assert_eq!(t.headers[CONNECTION], "close");
        assert_eq!(t.headers["x-origin-zone"], "2a");
        let https = Target::new(&"https://svc/".parse().unwrap(), &[], TargetKind::Stream);
        assert!(matches!(https, Err(LoadgenError::Config(m)) if m.contains("http only")));
    }

    #[test]
    fn sse_url_defaults_to_stream_on_the_same_host() {
        let cfg = RunConfig::new("http://127.0.0.1:8080/flags?x=1".parse().unwrap());
        assert_eq!(cfg.effective_sse_url(), "http://127.0.0.1:8080/stream");
    }

    #[test]
    fn headers_parse() {
        let (n, v) = parse_header("X-Test:  a b ").unwrap();
        assert_eq!((n.as_str(), v.to_str().unwrap()), ("x-test", "a b"));
        assert!(parse_header("novalue").is_err());
    }
}

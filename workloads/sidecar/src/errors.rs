//! Errors of the sidecar: configuration problems, and upstream failures classified the way the
//! metrics and the 502/504 responses name them.

use std::error::Error as StdError;
use std::io;

use tower::BoxError;

/// Why the sidecar could not start.
#[derive(Debug, thiserror::Error)]
pub enum SidecarError {
    #[error("invalid configuration: {0}")]
    Config(String),
}

/// What kind of upstream failure happened; the `reason` label of `sidecar_upstream_failures`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// The upstream refused the connection or could not be reached (502).
    Connect,
    /// The connection broke before the response was complete (502).
    Reset,
    /// No response within `--upstream-timeout` (504).
    Timeout,
    /// Anything else (502).
    Other,
}

impl FailureKind {
    /// Label value for metrics and the `x-sidecar-error` header.
    pub fn reason(self) -> &'static str {
        match self {
            Self::Connect => "connect",
            Self::Reset => "reset",
            Self::Timeout => "timeout",
            Self::Other => "other",
        }
    }

    /// Status the sidecar answers with.
    pub fn status(self) -> http::StatusCode {
        match self {
            Self::Timeout => http::StatusCode::GATEWAY_TIMEOUT,
            _ => http::StatusCode::BAD_GATEWAY,
        }
    }

    /// Envoy-style response flag: `UT` upstream timeout, `UF` upstream failure.
    pub fn response_flag(self) -> &'static str {
        match self {
            Self::Timeout => "UT",
            _ => "UF",
        }
    }
}

/// The upstream could not produce (all of) a response.
#[derive(Debug, thiserror::Error)]
#[error("upstream {}{}", kind.reason(), source.as_ref().map(|e| format!(": {e}")).unwrap_or_default())]
pub struct UpstreamError {
    pub kind: FailureKind,
    #[source]
    pub source: Option<BoxError>,
}

impl UpstreamError {
    pub fn new(kind: FailureKind, source: Option<BoxError>) -> Self {
        Self { kind, source }
    }

    /// Classifies a client or body error by walking its source chain.
    pub fn classify(error: impl Into<BoxError>) -> Self {
        let error = error.into();
        let kind = classify_chain(error.as_ref());
        Self::new(kind, Some(error))
    }
}

fn classify_chain(error: &(dyn StdError + 'static)) -> FailureKind {
    let mut current: Option<&(dyn StdError + 'static)> = Some(error);
    while let Some(e) = current {
        if let Some(client) = e.downcast_ref::<hyper_util::client::legacy::Error>()
            && client.is_connect()
        {
            return FailureKind::Connect;
        }
        if let Some(io) = e.downcast_ref::<io::Error>() {
            match io.kind() {
                io::ErrorKind::ConnectionRefused => return FailureKind::Connect,
                io::ErrorKind::TimedOut => return FailureKind::Timeout,
                io::ErrorKind::ConnectionReset
                | io::ErrorKind::ConnectionAborted
                | io::ErrorKind::BrokenPipe
                | io::ErrorKind::UnexpectedEof => return FailureKind::Reset,
                _ => {}
            }
        }
        if let Some(hyper) = e.downcast_ref::<hyper::Error>() {
            if hyper.is_incomplete_message() || hyper.is_canceled() {
                return FailureKind::Reset;
            }
            if hyper.is_timeout() {
                return FailureKind::Timeout;
            }
        }
        current = e.source();
    }
    FailureKind::Other
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_kinds_map_to_reasons() {
        let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
        assert_eq!(UpstreamError::classify(refused).kind, FailureKind::Connect);
        let reset = io::Error::from(io::ErrorKind::ConnectionReset);
        assert_eq!(UpstreamError::classify(reset).kind, FailureKind::Reset);
        let other = io::Error::other("strange");
        assert_eq!(UpstreamError::classify(other).kind, FailureKind::Other);
    }

    #[test]
    fn statuses_and_flags() {
        assert_eq!(FailureKind::Timeout.status(), 504);
        assert_eq!(FailureKind::Timeout.response_flag(), "UT");
        assert_eq!(FailureKind::Connect.status(), 502);
        assert_eq!(FailureKind::Reset.response_flag(), "UF");
    }
}

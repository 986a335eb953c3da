//! Why a request got no HTTP response: the transport-error kinds the report keeps apart
//! ([`ErrorKind`]), and how an I/O or hyper error maps to one ([`classify_io`],
//! [`classify_hyper`]). A leaf both request paths use (the keep-alive fast path, `keepalive`
//! and `wire`; hyper, `client` and `sse`), and so does the counting (`recorder`, `metrics`,
//! `report`).

use std::io;

/// Why a request got no HTTP response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The TCP connect was refused (nothing listening: a dead pod, a stale endpoint).
    ConnectRefused,
    /// Connection reset, broken pipe, or closed before a complete response.
    Reset,
    /// `--timeout` expired.
    Timeout,
    /// Anything else (protocol errors, unreachable hosts, ...).
    Other,
}

impl ErrorKind {
    pub const ALL: [Self; 4] = [
        Self::ConnectRefused,
        Self::Reset,
        Self::Timeout,
        Self::Other,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::ConnectRefused => "connect_refused",
            Self::Reset => "reset",
            Self::Timeout => "timeout",
            Self::Other => "other",
        }
    }

    /// Its position in [`ErrorKind::ALL`] (the index of per-kind counters).
    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// Maps an I/O error to its kind.
pub(crate) fn classify_io(e: &io::Error) -> ErrorKind {
    use io::ErrorKind as K;
    match e.kind() {
        K::ConnectionRefused => ErrorKind::ConnectRefused,
        K::ConnectionReset
        | K::ConnectionAborted
        | K::BrokenPipe
        | K::UnexpectedEof
        | K::NotConnected => ErrorKind::Reset,
        _ => ErrorKind::Other,
    }
}

/// Maps a hyper error to its kind: an I/O cause decides; a connection closed before the
/// response completed is a reset; protocol errors are `other`.
pub(crate) fn classify_hyper(e: &hyper::Error) -> ErrorKind {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<io::Error>() {
            match classify_io(io) {
                ErrorKind::Other => {}
                kind => return kind,
            }
        }
        source = s.source();
    }
    if e.is_incomplete_message() || e.is_canceled() || e.is_closed() {
        ErrorKind::Reset
    } else {
        ErrorKind::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_map_to_kinds() {
        let kind = |k| classify_io(&io::Error::from(k));
        assert_eq!(
            kind(io::ErrorKind::ConnectionRefused),
            ErrorKind::ConnectRefused
        );
        assert_eq!(kind(io::ErrorKind::ConnectionReset), ErrorKind::Reset);
        assert_eq!(kind(io::ErrorKind::BrokenPipe), ErrorKind::Reset);
        assert_eq!(kind(io::ErrorKind::UnexpectedEof), ErrorKind::Reset);
        assert_eq!(kind(io::ErrorKind::TimedOut), ErrorKind::Other);
        assert_eq!(kind(io::ErrorKind::PermissionDenied), ErrorKind::Other);
    }
}

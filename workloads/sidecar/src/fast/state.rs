//! The state of one client connection on the fast path ([`Conn`]): its buffers and timers,
//! reused for every exchange on it, and the failure kind of an I/O error on its upstream
//! socket. Both the exchange loop (`conn`) and the body relay (`relay`) work on it; it uses
//! neither.

use std::io;

use bytes::BytesMut;
use tokio::net::TcpStream;

use super::FastPath;
use super::io::Deadline;
use crate::errors::{FailureKind, UpstreamError};

/// Read size for upstream responses.
pub(super) const UPSTREAM_READ: usize = 16 * 1024;

/// The buffers and timers of one connection, reused for every exchange on it.
pub(super) struct Conn<'a> {
    pub(super) fast: &'a FastPath,
    pub(super) client: &'a TcpStream,
    /// Bytes from the client not consumed yet.
    pub(super) cbuf: BytesMut,
    /// Bytes from the upstream not relayed yet.
    pub(super) ubuf: BytesMut,
    /// The head (and buffered body) for the upstream.
    pub(super) req: Vec<u8>,
    /// What goes to the client next.
    pub(super) out: Vec<u8>,
    pub(super) head_timer: Deadline,
    pub(super) upstream_timer: Deadline,
}

impl Conn<'_> {
    /// Frees the buffers that hold nothing, while a stream waits for its next event (they are
    /// allocated again when bytes arrive): an idle stream costs its task and sockets only.
    pub(super) fn release_idle(&mut self) {
        if self.ubuf.is_empty() {
            self.ubuf = BytesMut::new();
        }
        if self.cbuf.is_empty() {
            self.cbuf = BytesMut::new();
        }
        self.out = Vec::new();
        self.req = Vec::new();
    }
}

/// The failure kind of an I/O error on the upstream connection.
pub(super) fn io_kind(e: io::Error) -> FailureKind {
    UpstreamError::classify(e).kind
}

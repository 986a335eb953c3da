//! Socket primitives of the fast path, all on `&TcpStream` so one task can read, write and
//! watch both of its sockets at once: read into a reused buffer, write everything, notice a
//! client that went away, and a per-connection deadline timer reset in place.

use std::io;
use std::pin::Pin;

use bytes::BytesMut;
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

/// Whether a buffer keeps its memory while its socket has nothing to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Idle {
    /// Keep it (plain exchanges: the next bytes come soon).
    Keep,
    /// Free it while waiting when it holds nothing (idle streams).
    Release,
}

/// Reads what is available (at least one byte, or 0 at EOF) into `buf`, with room for `want`.
pub(crate) async fn read_some(
    s: &TcpStream,
    buf: &mut BytesMut,
    want: usize,
    idle: Idle,
) -> io::Result<usize> {
    loop {
        // Reserve only once the socket says it is readable (the readiness may be stale).
        s.readable().await?;
        buf.reserve(want);
        match s.try_read_buf(buf) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if idle == Idle::Release && buf.is_empty() {
                    *buf = BytesMut::new();
                }
            }
            result => return result,
        }
    }
}

/// Writes all of `data` (trying at once, waiting only when the socket is full).
pub(crate) async fn write_all(s: &TcpStream, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        match s.try_write(data) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => data = &data[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => s.writable().await?,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Resolves when the client has gone (EOF or an error). Bytes it sends meanwhile (the rest of
/// a request body, a pipelined request) are kept in `buf`; past `limit` bytes the client is no
/// longer read (it cannot be told apart from a client that stays) and this never resolves.
pub(crate) async fn client_gone(s: &TcpStream, buf: &mut BytesMut, limit: usize, idle: Idle) {
    while buf.len() < limit {
        match read_some(s, buf, 1024, idle).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
    std::future::pending::<()>().await;
}

/// A deadline reused for every exchange of a connection (resetting a tokio timer to a later
/// instant does not touch the timer wheel).
#[derive(Default)]
pub(crate) struct Deadline {
    sleep: Option<Pin<Box<Sleep>>>,
    armed: bool,
}

impl Deadline {
    /// Arms the deadline at `at`, or disarms it (`None`: never expires).
    pub(crate) fn set(&mut self, at: Option<Instant>) {
        self.armed = at.is_some();
        if let Some(at) = at {
            match &mut self.sleep {
                Some(sleep) => sleep.as_mut().reset(at),
                None => self.sleep = Some(Box::pin(tokio::time::sleep_until(at))),
            }
        }
    }

    /// Resolves when the armed deadline has passed; never when disarmed.
    pub(crate) async fn expired(&mut self) {
        match (&mut self.sleep, self.armed) {
            (Some(sleep), true) => sleep.as_mut().await,
            _ => std::future::pending().await,
        }
    }
}

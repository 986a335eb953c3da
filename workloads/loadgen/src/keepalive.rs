//! The keep-alive fast path: one worker's reused connection, driven inside the worker's own task
//! (no connection task, no channel, no per-request allocation). The request is encoded once; the
//! response is read with [`crate::wire`] into a buffer reused for the connection's life.
//!
//! Semantics are those of the general (hyper) path it replaces for keep-alive:
//! - a connection the server closed (or reset, or wrote to) while idle is replaced silently
//!   before the next request — no request was lost. This check costs no system call while the
//!   socket has no readiness event (tokio's `try_read` looks at the readiness bits first);
//! - a request that fails, or times out, closes the connection; the next one reconnects;
//! - a response that says `connection: close` (or is delimited by the close) ends the
//!   connection after it; bytes nobody asked for after a response end it as well;
//! - the timeout covers connect, write and the whole response. Its timer is *lazy*: one `Sleep`
//!   per connection, re-armed only when it fires before the current request's deadline, so a
//!   request costs no timer registration;
//! - bytes are counted as they cross the socket: the request once written whole, each read's
//!   length as it is read (two integer additions per request in the common case).

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep, sleep_until};

use crate::error_kind::{ErrorKind, classify_io};
use crate::report::ByteCounts;
use crate::wire::{PodName, ReadBuf, ResponseReader};

/// One worker's keep-alive connection.
pub(crate) struct KeepAliveConn {
    request: Arc<[u8]>,
    stream: Option<TcpStream>,
    buf: ReadBuf,
    reader: ResponseReader,
    /// The pod that answered the last complete response on the current connection.
    conn_pod: PodName,
    /// The pod of the response being read.
    resp_pod: PodName,
    timer: Pin<Box<Sleep>>,
}

/// How a request on the fast path ended.
pub(crate) enum Exchange<'a> {
    Response {
        status: u16,
        pod: Option<&'a str>,
        /// The request's bytes and the response's (head and body).
        bytes: ByteCounts,
    },
    Failure {
        kind: ErrorKind,
        conn_pod: Option<&'a str>,
        /// What was written and read before it failed.
        bytes: ByteCounts,
    },
}

async fn connect(addr: SocketAddr) -> Result<TcpStream, ErrorKind> {
    let stream = TcpStream::connect(addr)
        .await
        .map_err(|e| classify_io(&e))?;
    let _ = stream.set_nodelay(true);
    Ok(stream)
}

/// Writes the request and reads one whole response, counting the bytes into `wire` (the
/// request once written whole; every byte read for the response, which starts on an empty
/// buffer: a connection with bytes left over after a response is closed).
async fn exchange(
    stream: &mut Option<TcpStream>,
    buf: &mut ReadBuf,
    reader: &mut ResponseReader,
    pod: &mut PodName,
    request: &[u8],
    addr: SocketAddr,
    wire: &mut ByteCounts,
) -> Result<(u16, bool), ErrorKind> {
    if stream.is_none() {
        *stream = Some(connect(addr).await?);
        buf.clear();
    }
    let Some(s) = stream.as_mut() else {
        return Err(ErrorKind::Other);
    };
    s.write_all(request).await.map_err(|e| classify_io(&e))?;
    wire.sent += request.len() as u64;
    reader.start();
    loop {
        if let Some(done) = reader.advance(buf, pod)? {
            return Ok((done.status, done.close || !buf.unread().is_empty()));
        }
        let n = s.read(buf.spare()?).await.map_err(|e| classify_io(&e))?;
        if n == 0 {
            let done = reader.eof()?;
            return Ok((done.status, true));
        }
        wire.received += n as u64;
        buf.filled(n);
    }
}

impl KeepAliveConn {
    pub(crate) fn new(request: Arc<[u8]>) -> Self {
        Self {
            request,
            stream: None,
            buf: ReadBuf::default(),
            reader: ResponseReader::default(),
            conn_pod: PodName::default(),
            resp_pod: PodName::default(),
            timer: Box::pin(sleep_until(Instant::now())),
        }
    }

    /// Opens the connection before the first request needs it. A failure is left for that
    /// request to meet and count.
    pub(crate) async fn warm_up(&mut self, addr: SocketAddr, timeout: Duration) {
        if self.stream.is_some() {
            return;
        }
        if let Ok(Ok(stream)) = tokio::time::timeout(timeout, connect(addr)).await {
            self.stream = Some(stream);
            self.buf.clear();
            self.conn_pod.clear();
        }
    }

    /// Drops the connection if the server closed it (or sent something) while it was idle.
    fn check_idle(&mut self) {
        let Some(s) = &self.stream else { return };
        let mut probe = [0u8; 1];
        match s.try_read(&mut probe) {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            _ => self.stream = None,
        }
    }

    /// Carries out one request by `deadline`.
    pub(crate) async fn execute(&mut self, addr: SocketAddr, deadline: Instant) -> Exchange<'_> {
        self.check_idle();
        if self.stream.is_none() {
            self.conn_pod.clear();
        }
        let Self {
            request,
            stream,
            buf,
            reader,
            resp_pod,
            timer,
            ..
        } = self;
        let mut wire = ByteCounts::ZERO;
        let result = {
            let work = exchange(stream, buf, reader, resp_pod, request, addr, &mut wire);
            tokio::pin!(work);
            loop {
                tokio::select! {
                    biased;
                    r = &mut work => break r,
                    () = timer.as_mut() => {
                        if Instant::now() >= deadline {
                            break Err(ErrorKind::Timeout);
                        }
                        timer.as_mut().reset(deadline);
                    }
                }
            }
        };
        match result {
            Ok((status, close)) => {
                if close {
                    self.stream = None;
                }
                std::mem::swap(&mut self.conn_pod, &mut self.resp_pod);
                Exchange::Response {
                    status,
                    pod: self.conn_pod.get(),
                    bytes: wire,
                }
            }
            Err(kind) => {
                // The connection is closed; the next request reconnects.
                self.stream = None;
                Exchange::Failure {
                    kind,
                    conn_pod: self.conn_pod.get(),
                    bytes: wire,
                }
            }
        }
    }
}

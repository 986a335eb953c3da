//! One client connection on the fast path: read a head, admit, send upstream, relay the
//! response ([`super::relay`]), again while the client keeps the connection alive; hand the
//! connection to the general path at the first request the fast path cannot carry.
//!
//! Counting is the general path's: `received` on arrival, `admitted` with the slot,
//! `upstream_responses` and `requests{outcome="upstream"}` with the response head,
//! `requests{outcome=...}` and `upstream_failures` for the sidecar's own answers, and
//! `request_duration` from admission to the head (or the failure). A client that goes away
//! while queued or before its response head releases its place, its slot and the upstream
//! connection, and counts nothing more.

use std::sync::Arc;

use bytes::{Buf, BytesMut};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::time::Instant;

use super::head::{Parse, RequestHead, ResponseHead, parse_request, parse_response};
use super::io::{Deadline, Idle, client_gone, read_some, write_all};
use super::local::Encoded;
use super::relay::{Relayed, relay};
use super::rewind::Rewind;
use super::state::{Conn, UPSTREAM_READ, io_kind};
use super::{FastPath, MAX_RESPONSE_HEAD};
use crate::errors::FailureKind;
use crate::queue::{AdmitError, admit_permit};

/// Read size for request heads and bodies.
const CLIENT_READ: usize = 4 * 1024;
/// Attempts on pooled connections the upstream may have closed meanwhile.
const POOLED_ATTEMPTS: usize = 3;

enum HeadRead {
    Request(RequestHead),
    Fallback,
    Closed,
}

/// How an exchange ended for the connection.
enum Next {
    KeepAlive,
    Close,
}

/// Why no response head came.
pub(super) enum Failed {
    ClientGone,
    Upstream(FailureKind),
    /// Failed on a pooled connection before any response byte: try again elsewhere.
    Stale(FailureKind),
}

/// Serves one accepted client connection until it closes.
pub(crate) async fn run(fast: Arc<FastPath>, client: TcpStream) {
    if !fast.enabled {
        return general(&fast, client, BytesMut::new()).await;
    }
    let mut conn = Conn {
        fast: &fast,
        client: &client,
        cbuf: BytesMut::with_capacity(CLIENT_READ),
        ubuf: BytesMut::new(),
        req: Vec::with_capacity(512),
        out: Vec::with_capacity(512),
        head_timer: Deadline::default(),
        upstream_timer: Deadline::default(),
    };
    loop {
        let head = match conn.read_head().await {
            HeadRead::Request(head) => head,
            HeadRead::Fallback => {
                let pre = std::mem::take(&mut conn.cbuf);
                drop(conn);
                return general(&fast, client, pre).await;
            }
            HeadRead::Closed => return,
        };
        match conn.exchange(head).await {
            Next::KeepAlive if !fast.closing.is_cancelled() => {}
            _ => return,
        }
    }
}

/// Serves the rest of the connection on the general path (hyper and the tower stack).
async fn general(fast: &FastPath, client: TcpStream, pre: BytesMut) {
    let io = TokioIo::new(Rewind::new(pre.freeze(), client));
    let conn = fast.http1.serve_connection(io, fast.edge.clone());
    let mut conn = std::pin::pin!(conn);
    let result = tokio::select! {
        result = conn.as_mut() => result,
        () = fast.closing.cancelled() => {
            conn.as_mut().graceful_shutdown();
            conn.await
        }
    };
    if let Err(e) = result {
        tracing::debug!("connection ended with error: {e}");
    }
}

impl Conn<'_> {
    /// Reads until a complete head is buffered, within the header read timeout (like hyper:
    /// counted from when the connection starts waiting for it, idle keep-alive included).
    async fn read_head(&mut self) -> HeadRead {
        let fast = self.fast;
        self.head_timer
            .set(Some(Instant::now() + fast.header_read_timeout));
        loop {
            if !self.cbuf.is_empty() {
                match parse_request(&self.cbuf, fast.max_head, &fast.host, &mut self.req) {
                    Parse::Done(head) => return HeadRead::Request(head),
                    Parse::Fallback => return HeadRead::Fallback,
                    Parse::Partial => {}
                }
            }
            let idle = self.cbuf.is_empty();
            tokio::select! {
                biased;
                () = fast.closing.cancelled(), if idle => return HeadRead::Closed,
                read = read_some(self.client, &mut self.cbuf, CLIENT_READ, Idle::Keep) => match read {
                    Ok(0) | Err(_) => return HeadRead::Closed,
                    Ok(_) => {}
                },
                () = self.head_timer.expired() => return HeadRead::Closed,
            }
        }
    }

    async fn exchange(&mut self, head: RequestHead) -> Next {
        let fast = self.fast;
        let metrics = &*fast.metrics;
        metrics.received.inc();
        self.cbuf.advance(head.len);
        let admitted = tokio::select! {
            biased;
            admitted = admit_permit(&fast.semaphore, &fast.queue, metrics) => admitted,
            () = client_gone(self.client, &mut self.cbuf, fast.max_head, Idle::Keep) => return Next::Close,
        };
        let permit = match admitted {
            Ok(permit) => permit,
            Err(AdmitError::Rejected(rejection)) => {
                metrics.request(rejection.metric_reason());
                return self.answer(fast.replies.rejection(rejection), head).await;
            }
            Err(AdmitError::Closed) => {
                metrics.upstream_failure(FailureKind::Other.reason());
                metrics.request("upstream_failure");
                return self
                    .answer(fast.replies.failure(FailureKind::Other), head)
                    .await;
            }
        };
        metrics.admitted.inc();
        let started = Instant::now();
        let deadline = fast.upstream_timeout.map(|t| started + t);
        self.upstream_timer.set(deadline);
        self.ubuf.clear();
        let sent = self.send(head).await;
        let (upstream, response) = match sent {
            Ok(sent) => sent,
            Err(Failed::ClientGone) => return Next::Close,
            Err(Failed::Upstream(kind) | Failed::Stale(kind)) => {
                metrics
                    .request_duration
                    .observe(started.elapsed().as_secs_f64());
                metrics.upstream_failure(kind.reason());
                metrics.request("upstream_failure");
                drop(permit);
                return self.answer(fast.replies.failure(kind), head).await;
            }
        };
        metrics
            .request_duration
            .observe(started.elapsed().as_secs_f64());
        fast.count_response(response.status);
        let close = head.close || response_close(fast);
        match relay(self, &upstream, response, permit).await {
            Relayed::Complete { reusable } => {
                if reusable {
                    fast.pool.checkin(upstream);
                }
                if close { Next::Close } else { Next::KeepAlive }
            }
            Relayed::Ended | Relayed::ClientGone | Relayed::Failed => Next::Close,
        }
    }

    /// Writes one of the sidecar's own answers. A request body not read yet closes the
    /// connection after it.
    async fn answer(&mut self, reply: &Encoded, head: RequestHead) -> Next {
        let close = head.close || head.body > 0 || self.fast.closing.is_cancelled();
        self.out.clear();
        reply.write(&mut self.out, close);
        match write_all(self.client, &self.out).await {
            Ok(()) if !close => Next::KeepAlive,
            _ => Next::Close,
        }
    }

    /// Sends the request upstream and reads the response head; on a pooled connection the
    /// upstream closed meanwhile, tries again (only when the whole request is buffered).
    async fn send(&mut self, head: RequestHead) -> Result<(TcpStream, ResponseHead), Failed> {
        let buffered = usize::try_from(head.body).is_ok_and(|b| b <= self.cbuf.len());
        if buffered {
            let body = head.body as usize;
            self.req.extend_from_slice(&self.cbuf[..body]);
            self.cbuf.advance(body);
        }
        let mut pooled_tries = 0;
        loop {
            let pooled = if pooled_tries < POOLED_ATTEMPTS {
                self.fast.pool.checkout()
            } else {
                None
            };
            let (upstream, reused) = match pooled {
                Some(conn) => {
                    pooled_tries += 1;
                    (conn, true)
                }
                None => {
                    pooled_tries = POOLED_ATTEMPTS;
                    (self.connect().await?, false)
                }
            };
            match self.round_trip(&upstream, head, buffered).await {
                Ok(response) => return Ok((upstream, response)),
                Err(Failed::Stale(_)) if buffered && reused => self.ubuf.clear(),
                Err(Failed::Stale(kind)) => return Err(Failed::Upstream(kind)),
                Err(e) => return Err(e),
            }
        }
    }

    /// A new upstream connection, given up when the client leaves or the deadline passes.
    async fn connect(&mut self) -> Result<TcpStream, Failed> {
        let fast = self.fast;
        tokio::select! {
            biased;
            conn = fast.pool.connect() => conn.map_err(|e| {
                tracing::debug!("{e}");
                Failed::Upstream(FailureKind::Connect)
            }),
            () = client_gone(self.client, &mut self.cbuf, fast.max_head, Idle::Keep) => Err(Failed::ClientGone),
            () = self.upstream_timer.expired() => Err(Failed::Upstream(FailureKind::Timeout)),
        }
    }

    /// Writes the request (streaming a body not buffered) and reads the response head.
    async fn round_trip(
        &mut self,
        upstream: &TcpStream,
        head: RequestHead,
        buffered: bool,
    ) -> Result<ResponseHead, Failed> {
        let fast = self.fast;
        let written = tokio::select! {
            biased;
            written = write_all(upstream, &self.req) => written,
            () = self.upstream_timer.expired() => return Err(Failed::Upstream(FailureKind::Timeout)),
        };
        written.map_err(|e| Failed::Stale(io_kind(e)))?;
        if !buffered {
            self.stream_body(upstream, head.body).await?;
        }
        let close = head.close || response_close(fast);
        loop {
            match parse_response(
                &self.ubuf,
                head.head_method,
                close,
                MAX_RESPONSE_HEAD,
                &mut self.out,
            ) {
                Ok(Some(response)) if response.status < 200 => self.ubuf.advance(response.len),
                Ok(Some(response)) => {
                    self.ubuf.advance(response.len);
                    return Ok(response);
                }
                Ok(None) => {}
                Err(bad) => {
                    tracing::debug!("upstream: {bad}");
                    return Err(Failed::Upstream(FailureKind::Other));
                }
            }
            let nothing_yet = self.ubuf.is_empty();
            let read = tokio::select! {
                biased;
                read = read_some(upstream, &mut self.ubuf, UPSTREAM_READ, Idle::Keep) => read,
                () = client_gone(self.client, &mut self.cbuf, fast.max_head, Idle::Keep) => return Err(Failed::ClientGone),
                () = self.upstream_timer.expired() => return Err(Failed::Upstream(FailureKind::Timeout)),
            };
            match read {
                Ok(0) if nothing_yet => return Err(Failed::Stale(FailureKind::Reset)),
                Ok(0) => return Err(Failed::Upstream(FailureKind::Reset)),
                Ok(_) => {}
                Err(e) if nothing_yet => return Err(Failed::Stale(io_kind(e))),
                Err(e) => return Err(Failed::Upstream(io_kind(e))),
            }
        }
    }

    /// Relays a request body of `len` bytes that was not all buffered with its head.
    async fn stream_body(&mut self, upstream: &TcpStream, len: u64) -> Result<(), Failed> {
        let mut left = len;
        loop {
            let take = self
                .cbuf
                .len()
                .min(usize::try_from(left).unwrap_or(usize::MAX));
            if take > 0 {
                let written = tokio::select! {
                    biased;
                    written = write_all(upstream, &self.cbuf[..take]) => written,
                    () = self.upstream_timer.expired() => return Err(Failed::Upstream(FailureKind::Timeout)),
                };
                written.map_err(|e| Failed::Upstream(io_kind(e)))?;
                self.cbuf.advance(take);
                left -= take as u64;
            }
            if left == 0 {
                return Ok(());
            }
            let read = tokio::select! {
                biased;
                read = read_some(self.client, &mut self.cbuf, CLIENT_READ, Idle::Keep) => read,
                () = self.upstream_timer.expired() => return Err(Failed::Upstream(FailureKind::Timeout)),
            };
            match read {
                Ok(0) | Err(_) => return Err(Failed::ClientGone),
                Ok(_) => {}
            }
        }
    }
}

/// The response announces `connection: close` once the server stops accepting.
fn response_close(fast: &FastPath) -> bool {
    fast.closing.is_cancelled()
}

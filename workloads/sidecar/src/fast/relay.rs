//! Relaying the upstream's response body to the client through the connection's reused
//! buffers: a declared length byte for byte within the upstream deadline, a chunked body as it
//! is (boundaries tracked by [`super::chunked`]), a close-delimited body re-framed as chunks.
//! The slot is held until the body has ended, failed, or the client left (the
//! [`crate::limit`] semantics); a stream (no declared length) is counted in
//! `sidecar_streams_open`, exempt from the deadline, holds no buffer while idle, and is ended
//! with a last chunk at a chunk boundary when the server stops accepting.

use std::io::Write;

use bytes::Buf;
use tokio::net::TcpStream;
use tokio::sync::OwnedSemaphorePermit;

use super::chunked::Chunks;
use super::head::{Framing, ResponseHead};
use super::io::{Idle, client_gone, read_some, write_all};
use super::state::{Conn, UPSTREAM_READ, io_kind};
use crate::errors::FailureKind;
use crate::proxy::StreamGuard;

/// Read size for streams (events are small; the buffer is freed between them).
const STREAM_READ: usize = 4 * 1024;
/// The last chunk of a body the sidecar frames or ends itself.
const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

/// How a relayed body ended.
pub(super) enum Relayed {
    /// Completely relayed; the upstream connection may carry another request.
    Complete { reusable: bool },
    /// A stream ended cleanly because the server stops accepting.
    Ended,
    /// The client went away (or could not be written to).
    ClientGone,
    /// The upstream broke off or stalled past the deadline (counted as an upstream failure).
    Failed,
}

enum Step {
    Done(Relayed),
    Fail(FailureKind),
}

/// Relays the body of `response` (whose head for the client is in `conn.out`), holding
/// `permit` until it is over.
pub(super) async fn relay(
    conn: &mut Conn<'_>,
    upstream: &TcpStream,
    response: ResponseHead,
    permit: OwnedSemaphorePermit,
) -> Relayed {
    let _slot = permit;
    let metrics = &conn.fast.metrics;
    let _stream = response.framing.is_stream().then(|| {
        conn.upstream_timer.set(None);
        StreamGuard::open(metrics)
    });
    let step = match response.framing {
        Framing::Empty => match write_all(conn.client, &conn.out).await {
            Ok(()) => Step::Done(Relayed::Complete {
                reusable: response.reusable && conn.ubuf.is_empty(),
            }),
            Err(_) => Step::Done(Relayed::ClientGone),
        },
        Framing::Length(len) => length(conn, upstream, len, response.reusable).await,
        Framing::Chunked => chunked(conn, upstream, response.reusable).await,
        Framing::Close => close_delimited(conn, upstream).await,
    };
    match step {
        Step::Done(relayed) => relayed,
        Step::Fail(kind) => {
            metrics.upstream_failure(kind.reason());
            Relayed::Failed
        }
    }
}

/// Maps a read of the upstream body: EOF before the end is a reset.
fn body_read(read: std::io::Result<usize>) -> Option<Step> {
    match read {
        Ok(0) => Some(Step::Fail(FailureKind::Reset)),
        Ok(_) => None,
        Err(e) => Some(Step::Fail(io_kind(e))),
    }
}

async fn length(conn: &mut Conn<'_>, upstream: &TcpStream, len: u64, reusable: bool) -> Step {
    let mut left = len;
    let take = conn
        .ubuf
        .len()
        .min(usize::try_from(left).unwrap_or(usize::MAX));
    conn.out.extend_from_slice(&conn.ubuf[..take]);
    conn.ubuf.advance(take);
    left -= take as u64;
    if write_all(conn.client, &conn.out).await.is_err() {
        return Step::Done(Relayed::ClientGone);
    }
    let limit = conn.fast.max_head;
    while left > 0 {
        let read = tokio::select! {
            biased;
            read = read_some(upstream, &mut conn.ubuf, UPSTREAM_READ, Idle::Keep) => read,
            () = client_gone(conn.client, &mut conn.cbuf, limit, Idle::Keep) => return Step::Done(Relayed::ClientGone),
            () = conn.upstream_timer.expired() => return Step::Fail(FailureKind::Timeout),
        };
        if let Some(step) = body_read(read) {
            return step;
        }
        let take = conn
            .ubuf
            .len()
            .min(usize::try_from(left).unwrap_or(usize::MAX));
        if write_all(conn.client, &conn.ubuf[..take]).await.is_err() {
            return Step::Done(Relayed::ClientGone);
        }
        conn.ubuf.advance(take);
        left -= take as u64;
    }
    Step::Done(Relayed::Complete {
        reusable: reusable && conn.ubuf.is_empty(),
    })
}

async fn chunked(conn: &mut Conn<'_>, upstream: &TcpStream, reusable: bool) -> Step {
    let fast = conn.fast;
    let mut chunks = Chunks::default();
    let mut end = false;
    loop {
        if !conn.ubuf.is_empty() {
            let Ok(used) = chunks.feed(&conn.ubuf) else {
                return Step::Fail(FailureKind::Other);
            };
            conn.out.extend_from_slice(&conn.ubuf[..used]);
            conn.ubuf.advance(used);
        }
        let finished = if chunks.is_done() {
            Some(Relayed::Complete {
                reusable: reusable && conn.ubuf.is_empty(),
            })
        } else if end && chunks.at_boundary() {
            conn.out.extend_from_slice(LAST_CHUNK);
            Some(Relayed::Ended)
        } else {
            None
        };
        if !conn.out.is_empty() {
            if write_all(conn.client, &conn.out).await.is_err() {
                return Step::Done(Relayed::ClientGone);
            }
            conn.out.clear();
        }
        if let Some(relayed) = finished {
            return Step::Done(relayed);
        }
        conn.release_idle();
        let read = tokio::select! {
            biased;
            () = fast.closing.cancelled(), if !end => {
                end = true;
                continue;
            }
            read = read_some(upstream, &mut conn.ubuf, STREAM_READ, Idle::Release) => read,
            () = client_gone(conn.client, &mut conn.cbuf, fast.max_head, Idle::Release) => return Step::Done(Relayed::ClientGone),
        };
        if let Some(step) = body_read(read) {
            return step;
        }
    }
}

async fn close_delimited(conn: &mut Conn<'_>, upstream: &TcpStream) -> Step {
    let fast = conn.fast;
    let mut end = false;
    let mut eof = false;
    loop {
        if !conn.ubuf.is_empty() {
            // Writing into a Vec cannot fail.
            let _ = write!(conn.out, "{:x}\r\n", conn.ubuf.len());
            conn.out.extend_from_slice(&conn.ubuf);
            conn.out.extend_from_slice(b"\r\n");
            conn.ubuf.clear();
        }
        if end || eof {
            conn.out.extend_from_slice(LAST_CHUNK);
        }
        if !conn.out.is_empty() {
            if write_all(conn.client, &conn.out).await.is_err() {
                return Step::Done(Relayed::ClientGone);
            }
            conn.out.clear();
        }
        if eof {
            return Step::Done(Relayed::Complete { reusable: false });
        }
        if end {
            return Step::Done(Relayed::Ended);
        }
        conn.release_idle();
        let read = tokio::select! {
            biased;
            () = fast.closing.cancelled() => {
                end = true;
                continue;
            }
            read = read_some(upstream, &mut conn.ubuf, STREAM_READ, Idle::Release) => read,
            () = client_gone(conn.client, &mut conn.cbuf, fast.max_head, Idle::Release) => return Step::Done(Relayed::ClientGone),
        };
        match read {
            Ok(0) => eof = true,
            Ok(_) => {}
            Err(e) => return Step::Fail(io_kind(e)),
        }
    }
}

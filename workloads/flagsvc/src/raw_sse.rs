//! The raw path of `GET /stream`: a connection whose first request is a plain `GET /stream`
//! (recognised by [`stream_head_len`] on peeked bytes) is served without hyper, so an idle
//! stream holds no 8 KiB read and write buffers — only its task, the event stream's state and
//! the socket. The response is the one the general path sends (same head fields, chunked
//! events, the terminating chunk when the stream ends); the connection closes after it.

use std::io::Write as _;
use std::time::Instant;

use futures::StreamExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::routes::App;

/// Most headers a raw-path request head may have; more goes to hyper.
const MAX_HEADERS: usize = 32;

/// The request-head fields the raw path leaves to hyper: anything with a body, an expectation
/// or a protocol change.
const GENERAL_ONLY: [&str; 4] = ["content-length", "transfer-encoding", "expect", "upgrade"];

/// Length of the request head at the start of `bytes` when it is a complete HTTP/1.1
/// `GET /stream` (any query) without a body, expectation or upgrade; `None` for anything else,
/// which hyper then serves (or refuses) as before.
pub fn stream_head_len(bytes: &[u8]) -> Option<usize> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    let httparse::Status::Complete(len) = req.parse(bytes).ok()? else {
        return None;
    };
    let path = req.path?.split('?').next()?;
    let plain = req.method == Some("GET")
        && path == "/stream"
        && req.version == Some(1)
        && !req
            .headers
            .iter()
            .any(|h| GENERAL_ONLY.iter().any(|g| h.name.eq_ignore_ascii_case(g)));
    plain.then_some(len)
}

/// Serves the stream on `stream`, whose first `head_len` bytes are the request head, until the
/// event stream ends (server shutdown) or the client leaves.
pub(crate) async fn serve(app: App, mut stream: TcpStream, head_len: usize, started: Instant) {
    if consume(&mut stream, head_len).await.is_err() {
        return;
    }
    let mut events = app.stream_events();
    let head = app.stream_head();
    app.observe_stream(started.elapsed());
    if stream.write_all(&head).await.is_err() {
        return;
    }
    drop(head);
    let mut probe = [0u8; 64];
    loop {
        tokio::select! {
            next = events.next() => match next {
                Some(Ok(frame)) => {
                    let Ok(data) = frame.into_data() else { continue };
                    if stream.write_all(&chunk(&data)).await.is_err() {
                        return;
                    }
                }
                None => break,
                Some(Err(never)) => match never {},
            },
            ready = stream.readable() => {
                if ready.is_err() {
                    return;
                }
                // Bytes after the head (a pipelined request) are read and dropped; EOF or an
                // error means the client left.
                match stream.try_read(&mut probe) {
                    Ok(0) => return,
                    Err(e) if e.kind() != std::io::ErrorKind::WouldBlock => return,
                    _ => {}
                }
            }
        }
    }
    if stream.write_all(b"0\r\n\r\n").await.is_ok() {
        let _ = stream.shutdown().await;
    }
}

/// Reads and drops the request head the peek saw.
async fn consume(stream: &mut TcpStream, head_len: usize) -> std::io::Result<()> {
    let mut head = vec![0u8; head_len];
    stream.read_exact(&mut head).await.map(|_| ())
}

/// `data` as one chunk of a chunked body.
fn chunk(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 12);
    let _ = write!(out, "{:x}\r\n", data.len());
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_get_stream_takes_the_raw_path() {
        let head = b"GET /stream HTTP/1.1\r\nhost: x\r\naccept: text/event-stream\r\n\r\n";
        assert_eq!(stream_head_len(head), Some(head.len()));
        let with_query = b"GET /stream?since=4 HTTP/1.1\r\nhost: x\r\n\r\n";
        assert_eq!(stream_head_len(with_query), Some(with_query.len()));
        let mut pipelined = head.to_vec();
        pipelined.extend_from_slice(b"GET /flags/a HTTP/1.1\r\n");
        assert_eq!(stream_head_len(&pipelined), Some(head.len()));
    }

    #[test]
    fn everything_else_goes_to_hyper() {
        for head in [
            &b"GET /stream HTTP/1.1\r\nhost: x\r\n"[..],
            b"GET /stream HTTP/1.0\r\n\r\n",
            b"POST /stream HTTP/1.1\r\nhost: x\r\n\r\n",
            b"GET /streams HTTP/1.1\r\nhost: x\r\n\r\n",
            b"GET /flags/a HTTP/1.1\r\nhost: x\r\n\r\n",
            b"GET /stream HTTP/1.1\r\ncontent-length: 0\r\n\r\n",
            b"GET /stream HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"GET /stream HTTP/1.1\r\nexpect: 100-continue\r\n\r\n",
            b"GET /stream HTTP/1.1\r\nupgrade: websocket\r\n\r\n",
            b"GET http://x/stream HTTP/1.1\r\n\r\n",
            b"\x16\x03\x01garbage",
            b"",
        ] {
            assert_eq!(
                stream_head_len(head),
                None,
                "{:?}",
                String::from_utf8_lossy(head)
            );
        }
        let mut many = b"GET /stream HTTP/1.1\r\n".to_vec();
        for i in 0..=MAX_HEADERS {
            many.extend_from_slice(format!("x-{i}: y\r\n").as_bytes());
        }
        many.extend_from_slice(b"\r\n");
        assert_eq!(stream_head_len(&many), None);
    }

    #[test]
    fn events_are_framed_as_chunks() {
        assert_eq!(chunk(b"id: 1\n\n"), b"7\r\nid: 1\n\n\r\n");
        let long = vec![b'a'; 300];
        assert!(chunk(&long).starts_with(b"12c\r\n"));
    }
}

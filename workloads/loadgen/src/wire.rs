//! HTTP/1.1 on the wire for the keep-alive fast path: the request encoded once ([`encode_request`])
//! and an incremental response reader ([`ResponseReader`]) over a reused buffer ([`ReadBuf`]),
//! with `httparse` for the head and the chunk-size lines. No I/O here: the caller reads from the
//! socket into the buffer and calls [`ResponseReader::advance`] until the response is complete,
//! or [`ResponseReader::eof`] when the peer closed.
//!
//! Body framing follows RFC 9112 §6.3 (the order hyper applies too): no body for 1xx/204/304; a
//! `transfer-encoding` whose last coding is `chunked` is read chunk by chunk (extensions and
//! trailers skipped); any other `transfer-encoding`, or neither header, is read until the peer
//! closes; otherwise `content-length` bytes (conflicting lengths are an error). Interim 1xx
//! responses are skipped; `101` is an error (nothing here upgrades). Body bytes are discarded as
//! they arrive; only the head and chunk-size lines need to fit in the buffer.
//!
//! A reader remembers the last final head it parsed ([`head_memo`]), so a repeated head is not
//! parsed again.

use http::HeaderMap;

use crate::error_kind::ErrorKind;
use head_memo::HeadMemo;

mod head_memo;

/// Buffer size a connection starts with.
pub(crate) const INITIAL_BUF: usize = 8 * 1024;
/// Largest head (or chunk-size/trailer line) accepted; a longer one is a protocol error.
pub(crate) const MAX_BUF: usize = 256 * 1024;
/// Most response header fields accepted.
const MAX_HEADERS: usize = 96;

/// Encodes `GET path HTTP/1.1` with `headers` (what hyper would send for a body-less request).
pub(crate) fn encode_request(path: &str, headers: &HeaderMap) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + path.len());
    out.extend_from_slice(b"GET ");
    out.extend_from_slice(path.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    for (name, value) in headers {
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out
}

/// A read buffer reused for every response of a connection: bytes `start..end` are unread.
#[derive(Debug)]
pub(crate) struct ReadBuf {
    data: Vec<u8>,
    start: usize,
    end: usize,
}

impl Default for ReadBuf {
    fn default() -> Self {
        Self {
            data: vec![0; INITIAL_BUF],
            start: 0,
            end: 0,
        }
    }
}

impl ReadBuf {
    /// The unread bytes.
    pub(crate) fn unread(&self) -> &[u8] {
        &self.data[self.start..self.end]
    }

    fn consume(&mut self, n: usize) {
        self.start += n;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
    }

    /// Forgets everything unread (a new connection).
    pub(crate) fn clear(&mut self) {
        self.start = 0;
        self.end = 0;
    }

    /// Room to read into: moves unread bytes to the front or grows the buffer (up to
    /// [`MAX_BUF`]) when it is full; a full buffer at the limit is a protocol error.
    pub(crate) fn spare(&mut self) -> Result<&mut [u8], ErrorKind> {
        if self.end == self.data.len() {
            if self.start > 0 {
                self.data.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            } else if self.data.len() < MAX_BUF {
                let len = (self.data.len() * 2).min(MAX_BUF);
                self.data.resize(len, 0);
            } else {
                return Err(ErrorKind::Other);
            }
        }
        Ok(&mut self.data[self.end..])
    }

    /// `n` bytes were read into [`ReadBuf::spare`].
    pub(crate) fn filled(&mut self, n: usize) {
        self.end = (self.end + n).min(self.data.len());
    }

    #[cfg(test)]
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while !rest.is_empty() {
            let spare = self.spare().expect("test input fits");
            let n = spare.len().min(rest.len());
            spare[..n].copy_from_slice(&rest[..n]);
            self.filled(n);
            rest = &rest[n..];
        }
    }
}

/// The `x-pod` of a response, kept in a reused string (no allocation once it has grown).
#[derive(Debug, Default)]
pub(crate) struct PodName {
    name: String,
    present: bool,
}

impl PodName {
    pub(crate) fn get(&self) -> Option<&str> {
        self.present.then_some(self.name.as_str())
    }

    pub(crate) fn clear(&mut self) {
        self.present = false;
    }

    /// Takes a header value; one that is not visible ASCII counts as absent (as
    /// `HeaderValue::to_str` would refuse it).
    fn set(&mut self, value: &[u8]) {
        if self.name.as_bytes() == value {
            // Checked when it was stored: the same pod as last time, the common case.
            self.present = true;
            return;
        }
        let visible = value.iter().all(|&b| b == b'\t' || (32..127).contains(&b));
        self.present = visible;
        if visible {
            self.name.clear();
            // Visible ASCII is UTF-8.
            self.name
                .push_str(std::str::from_utf8(value).unwrap_or_default());
        }
    }
}

/// A complete response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Complete {
    pub status: u16,
    /// The connection cannot carry another request (`connection: close`, HTTP/1.0 without
    /// keep-alive, or a body delimited by the close).
    pub close: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Head,
    Length(u64),
    ChunkSize,
    ChunkData(u64),
    ChunkEnd,
    Trailers,
    UntilEof,
}

/// Reads responses incrementally, one at a time; kept for a connection's life so that its
/// [`HeadMemo`] spares parsing repeated heads.
#[derive(Debug)]
pub(crate) struct ResponseReader {
    phase: Phase,
    status: u16,
    close: bool,
    memo: HeadMemo,
}

impl Default for ResponseReader {
    fn default() -> Self {
        Self {
            phase: Phase::Head,
            status: 0,
            close: false,
            memo: HeadMemo::default(),
        }
    }
}

/// What the head says about the body.
#[derive(Debug, Clone, Copy)]
struct Head {
    status: u16,
    len: usize,
    close: bool,
    phase: Option<Phase>,
}

fn tokens(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value.split(|&b| b == b',').map(|t| t.trim_ascii())
}

fn parse_length(value: &[u8]) -> Option<u64> {
    let v = value.trim_ascii();
    if v.is_empty() {
        return None;
    }
    v.iter().try_fold(0u64, |n, &b| {
        b.is_ascii_digit()
            .then(|| n.checked_mul(10)?.checked_add(u64::from(b - b'0')))
            .flatten()
    })
}

/// The response headers this reader acts on.
#[derive(Clone, Copy)]
enum Known {
    Pod,
    ContentLength,
    TransferEncoding,
    Connection,
}

/// Which known header `name` is (ASCII case-insensitive), looked up by length first: most
/// names of a response are compared with nothing.
fn known(name: &[u8]) -> Option<Known> {
    let (expected, which): (&[u8], Known) = match name.len() {
        5 => (b"x-pod", Known::Pod),
        10 => (b"connection", Known::Connection),
        14 => (b"content-length", Known::ContentLength),
        17 => (b"transfer-encoding", Known::TransferEncoding),
        _ => return None,
    };
    // `expected` is lower-case letters and '-': OR-ing 0x20 lower-cases a letter and leaves '-'
    // alone, and no other token character (RFC 9110 §5.6.2) maps onto either.
    let same = name.iter().zip(expected).all(|(&b, &e)| b | 0x20 == e);
    same.then_some(which)
}

/// Parses a head, remembering a final one in `memo`.
fn parse_head(
    bytes: &[u8],
    pod: &mut PodName,
    memo: &mut HeadMemo,
) -> Result<Option<Head>, ErrorKind> {
    if let Some(head) = memo.lookup(bytes, pod) {
        return Ok(Some(head));
    }
    let mut pod_at = None;
    let head = parse_head_bytes(bytes, pod, &mut pod_at)?;
    if let Some(head) = head {
        memo.remember(bytes, head, pod_at);
    }
    Ok(head)
}

fn parse_head_bytes(
    bytes: &[u8],
    pod: &mut PodName,
    pod_at: &mut Option<(usize, usize)>,
) -> Result<Option<Head>, ErrorKind> {
    if bytes.is_empty() {
        return Ok(None);
    }
    let mut headers =
        [const { std::mem::MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut []);
    let len = match httparse::ParserConfig::default().parse_response_with_uninit_headers(
        &mut response,
        bytes,
        &mut headers,
    ) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(_) => return Err(ErrorKind::Other),
    };
    let status = response.code.ok_or(ErrorKind::Other)?;
    if (100..200).contains(&status) {
        if status == 101 {
            return Err(ErrorKind::Other);
        }
        return Ok(Some(Head {
            status,
            len,
            close: false,
            phase: None,
        }));
    }
    let mut close = false;
    let mut keep_alive = false;
    let mut length: Option<u64> = None;
    let mut transfer: Option<bool> = None; // Some(last coding is chunked)
    pod.clear();
    for h in response.headers.iter() {
        match known(h.name.as_bytes()) {
            None => {}
            Some(Known::Pod) => {
                pod.set(h.value);
                // The value is a slice of `bytes`: its offset there.
                *pod_at = h
                    .value
                    .as_ptr()
                    .addr()
                    .checked_sub(bytes.as_ptr().addr())
                    .map(|from| (from, from + h.value.len()));
            }
            Some(Known::ContentLength) => {
                let n = parse_length(h.value).ok_or(ErrorKind::Other)?;
                if length.is_some_and(|l| l != n) {
                    return Err(ErrorKind::Other);
                }
                length = Some(n);
            }
            Some(Known::TransferEncoding) => {
                let last = tokens(h.value).filter(|t| !t.is_empty()).last();
                transfer = Some(last.is_some_and(|t| t.eq_ignore_ascii_case(b"chunked")));
            }
            Some(Known::Connection) => {
                for t in tokens(h.value) {
                    close |= t.eq_ignore_ascii_case(b"close");
                    keep_alive |= t.eq_ignore_ascii_case(b"keep-alive");
                }
            }
        }
    }
    if response.version == Some(0) && !keep_alive {
        close = true;
    }
    let phase = if status == 204 || status == 304 {
        None
    } else {
        match (transfer, length) {
            (Some(true), _) => Some(Phase::ChunkSize),
            (Some(false), _) | (None, None) => {
                close = true;
                Some(Phase::UntilEof)
            }
            (None, Some(0)) => None,
            (None, Some(n)) => Some(Phase::Length(n)),
        }
    };
    Ok(Some(Head {
        status,
        len,
        close,
        phase,
    }))
}

impl ResponseReader {
    /// Consumes what it can of `buf`. `Ok(None)`: more bytes are needed.
    pub(crate) fn advance(
        &mut self,
        buf: &mut ReadBuf,
        pod: &mut PodName,
    ) -> Result<Option<Complete>, ErrorKind> {
        loop {
            let avail = buf.unread();
            match self.phase {
                Phase::Head => {
                    let Some(head) = parse_head(avail, pod, &mut self.memo)? else {
                        return Ok(None);
                    };
                    buf.consume(head.len);
                    match head.phase {
                        // An interim response: the final one follows.
                        None if head.status < 200 => {}
                        None => return Ok(Some(self.done_with(head.status, head.close))),
                        Some(phase) => {
                            self.status = head.status;
                            self.close = head.close;
                            self.phase = phase;
                        }
                    }
                }
                Phase::Length(rest) => {
                    let n = rest.min(avail.len() as u64);
                    buf.consume(n as usize);
                    if n == rest {
                        return Ok(Some(self.done()));
                    }
                    self.phase = Phase::Length(rest - n);
                    return Ok(None);
                }
                Phase::ChunkSize => match httparse::parse_chunk_size(avail) {
                    Ok(httparse::Status::Complete((len, size))) => {
                        buf.consume(len);
                        self.phase = if size == 0 {
                            Phase::Trailers
                        } else {
                            Phase::ChunkData(size)
                        };
                    }
                    Ok(httparse::Status::Partial) => return Ok(None),
                    Err(_) => return Err(ErrorKind::Other),
                },
                Phase::ChunkData(rest) => {
                    let n = rest.min(avail.len() as u64);
                    buf.consume(n as usize);
                    if n < rest {
                        self.phase = Phase::ChunkData(rest - n);
                        return Ok(None);
                    }
                    self.phase = Phase::ChunkEnd;
                }
                Phase::ChunkEnd => {
                    if avail.len() < 2 {
                        return match avail {
                            [] | [b'\r'] => Ok(None),
                            _ => Err(ErrorKind::Other),
                        };
                    }
                    if &avail[..2] != b"\r\n" {
                        return Err(ErrorKind::Other);
                    }
                    buf.consume(2);
                    self.phase = Phase::ChunkSize;
                }
                Phase::Trailers => {
                    let Some(at) = avail.windows(2).position(|w| w == b"\r\n") else {
                        return Ok(None);
                    };
                    buf.consume(at + 2);
                    if at == 0 {
                        return Ok(Some(self.done()));
                    }
                }
                Phase::UntilEof => {
                    let n = avail.len();
                    buf.consume(n);
                    return Ok(None);
                }
            }
        }
    }

    /// The peer closed the connection: complete if the body was delimited by the close, else
    /// the response was cut short (`reset`).
    pub(crate) fn eof(&mut self) -> Result<Complete, ErrorKind> {
        match self.phase {
            Phase::UntilEof => Ok(self.done()),
            _ => Err(ErrorKind::Reset),
        }
    }

    fn done(&mut self) -> Complete {
        let (status, close) = (self.status, self.close);
        self.done_with(status, close)
    }

    fn done_with(&mut self, status: u16, close: bool) -> Complete {
        self.start();
        Complete { status, close }
    }

    /// Forgets a response in progress (one that failed or timed out): the next byte read is
    /// the start of a new response. The memo stays.
    pub(crate) fn start(&mut self) {
        self.phase = Phase::Head;
        self.status = 0;
        self.close = false;
    }
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;
    use http::header::{HOST, USER_AGENT};

    use super::*;

    /// Feeds `input` in pieces of `step` bytes; returns the outcome, the pod and what is left
    /// unread after a complete response.
    fn read(
        input: &[u8],
        step: usize,
        eof: bool,
    ) -> (Result<Complete, ErrorKind>, Option<String>, Vec<u8>) {
        let mut buf = ReadBuf::default();
        let mut pod = PodName::default();
        let mut reader = ResponseReader::default();
        for piece in input.chunks(step.max(1)) {
            buf.push(piece);
            match reader.advance(&mut buf, &mut pod) {
                Ok(Some(c)) => {
                    let rest = buf.unread().to_vec();
                    return (Ok(c), pod.get().map(str::to_string), rest);
                }
                Ok(None) => {}
                Err(e) => return (Err(e), None, Vec::new()),
            }
        }
        let outcome = if eof {
            reader.eof()
        } else {
            Err(ErrorKind::Timeout)
        };
        (outcome, pod.get().map(str::to_string), Vec::new())
    }

    fn ok(status: u16, close: bool) -> Result<Complete, ErrorKind> {
        Ok(Complete { status, close })
    }

    #[test]
    fn the_request_is_encoded_once_with_its_headers() {
        let mut h = HeaderMap::new();
        h.insert(HOST, HeaderValue::from_static("127.0.0.1:80"));
        h.insert(USER_AGENT, HeaderValue::from_static("loadgen/0.1"));
        h.append("x-a", HeaderValue::from_static("1"));
        h.append("x-a", HeaderValue::from_static("2"));
        let bytes = encode_request("/p?q=1", &h);
        assert_eq!(
            std::str::from_utf8(&bytes).unwrap(),
            "GET /p?q=1 HTTP/1.1\r\nhost: 127.0.0.1:80\r\nuser-agent: loadgen/0.1\r\n\
             x-a: 1\r\nx-a: 2\r\n\r\n"
        );
        let mut headers = [httparse::EMPTY_HEADER; 8];
        let mut req = httparse::Request::new(&mut headers);
        assert_eq!(
            req.parse(&bytes).unwrap(),
            httparse::Status::Complete(bytes.len())
        );
    }

    #[test]
    fn content_length_bodies_in_any_split() {
        let input = b"HTTP/1.1 200 OK\r\nx-pod: web-1\r\ncontent-length: 11\r\n\r\nhello world";
        for step in [1, 2, 7, 20, input.len()] {
            let (r, pod, rest) = read(input, step, false);
            assert_eq!(r, ok(200, false), "step {step}");
            assert_eq!(pod.as_deref(), Some("web-1"), "step {step}");
            assert!(rest.is_empty());
        }
    }

    #[test]
    fn chunked_bodies_with_extensions_and_trailers() {
        let input = b"HTTP/1.1 503 Service Unavailable\r\nTransfer-Encoding: chunked\r\n\
            X-Pod: b\r\n\r\n5;ext=1\r\nhello\r\nA\r\n0123456789\r\n0\r\nx-trailer: t\r\n\r\n";
        for step in [1, 3, 16, input.len()] {
            let (r, pod, rest) = read(input, step, false);
            assert_eq!(r, ok(503, false), "step {step}");
            assert_eq!(pod.as_deref(), Some("b"));
            assert!(rest.is_empty(), "step {step}: {rest:?}");
        }
        let bad_end = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nokXX0\r\n\r\n";
        assert_eq!(read(bad_end, 4, false).0, Err(ErrorKind::Other));
        let bad_size = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n";
        assert_eq!(read(bad_size, 64, false).0, Err(ErrorKind::Other));
    }

    #[test]
    fn connection_close_and_http10_end_the_connection() {
        let close = b"HTTP/1.1 200 OK\r\nConnection: close\r\ncontent-length: 2\r\n\r\nok";
        assert_eq!(read(close, 5, false).0, ok(200, true));
        let http10 = b"HTTP/1.0 200 OK\r\ncontent-length: 2\r\n\r\nok";
        assert_eq!(read(http10, 5, false).0, ok(200, true));
        let http10_ka = b"HTTP/1.0 200 OK\r\nconnection: Keep-Alive\r\ncontent-length: 2\r\n\r\nok";
        assert_eq!(read(http10_ka, 5, false).0, ok(200, false));
    }

    #[test]
    fn a_body_without_length_ends_at_the_close() {
        let input = b"HTTP/1.1 200 OK\r\nx-pod: p\r\n\r\nuntil the end";
        let (r, pod, _) = read(input, 4, true);
        assert_eq!(r, ok(200, true));
        assert_eq!(pod.as_deref(), Some("p"));
        // Other transfer codings cannot be framed: read to the close as well.
        let gzip = b"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n\r\nxx";
        assert_eq!(read(gzip, 64, true).0, ok(200, true));
    }

    #[test]
    fn responses_cut_short_are_reset() {
        let cases: [&[u8]; 4] = [
            b"",
            b"HTTP/1.1 200 OK\r\ncontent-le",
            b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort",
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhel",
        ];
        for input in cases {
            assert_eq!(
                read(input, 3, true).0,
                Err(ErrorKind::Reset),
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn no_body_statuses_interim_responses_and_protocol_errors() {
        let no_content = b"HTTP/1.1 204 No Content\r\ncontent-length: 5\r\n\r\n";
        assert_eq!(read(no_content, 64, false).0, ok(204, false));
        let interim = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nx-pod: q\r\ncontent-length: 0\r\n\r\n";
        let (r, pod, _) = read(interim, 9, false);
        assert_eq!(r, ok(200, false));
        assert_eq!(pod.as_deref(), Some("q"));
        let upgrade = b"HTTP/1.1 101 Switching Protocols\r\n\r\n";
        assert_eq!(read(upgrade, 64, false).0, Err(ErrorKind::Other));
        let garbage = b"SSH-2.0-OpenSSH\r\n\r\n";
        assert_eq!(read(garbage, 64, false).0, Err(ErrorKind::Other));
        let conflicting = b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n";
        assert_eq!(read(conflicting, 64, false).0, Err(ErrorKind::Other));
        let not_a_number = b"HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n";
        assert_eq!(read(not_a_number, 64, false).0, Err(ErrorKind::Other));
    }

    #[test]
    fn bytes_after_the_response_stay_unread() {
        let input = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nokEXTRA";
        let (r, _, rest) = read(input, input.len(), false);
        assert_eq!(r, ok(200, false));
        assert_eq!(rest, b"EXTRA");
    }

    #[test]
    fn pods_that_are_not_visible_ascii_are_unknown_and_absent_pods_clear() {
        let mut pod = PodName::default();
        pod.set(b"a");
        assert_eq!(pod.get(), Some("a"));
        pod.set(b"caf\xc3\xa9");
        assert_eq!(pod.get(), None);
        pod.set(b"b");
        assert_eq!(pod.get(), Some("b"));
        let input = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
        let mut buf = ReadBuf::default();
        buf.push(input);
        let mut reader = ResponseReader::default();
        assert_eq!(reader.advance(&mut buf, &mut pod), ok(200, false).map(Some));
        assert_eq!(pod.get(), None);
    }

    #[test]
    fn heads_grow_the_buffer_up_to_the_limit() {
        let big = format!(
            "HTTP/1.1 200 OK\r\nx-big: {}\r\ncontent-length: 0\r\n\r\n",
            "v".repeat(INITIAL_BUF * 3)
        );
        assert_eq!(read(big.as_bytes(), 4096, false).0, ok(200, false));
        let mut buf = ReadBuf::default();
        let mut pod = PodName::default();
        let mut reader = ResponseReader::default();
        buf.push(b"HTTP/1.1 200 OK\r\nx-big: ");
        let filler = vec![b'v'; 1024];
        let mut outcome = Ok(None);
        for _ in 0..(MAX_BUF / filler.len() + 2) {
            let Ok(spare) = buf.spare() else {
                outcome = Err(ErrorKind::Other);
                break;
            };
            let n = spare.len().min(filler.len());
            spare[..n].copy_from_slice(&filler[..n]);
            buf.filled(n);
            outcome = reader.advance(&mut buf, &mut pod);
        }
        assert_eq!(outcome, Err(ErrorKind::Other));
    }
}

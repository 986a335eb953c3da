//! Message heads on the fast path: a client's request head parsed with `httparse` from the
//! connection's buffer and either accepted (then rewritten for the upstream, hop-by-hop headers
//! stripped) or handed to the general path; the upstream's response head parsed and rewritten
//! for the client, with the framing of its body.
//!
//! The fast path takes only what it can carry exactly like the general path does: HTTP/1.1,
//! origin-form targets, no request `transfer-encoding`, no `expect`, no upgrade, at most one
//! plain `content-length`. Everything else (and every malformed or oversized head, which hyper
//! answers with 400/431) goes to the general path.

use std::mem::MaybeUninit;

use workload_common::headers::is_hop_by_hop;

/// Most headers a head may have on the fast path (hyper's default limit is 100 as well).
pub(crate) const MAX_HEADERS: usize = 100;

/// What the fast path makes of the bytes buffered so far.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Parse<T> {
    /// The head is not complete yet.
    Partial,
    /// A complete head the fast path carries.
    Done(T),
    /// Not for the fast path: the general path takes the connection (with these bytes).
    Fallback,
}

/// A request head the fast path carries; its rewritten form is in the output buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RequestHead {
    /// Bytes of the head in the input buffer (the body, if any, follows).
    pub len: usize,
    /// Declared body length (0 without `content-length`).
    pub body: u64,
    /// `HEAD` request: the response has no body whatever its headers say.
    pub head_method: bool,
    /// The client asked to close the connection after this exchange.
    pub close: bool,
}

fn eq(a: &[u8], b: &str) -> bool {
    a.eq_ignore_ascii_case(b.as_bytes())
}

/// The names a `Connection` header lists (`close`, `keep-alive`, or other headers to drop).
fn connection_tokens<'a>(headers: &'a [httparse::Header<'a>]) -> impl Iterator<Item = &'a [u8]> {
    headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("connection"))
        .flat_map(|h| h.value.split(|b| *b == b','))
        .map(<[u8]>::trim_ascii)
        .filter(|t| !t.is_empty())
}

/// Most header names a `Connection` header may list on the fast path (more: general path).
const MAX_CONNECTION_TOKENS: usize = 8;

/// The names listed in `Connection`, collected once per head; `None` when there are more than
/// [`MAX_CONNECTION_TOKENS`].
fn listed<'a>(
    headers: &'a [httparse::Header<'a>],
) -> Option<([&'a [u8]; MAX_CONNECTION_TOKENS], usize)> {
    let mut tokens: [&[u8]; MAX_CONNECTION_TOKENS] = [&[]; MAX_CONNECTION_TOKENS];
    let mut n = 0;
    for token in connection_tokens(headers) {
        *tokens.get_mut(n)? = token;
        n += 1;
    }
    Some((tokens, n))
}

/// True when `name` must not be forwarded: a standard hop-by-hop header or one the
/// `Connection` header names (`listed`; the rule of `workload_common::headers::strip_hop_by_hop`).
fn dropped(name: &str, listed: &[&[u8]]) -> bool {
    is_hop_by_hop(name) || listed.iter().any(|t| eq(t, name))
}

/// Parses a decimal `content-length` value the way hyper does: digits only.
fn content_length(value: &[u8]) -> Option<u64> {
    if value.is_empty() || value.len() > 19 || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    value.iter().try_fold(0u64, |n, d| {
        n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    })
}

/// Parses the request head at the start of `buf`; on [`Parse::Done`] the head to send upstream
/// (with `host: {authority}` added when the client sent none) is written to `out`. `max_head`
/// is the largest head accepted (beyond it the general path answers 431).
pub(crate) fn parse_request(
    buf: &[u8],
    max_head: usize,
    authority: &str,
    out: &mut Vec<u8>,
) -> Parse<RequestHead> {
    let mut storage = [const { MaybeUninit::uninit() }; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut []);
    let len = match req.parse_with_uninit_headers(buf, &mut storage) {
        Ok(httparse::Status::Complete(len)) if len <= max_head => len,
        Ok(httparse::Status::Partial) if buf.len() < max_head => return Parse::Partial,
        _ => return Parse::Fallback,
    };
    let (Some(method), Some(path), Some(1)) = (req.method, req.path, req.version) else {
        return Parse::Fallback;
    };
    let route = path.split('?').next().unwrap_or(path);
    if method == "CONNECT" || !path.starts_with('/') || matches!(route, "/healthz" | "/readyz") {
        return Parse::Fallback;
    }
    let headers = &*req.headers;
    let mut body = None;
    let mut host = false;
    for h in headers {
        if eq(h.name.as_bytes(), "transfer-encoding")
            || eq(h.name.as_bytes(), "expect")
            || eq(h.name.as_bytes(), "upgrade")
        {
            return Parse::Fallback;
        }
        if eq(h.name.as_bytes(), "content-length") {
            match (body, content_length(h.value)) {
                (None, Some(n)) => body = Some(n),
                _ => return Parse::Fallback,
            }
        }
        host |= eq(h.name.as_bytes(), "host");
    }
    let Some((tokens, n)) = listed(headers) else {
        return Parse::Fallback;
    };
    let tokens = &tokens[..n];
    if tokens.iter().any(|t| eq(t, "upgrade")) {
        return Parse::Fallback;
    }
    let close = tokens.iter().any(|t| eq(t, "close"));
    out.clear();
    out.extend_from_slice(method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(path.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    if !host {
        out.extend_from_slice(b"host: ");
        out.extend_from_slice(authority.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    write_headers(out, headers, tokens, |_| true);
    Parse::Done(RequestHead {
        len,
        body: body.unwrap_or(0),
        head_method: method == "HEAD",
        close,
    })
}

/// Appends every forwardable header (and `keep` says yes to) and the blank line.
fn write_headers(
    out: &mut Vec<u8>,
    headers: &[httparse::Header<'_>],
    listed: &[&[u8]],
    keep: impl Fn(&httparse::Header<'_>) -> bool,
) {
    for h in headers {
        if dropped(h.name, listed) || !keep(h) {
            continue;
        }
        out.extend_from_slice(h.name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(h.value);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
}

/// How the upstream's response body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// No body (`HEAD`, 204, 304).
    Empty,
    /// Exactly this many bytes.
    Length(u64),
    /// Chunked: relayed as it is, chunk boundaries tracked.
    Chunked,
    /// Until the upstream closes: relayed to the client as chunks.
    Close,
}

impl Framing {
    /// A body without a declared length is a stream (as on the general path).
    pub(crate) fn is_stream(self) -> bool {
        matches!(self, Self::Chunked | Self::Close)
    }
}

/// A parsed upstream response head; its rewritten form is in the output buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ResponseHead {
    /// Bytes of the head in the upstream buffer.
    pub len: usize,
    pub status: u16,
    pub framing: Framing,
    /// The upstream allows another request on this connection.
    pub reusable: bool,
}

/// Why an upstream response head is unusable (a 502 `other`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum BadResponse {
    #[error("malformed response head: {0}")]
    Malformed(String),
    #[error("response head larger than {0} bytes")]
    TooLarge(usize),
    #[error("unsupported response: {0}")]
    Unsupported(&'static str),
}

/// Parses the response head at the start of `buf`. `Ok(None)`: incomplete. A 1xx interim head
/// comes back with `framing: Empty` and `status < 200` for the caller to skip. On success the
/// head for the client is written to `out`, with `connection: close` when `close` is set.
pub(crate) fn parse_response(
    buf: &[u8],
    head_method: bool,
    close: bool,
    max_head: usize,
    out: &mut Vec<u8>,
) -> Result<Option<ResponseHead>, BadResponse> {
    let mut storage = [const { MaybeUninit::uninit() }; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut []);
    let len = match httparse::ParserConfig::default().parse_response_with_uninit_headers(
        &mut resp,
        buf,
        &mut storage,
    ) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) if buf.len() < max_head => return Ok(None),
        Ok(httparse::Status::Partial) => return Err(BadResponse::TooLarge(max_head)),
        Err(e) => return Err(BadResponse::Malformed(e.to_string())),
    };
    let (Some(version), Some(status)) = (resp.version, resp.code) else {
        return Err(BadResponse::Malformed("no status line".into()));
    };
    if status == 101 {
        return Err(BadResponse::Unsupported("101 switching protocols"));
    }
    if status < 200 {
        return Ok(Some(ResponseHead {
            len,
            status,
            framing: Framing::Empty,
            reusable: true,
        }));
    }
    let headers = &*resp.headers;
    let mut length = None;
    let mut chunked = None;
    for h in headers {
        if eq(h.name.as_bytes(), "content-length") {
            match (length, content_length(h.value)) {
                (None, Some(n)) => length = Some(n),
                (Some(a), Some(b)) if a == b => {}
                _ => return Err(BadResponse::Malformed("bad content-length".into())),
            }
        }
        if eq(h.name.as_bytes(), "transfer-encoding") {
            let last = h.value.rsplit(|b| *b == b',').next().unwrap_or(b"");
            chunked = Some(eq(last.trim_ascii(), "chunked"));
        }
    }
    let framing = if head_method || status == 204 || status == 304 {
        Framing::Empty
    } else {
        match (chunked, length) {
            (Some(true), _) => Framing::Chunked,
            (Some(false), _) => return Err(BadResponse::Unsupported("transfer-encoding")),
            (None, Some(n)) => Framing::Length(n),
            (None, None) => Framing::Close,
        }
    };
    let Some((tokens, n)) = listed(headers) else {
        return Err(BadResponse::Unsupported("too many connection options"));
    };
    let tokens = &tokens[..n];
    let reusable = framing != Framing::Close
        && if version == 1 {
            !tokens.iter().any(|t| eq(t, "close"))
        } else {
            tokens.iter().any(|t| eq(t, "keep-alive"))
        };
    out.clear();
    out.extend_from_slice(b"HTTP/1.1 ");
    // httparse accepts three-digit codes only.
    out.extend_from_slice(&[
        b'0' + (status / 100 % 10) as u8,
        b'0' + (status / 10 % 10) as u8,
        b'0' + (status % 10) as u8,
        b' ',
    ]);
    out.extend_from_slice(resp.reason.unwrap_or("").as_bytes());
    out.extend_from_slice(b"\r\n");
    // A chunked body keeps its own framing; a content-length next to it is not forwarded.
    let chunked_body = framing == Framing::Chunked;
    write_headers(out, headers, tokens, |h| {
        !(chunked_body && eq(h.name.as_bytes(), "content-length"))
    });
    out.truncate(out.len() - 2);
    if framing == Framing::Close {
        out.extend_from_slice(b"transfer-encoding: chunked\r\n");
    }
    if close {
        out.extend_from_slice(b"connection: close\r\n");
    }
    out.extend_from_slice(b"\r\n");
    Ok(Some(ResponseHead {
        len,
        status,
        framing,
        reusable,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(raw: &str) -> (Parse<RequestHead>, String) {
        let mut out = Vec::new();
        let parsed = parse_request(raw.as_bytes(), 8192, "up:80", &mut out);
        (parsed, String::from_utf8(out).unwrap())
    }

    #[test]
    fn a_plain_request_is_rewritten_without_hop_by_hop_headers() {
        let raw = "GET /a?b=1 HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, x-trace\r\n\
                   Keep-Alive: 5\r\nx-trace: 1\r\nTE: trailers\r\nx-pod: p\r\n\r\nNEXT";
        let (parsed, out) = request(raw);
        assert_eq!(
            parsed,
            Parse::Done(RequestHead {
                len: raw.len() - 4,
                body: 0,
                head_method: false,
                close: false
            })
        );
        assert_eq!(out, "GET /a?b=1 HTTP/1.1\r\nHost: x\r\nx-pod: p\r\n\r\n");
    }

    #[test]
    fn host_is_added_and_close_and_length_are_read() {
        let raw = "POST /e HTTP/1.1\r\ncontent-length: 12\r\nconnection: close\r\n\r\n";
        let (parsed, out) = request(raw);
        let Parse::Done(head) = parsed else {
            panic!("{parsed:?}")
        };
        assert_eq!((head.body, head.close), (12, true));
        assert_eq!(
            out,
            "POST /e HTTP/1.1\r\nhost: up:80\r\ncontent-length: 12\r\n\r\n"
        );
    }

    #[test]
    fn what_the_fast_path_cannot_carry_falls_back() {
        for raw in [
            "GET /x HTTP/1.0\r\n\r\n",
            "GET http://h/x HTTP/1.1\r\n\r\n",
            "CONNECT h:1 HTTP/1.1\r\n\r\n",
            "GET /healthz HTTP/1.1\r\n\r\n",
            "GET /readyz?x HTTP/1.1\r\n\r\n",
            "POST /x HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n",
            "POST /x HTTP/1.1\r\ncontent-length: 1\r\ncontent-length: 1\r\n\r\n",
            "POST /x HTTP/1.1\r\ncontent-length: +1\r\n\r\n",
            "POST /x HTTP/1.1\r\nexpect: 100-continue\r\ncontent-length: 1\r\n\r\n",
            "GET /x HTTP/1.1\r\nconnection: upgrade\r\n\r\n",
            "GARBAGE\r\n\r\n",
            "GET /x HTTP/9.9\r\n\r\n",
        ] {
            assert_eq!(request(raw).0, Parse::Fallback, "{raw:?}");
        }
        assert_eq!(request("GET /x HTTP/1.1\r\nhost: x\r\n").0, Parse::Partial);
        let big = format!("GET /x HTTP/1.1\r\nx: {}\r\n", "a".repeat(9000));
        assert_eq!(request(&big).0, Parse::Fallback, "over the head limit");
    }

    fn response(raw: &str, head: bool, close: bool) -> (ResponseHead, String) {
        let mut out = Vec::new();
        let parsed = parse_response(raw.as_bytes(), head, close, 8192, &mut out)
            .unwrap()
            .unwrap();
        (parsed, String::from_utf8(out).unwrap())
    }

    #[test]
    fn response_framing_and_reuse() {
        let (h, out) = response(
            "HTTP/1.1 200 OK\r\ncontent-length: 3\r\nx-pod: p\r\nkeep-alive: 5\r\n\r\nabc",
            false,
            false,
        );
        assert_eq!(
            (h.framing, h.reusable, h.status),
            (Framing::Length(3), true, 200)
        );
        assert_eq!(
            out,
            "HTTP/1.1 200 OK\r\ncontent-length: 3\r\nx-pod: p\r\n\r\n"
        );
        let (h, _) = response(
            "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-length: 9\r\n\r\n",
            false,
            false,
        );
        assert_eq!(h.framing, Framing::Chunked);
        let (h, out) = response("HTTP/1.1 200 OK\r\nx: 1\r\n\r\n", false, true);
        assert_eq!((h.framing, h.reusable), (Framing::Close, false));
        assert_eq!(
            out,
            "HTTP/1.1 200 OK\r\nx: 1\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
        );
        let (h, _) = response("HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n", true, false);
        assert_eq!(h.framing, Framing::Empty);
        let (h, _) = response("HTTP/1.1 304 Not Modified\r\n\r\n", false, false);
        assert_eq!((h.framing, h.reusable), (Framing::Empty, true));
        let (h, _) = response("HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n", false, false);
        assert!(!h.reusable, "HTTP/1.0 without keep-alive");
        let (h, _) = response(
            "HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 0\r\n\r\n",
            false,
            false,
        );
        assert!(!h.reusable);
        let (h, _) = response("HTTP/1.1 100 Continue\r\n\r\n", false, false);
        assert_eq!(h.status, 100);
    }

    #[test]
    fn bad_responses_are_errors() {
        let mut out = Vec::new();
        for raw in [
            "HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n",
            "HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n\r\n",
            "HTTP/1.1 101 Switching Protocols\r\n\r\n",
            "NOPE\r\n\r\n",
        ] {
            assert!(
                parse_response(raw.as_bytes(), false, false, 8192, &mut out).is_err(),
                "{raw:?}"
            );
        }
        assert_eq!(
            parse_response(b"HTTP/1.1 200 OK\r\n", false, false, 8192, &mut out),
            Ok(None)
        );
    }
}

//! The sidecar's own answers on the fast path (503 rejections, 502/504 upstream failures),
//! encoded once at start from the same responses the general path builds
//! ([`crate::edge::reply_response`]), so both paths answer byte for byte alike in status,
//! headers and body.

use http::StatusCode;
use workload_common::identity::IdentityHeaders;

use crate::edge::{failure_reply, rejection_reply, reply_response};
use crate::errors::FailureKind;
use crate::queue::Rejection;

/// One pre-encoded answer: the head without its blank line, and the body.
#[derive(Debug, Clone)]
pub(crate) struct Encoded {
    head: Vec<u8>,
    body: &'static str,
}

impl Encoded {
    fn new(
        reply: (StatusCode, &'static str, [(&'static str, &'static str); 2]),
        identity: &IdentityHeaders,
    ) -> Self {
        let body = reply.1;
        let resp = reply_response(reply, identity);
        let status = resp.status();
        let mut head = format!(
            "HTTP/1.1 {} {}\r\n",
            status.as_str(),
            status.canonical_reason().unwrap_or("")
        )
        .into_bytes();
        for (name, value) in resp.headers() {
            head.extend_from_slice(name.as_str().as_bytes());
            head.extend_from_slice(b": ");
            head.extend_from_slice(value.as_bytes());
            head.extend_from_slice(b"\r\n");
        }
        head.extend_from_slice(format!("content-length: {}\r\n", body.len()).as_bytes());
        Self { head, body }
    }

    /// Appends the response to `out`, announcing `connection: close` when `close`.
    pub(crate) fn write(&self, out: &mut Vec<u8>, close: bool) {
        out.extend_from_slice(&self.head);
        if close {
            out.extend_from_slice(b"connection: close\r\n");
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(self.body.as_bytes());
    }
}

/// Every answer the fast path generates.
#[derive(Debug, Clone)]
pub(crate) struct LocalReplies {
    queue_full: Encoded,
    queue_timeout: Encoded,
    failures: [Encoded; 4],
}

const KINDS: [FailureKind; 4] = [
    FailureKind::Connect,
    FailureKind::Reset,
    FailureKind::Timeout,
    FailureKind::Other,
];

impl LocalReplies {
    pub(crate) fn new(identity: &IdentityHeaders) -> Self {
        Self {
            queue_full: Encoded::new(rejection_reply(Rejection::QueueFull), identity),
            queue_timeout: Encoded::new(rejection_reply(Rejection::QueueTimeout), identity),
            failures: KINDS.map(|k| Encoded::new(failure_reply(k), identity)),
        }
    }

    pub(crate) fn rejection(&self, rejection: Rejection) -> &Encoded {
        match rejection {
            Rejection::QueueFull => &self.queue_full,
            Rejection::QueueTimeout => &self.queue_timeout,
        }
    }

    pub(crate) fn failure(&self, kind: FailureKind) -> &Encoded {
        let i = KINDS.iter().position(|k| *k == kind).unwrap_or(3);
        &self.failures[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use workload_common::identity::Identity;

    #[test]
    fn answers_carry_status_flags_identity_and_length() {
        let identity = Identity::from_lookup(|k| Some(format!("{k}-v"))).headers();
        let replies = LocalReplies::new(&identity);
        let mut out = Vec::new();
        replies.failure(FailureKind::Timeout).write(&mut out, true);
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("HTTP/1.1 504 Gateway Timeout\r\n"),
            "{text}"
        );
        assert!(text.contains("x-sidecar-error: timeout\r\n"), "{text}");
        assert!(text.contains("x-response-flags: UT\r\n"), "{text}");
        assert!(text.contains("POD_NAME-v"), "identity: {text}");
        assert!(text.contains("connection: close\r\n"), "{text}");
        assert!(
            text.ends_with(
                "content-length: 25\r\nconnection: close\r\n\r\nupstream request timeout\n"
            ),
            "{text}"
        );
        let mut out = Vec::new();
        replies
            .rejection(Rejection::QueueFull)
            .write(&mut out, false);
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("HTTP/1.1 503 Service Unavailable\r\n"),
            "{text}"
        );
        assert!(text.contains("x-sidecar-reject: queue-full\r\n"), "{text}");
        assert!(!text.contains("connection:"), "{text}");
    }
}

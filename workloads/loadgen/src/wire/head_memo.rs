//! The memo of a connection's last final response head ([`HeadMemo`]): a server answering the
//! same request on the same connection sends the same head, byte for byte, until its `Date`
//! changes (once a second), so the next head is compared with the remembered bytes and, when
//! equal, takes the remembered result without parsing (what parsing would give: it is a
//! function of the bytes alone). Any other head is parsed in full by [`super`].

use super::{Head, PodName};

/// Longest head remembered by [`HeadMemo`]: longer ones are parsed every time.
const MEMO_MAX: usize = 1024;

/// The last final head parsed on a connection: its bytes, what it says, and where its (last)
/// `x-pod` value is in those bytes.
#[derive(Debug, Default)]
pub(super) struct HeadMemo {
    bytes: Vec<u8>,
    head: Option<Head>,
    pod: Option<(usize, usize)>,
    /// Heads taken from the memo (tests look at it).
    #[cfg(test)]
    hits: u64,
}

impl HeadMemo {
    /// The remembered head if `avail` starts with its bytes (on every response of a
    /// connection: inlined into the reader as when it lived in the same module).
    #[inline]
    pub(super) fn lookup(&mut self, avail: &[u8], pod: &mut PodName) -> Option<Head> {
        let head = self.head?;
        if avail.len() < self.bytes.len() || avail[..self.bytes.len()] != self.bytes[..] {
            return None;
        }
        match self.pod {
            Some((from, to)) => pod.set(&self.bytes[from..to]),
            None => pod.clear(),
        }
        #[cfg(test)]
        {
            self.hits += 1;
        }
        Some(head)
    }

    /// Keeps a final head (`head.len` bytes of `bytes`) and where its `x-pod` value is.
    pub(super) fn remember(&mut self, bytes: &[u8], head: Head, pod: Option<(usize, usize)>) {
        let pod_inside = pod.is_none_or(|(_, to)| to <= head.len);
        // A memo stays true for its own bytes: a head not remembered leaves it as it is.
        if head.status < 200 || head.len > MEMO_MAX || !pod_inside {
            return;
        }
        self.bytes.clear();
        self.bytes.extend_from_slice(&bytes[..head.len]);
        self.head = Some(head);
        self.pod = pod;
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Complete, PodName, ReadBuf, ResponseReader};
    use crate::error_kind::ErrorKind;

    fn ok(status: u16, close: bool) -> Result<Complete, ErrorKind> {
        Ok(Complete { status, close })
    }

    /// Reads one whole response (given in pieces of `step` bytes) with a reader kept across
    /// responses, as a connection keeps it.
    fn read_next(
        reader: &mut ResponseReader,
        buf: &mut ReadBuf,
        pod: &mut PodName,
        input: &[u8],
        step: usize,
    ) -> (Result<Complete, ErrorKind>, Option<String>) {
        reader.start();
        for piece in input.chunks(step) {
            buf.push(piece);
            match reader.advance(buf, pod) {
                Ok(Some(c)) => return (Ok(c), pod.get().map(str::to_string)),
                Ok(None) => {}
                Err(e) => return (Err(e), None),
            }
        }
        (Err(ErrorKind::Timeout), None)
    }

    #[test]
    fn repeated_heads_come_from_the_memo_with_the_parsed_result() {
        let a =
            b"HTTP/1.1 200 OK\r\nServer: nginx\r\nx-pod: web-1\r\ncontent-length: 3\r\n\r\nok\n";
        let b =
            b"HTTP/1.1 200 OK\r\nServer: nginx\r\nx-pod: web-2\r\ncontent-length: 3\r\n\r\nok\n";
        let closing =
            b"HTTP/1.1 503 Busy\r\nServer: nginx\r\nconnection: close\r\ncontent-length: 0\r\n\r\n";
        let no_pod = b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\n!";
        let (mut reader, mut buf, mut pod) = (
            ResponseReader::default(),
            ReadBuf::default(),
            PodName::default(),
        );
        let mut next = |input: &[u8], step: usize| {
            let r = read_next(&mut reader, &mut buf, &mut pod, input, step);
            assert!(buf.unread().is_empty());
            (r, reader.memo.hits)
        };
        let web1 = (ok(200, false), Some("web-1".to_string()));
        assert_eq!(next(a, a.len()), (web1.clone(), 0));
        // The same head again, whole: from the memo, same status, pod and body framing.
        assert_eq!(next(a, a.len()), (web1.clone(), 1));
        assert_eq!(next(a, a.len()), (web1.clone(), 2));
        // In small pieces the head is incomplete at first (parsed), then matches once whole.
        assert_eq!(next(a, 7).0, web1);
        // A different pod is parsed, not taken from the memo.
        let web2 = (ok(200, false), Some("web-2".to_string()));
        let (got, hits) = next(b, b.len());
        assert_eq!(got, web2);
        assert_eq!(next(b, b.len()), (web2, hits + 1));
        // Status and connection: close are parsed; then remembered like any final head.
        assert_eq!(
            next(closing, closing.len()),
            ((ok(503, true), None), hits + 1)
        );
        assert_eq!(
            next(closing, closing.len()),
            ((ok(503, true), None), hits + 2)
        );
        // A remembered head without x-pod clears the pod of the response before.
        assert_eq!(next(a, a.len()).0, web1);
        assert_eq!(next(no_pod, no_pod.len()).0, (ok(200, false), None));
        assert_eq!(next(a, a.len()).0, web1);
        let (got, hits) = next(no_pod, no_pod.len());
        assert_eq!(got, (ok(200, false), None));
        assert_eq!(
            next(no_pod, no_pod.len()),
            ((ok(200, false), None), hits + 1)
        );
    }

    #[test]
    fn interim_heads_are_not_remembered_and_a_failed_response_starts_over() {
        let interim = b"HTTP/1.1 100 Continue\r\n\r\n";
        let fin = b"HTTP/1.1 200 OK\r\nx-pod: q\r\ncontent-length: 2\r\n\r\nok";
        let (mut reader, mut buf, mut pod) = (
            ResponseReader::default(),
            ReadBuf::default(),
            PodName::default(),
        );
        let both = [&interim[..], &fin[..]].concat();
        let q = (ok(200, false), Some("q".to_string()));
        assert_eq!(
            read_next(&mut reader, &mut buf, &mut pod, &both, both.len()),
            q
        );
        assert_eq!(
            read_next(&mut reader, &mut buf, &mut pod, &both, both.len()),
            q
        );
        // Only the final head was taken from the memo the second time.
        assert_eq!(reader.memo.hits, 1);
        // A response cut off in its body (the request timed out): the next one starts afresh.
        buf.push(&fin[..fin.len() - 1]);
        assert_eq!(reader.advance(&mut buf, &mut pod), Ok(None));
        buf.clear(); // the connection was replaced
        assert_eq!(read_next(&mut reader, &mut buf, &mut pod, fin, 5), q);
    }
}

//! Chunk boundaries of a chunked body relayed byte for byte: the fast path forwards the
//! upstream's chunked encoding as it is and only tracks where the body ends (last chunk and
//! trailers) and whether it stands between two chunks (where a stream may be ended cleanly).

/// A malformed chunked body (the upstream broke the framing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("malformed chunked body")]
pub(crate) struct BadChunk;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading the hex size; `digits` read so far.
    Size {
        size: u64,
        digits: u8,
    },
    /// After the size: extensions or whitespace up to CR.
    Ext {
        size: u64,
    },
    SizeLf {
        size: u64,
    },
    Data {
        left: u64,
    },
    DataCr,
    DataLf,
    /// At the start of a trailer line (or the final CRLF).
    TrailerStart,
    TrailerLine,
    TrailerLf,
    FinalLf,
    Done,
}

/// Tracks a chunked body's framing over the bytes it is fed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Chunks {
    state: State,
}

impl Default for Chunks {
    fn default() -> Self {
        Self {
            state: State::Size { size: 0, digits: 0 },
        }
    }
}

impl Chunks {
    /// True once the last chunk and the trailers have been seen.
    pub(crate) fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// True between two chunks (nothing of the next one seen yet).
    pub(crate) fn at_boundary(&self) -> bool {
        self.state == State::Size { size: 0, digits: 0 }
    }

    /// Feeds `bytes`; returns how many of them belong to the body (all of them unless the body
    /// ends inside `bytes`).
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Result<usize, BadChunk> {
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            self.state = match self.state {
                State::Done => return Ok(i),
                State::Data { left } => {
                    let take = left.min((bytes.len() - i) as u64);
                    i += take as usize;
                    self.state = match left - take {
                        0 => State::DataCr,
                        left => State::Data { left },
                    };
                    continue;
                }
                State::Size { size, digits } => match (b as char).to_digit(16) {
                    Some(d) if digits < 15 => State::Size {
                        size: size * 16 + u64::from(d),
                        digits: digits + 1,
                    },
                    None if digits > 0 && matches!(b, b';' | b' ' | b'\t') => State::Ext { size },
                    None if digits > 0 && b == b'\r' => State::SizeLf { size },
                    _ => return Err(BadChunk),
                },
                State::Ext { size } => match b {
                    b'\r' => State::SizeLf { size },
                    b'\n' => return Err(BadChunk),
                    _ => State::Ext { size },
                },
                State::SizeLf { size } => match (b, size) {
                    (b'\n', 0) => State::TrailerStart,
                    (b'\n', left) => State::Data { left },
                    _ => return Err(BadChunk),
                },
                State::DataCr if b == b'\r' => State::DataLf,
                State::DataLf if b == b'\n' => State::Size { size: 0, digits: 0 },
                State::DataCr | State::DataLf => return Err(BadChunk),
                State::TrailerStart if b == b'\r' => State::FinalLf,
                State::TrailerStart | State::TrailerLine if b != b'\r' => State::TrailerLine,
                State::TrailerStart | State::TrailerLine => State::TrailerLf,
                State::TrailerLf if b == b'\n' => State::TrailerStart,
                State::FinalLf if b == b'\n' => State::Done,
                State::TrailerLf | State::FinalLf => return Err(BadChunk),
            };
            i += 1;
        }
        Ok(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_end_of_a_body_fed_byte_by_byte_and_at_once() {
        let body = b"5\r\nhello\r\nA;ext=1\r\n0123456789\r\n0\r\nx-t: 1\r\n\r\nNEXT";
        let end = body.len() - 4;
        let mut whole = Chunks::default();
        assert_eq!(whole.feed(body), Ok(end));
        assert!(whole.is_done());
        let mut bytewise = Chunks::default();
        for (i, b) in body.iter().enumerate() {
            let used = bytewise.feed(std::slice::from_ref(b)).unwrap();
            assert_eq!(used, usize::from(i < end), "byte {i}");
        }
        assert!(bytewise.is_done());
    }

    #[test]
    fn knows_the_boundaries_between_chunks() {
        let mut c = Chunks::default();
        assert!(c.at_boundary());
        c.feed(b"3\r\nab").unwrap();
        assert!(!c.at_boundary());
        c.feed(b"c\r\n").unwrap();
        assert!(c.at_boundary() && !c.is_done());
        c.feed(b"0\r\n\r\n").unwrap();
        assert!(c.is_done());
    }

    #[test]
    fn broken_framing_is_an_error() {
        for bad in [&b"x\r\n"[..], b"3\r\nabcX", b"\r\n", b"3\n", b"0\r\n\r\r"] {
            assert_eq!(Chunks::default().feed(bad), Err(BadChunk), "{bad:?}");
        }
        assert_eq!(
            Chunks::default().feed(b"1234567890abcdef0\r\n"),
            Err(BadChunk)
        );
    }
}

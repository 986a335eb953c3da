//! Bytes on the wire of hyper's connections (per-request connections and SSE streams): a TCP
//! stream wrapper that adds every read and written length to a shared counter, which the
//! connection's owner takes ([`WireCounter::take`]) to attribute them. The keep-alive fast path
//! counts in place instead ([`crate::keepalive`]).

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::report::ByteCounts;

/// Bytes written and read on a connection since the last [`WireCounter::take`].
#[derive(Debug, Default)]
pub(crate) struct WireCounter {
    sent: AtomicU64,
    received: AtomicU64,
}

impl WireCounter {
    /// The bytes counted since the last call, leaving zero.
    pub(crate) fn take(&self) -> ByteCounts {
        ByteCounts {
            sent: self.sent.swap(0, Ordering::Relaxed),
            received: self.received.swap(0, Ordering::Relaxed),
        }
    }
}

/// `inner` with its bytes counted into `counter`.
#[derive(Debug)]
pub(crate) struct Counted<T> {
    inner: T,
    counter: Arc<WireCounter>,
}

impl<T> Counted<T> {
    pub(crate) fn new(inner: T, counter: Arc<WireCounter>) -> Self {
        Self { inner, counter }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Counted<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        let n = buf.filled().len().saturating_sub(before);
        this.counter.received.fetch_add(n as u64, Ordering::Relaxed);
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Counted<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let n = ready!(Pin::new(&mut this.inner).poll_write(cx, buf))?;
        this.counter.sent.fetch_add(n as u64, Ordering::Relaxed);
        Poll::Ready(Ok(n))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let n = ready!(Pin::new(&mut this.inner).poll_write_vectored(cx, bufs))?;
        this.counter.sent.fetch_add(n as u64, Ordering::Relaxed);
        Poll::Ready(Ok(n))
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    #[tokio::test]
    async fn reads_and_writes_are_counted_and_taken() {
        let (a, mut b) = tokio::io::duplex(64);
        let counter = Arc::new(WireCounter::default());
        let mut counted = Counted::new(a, counter.clone());
        counted.write_all(b"hello").await.unwrap();
        b.write_all(b"0123456789").await.unwrap();
        let mut got = [0u8; 10];
        counted.read_exact(&mut got).await.unwrap();
        let mut echoed = [0u8; 5];
        b.read_exact(&mut echoed).await.unwrap();
        assert_eq!(
            counter.take(),
            ByteCounts {
                sent: 5,
                received: 10
            }
        );
        assert_eq!(counter.take(), ByteCounts::ZERO);
    }
}

//! The fast path's upstream connections: idle keep-alive TCP connections to the one upstream,
//! reused most-recent-first, dropped after the idle timeout (hyper-util's pool settings: 30 s,
//! no per-host cap beyond [`MAX_IDLE`]), and new ones opened with the connect timeout.

use std::io;
use std::sync::Mutex;
use std::time::Duration;

use tokio::net::TcpStream;
use tokio::time::Instant;

/// Most idle connections kept (more than in flight never happen with a concurrency limit).
pub(crate) const MAX_IDLE: usize = 4096;

/// Pool of idle upstream connections.
#[derive(Debug)]
pub(crate) struct Pool {
    authority: String,
    connect_timeout: Duration,
    idle_timeout: Duration,
    idle: Mutex<Vec<(TcpStream, Instant)>>,
}

/// Why no connection could be opened; always a `connect` failure.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConnectError {
    #[error("connecting to {0}: {1}")]
    Io(String, #[source] io::Error),
    #[error("connecting to {0}: timed out after {1:?}")]
    Timeout(String, Duration),
}

impl Pool {
    /// `authority` is `host:port` of the upstream.
    pub(crate) fn new(authority: String, connect_timeout: Duration) -> Self {
        Self {
            authority,
            connect_timeout,
            idle_timeout: Duration::from_secs(30),
            idle: Mutex::new(Vec::new()),
        }
    }

    #[cfg(test)]
    pub(crate) fn authority(&self) -> &str {
        &self.authority
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(TcpStream, Instant)>> {
        // A Vec of sockets cannot be left half-updated by a panic: a poisoned lock is usable.
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The most recently returned idle connection still within the idle timeout.
    pub(crate) fn checkout(&self) -> Option<TcpStream> {
        let now = Instant::now();
        let mut idle = self.lock();
        while let Some((conn, since)) = idle.pop() {
            if now.saturating_duration_since(since) < self.idle_timeout {
                return Some(conn);
            }
            // The most recent one is too old, so are all the others.
            idle.clear();
        }
        None
    }

    /// Returns a connection that finished an exchange and may carry another.
    pub(crate) fn checkin(&self, conn: TcpStream) {
        let mut idle = self.lock();
        if idle.len() < MAX_IDLE {
            idle.push((conn, Instant::now()));
        }
    }

    /// Idle connections held right now.
    #[cfg(test)]
    pub(crate) fn idle(&self) -> usize {
        self.lock().len()
    }

    /// Opens a new connection (TCP_NODELAY) within the connect timeout.
    pub(crate) async fn connect(&self) -> Result<TcpStream, ConnectError> {
        let open = TcpStream::connect(self.authority.as_str());
        let conn = tokio::time::timeout(self.connect_timeout, open)
            .await
            .map_err(|_| ConnectError::Timeout(self.authority.clone(), self.connect_timeout))?
            .map_err(|e| ConnectError::Io(self.authority.clone(), e))?;
        let _ = conn.set_nodelay(true);
        Ok(conn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn reuses_the_latest_connection_and_refuses_are_connect_errors() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let pool = Pool::new(
            listener.local_addr().unwrap().to_string(),
            Duration::from_secs(1),
        );
        assert!(pool.checkout().is_none());
        let a = pool.connect().await.unwrap();
        let b = pool.connect().await.unwrap();
        let b_port = b.local_addr().unwrap().port();
        pool.checkin(a);
        pool.checkin(b);
        assert_eq!(pool.idle(), 2);
        let got = pool.checkout().unwrap();
        assert_eq!(
            got.local_addr().unwrap().port(),
            b_port,
            "most recent first"
        );
        assert_eq!(pool.idle(), 1);
        drop(listener);
        let closed = Pool::new(pool.authority().to_string(), Duration::from_secs(1));
        assert!(matches!(closed.connect().await, Err(ConnectError::Io(..))));
    }
}

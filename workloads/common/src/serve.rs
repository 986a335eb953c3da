//! The HTTP/1 serve loop shared by flagsvc and the sidecar, with Kubernetes-style shutdown:
//! when the shutdown future resolves the server first *drains* (keeps accepting and serving for
//! `drain_delay`, reporting not-ready, the in-app stand-in for a preStop sleep), then stops
//! accepting, ends long-lived streams, lets in-flight requests finish, and returns.

use std::error::Error as StdError;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use http::{Request, Response};
use hyper::body::{Body, Incoming};
use hyper::server::conn::http1;
use hyper::service::Service;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// Limits and shutdown timings of [`serve`].
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// A client must send its complete request head within this time (slowloris guard).
    pub header_read_timeout: Duration,
    /// Largest request head accepted, in bytes (hyper answers 431 beyond it). At least 8 KiB.
    pub max_header_bytes: usize,
    /// After the shutdown signal, keep accepting and serving for this long.
    pub drain_delay: Duration,
    /// After accepting stops, wait at most this long for in-flight requests to finish.
    pub shutdown_timeout: Duration,
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            header_read_timeout: Duration::from_secs(10),
            max_header_bytes: 16 * 1024,
            drain_delay: Duration::ZERO,
            shutdown_timeout: Duration::from_secs(30),
        }
    }
}

impl ServeOptions {
    /// The largest request head accepted: `max_header_bytes`, at least 8 KiB.
    pub fn max_head(&self) -> usize {
        self.max_header_bytes.max(8 * 1024)
    }

    /// A hyper HTTP/1 connection builder with these limits: the header read timeout (on tokio's
    /// timer) and [`ServeOptions::max_head`].
    pub fn http1_builder(&self) -> http1::Builder {
        let mut builder = http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(self.header_read_timeout)
            .max_buf_size(self.max_head());
        builder
    }
}

/// Shared view of where the server is in its life; handlers consult it.
#[derive(Debug, Clone, Default)]
pub struct Lifecycle {
    draining: Arc<AtomicBool>,
    streams: CancellationToken,
}

impl Lifecycle {
    pub fn new() -> Self {
        Self::default()
    }

    /// True from the shutdown signal on: `/readyz` should fail, requests are still served.
    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Acquire)
    }

    /// Cancelled when accepting stops: long-lived streams must end cleanly then.
    pub fn streams_closing(&self) -> CancellationToken {
        self.streams.clone()
    }

    /// Marks the server as draining (`is_draining` true from now on); for serve loops of their own.
    pub fn start_draining(&self) {
        self.draining.store(true, Ordering::Release);
    }
}

/// What happened during a [`serve`] call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServeSummary {
    /// Connections accepted in total.
    pub connections: u64,
    /// Connections accepted during the drain delay (after the shutdown signal).
    pub accepted_while_draining: u64,
    /// False when `shutdown_timeout` expired with connections still busy.
    pub finished_cleanly: bool,
}

/// Serves `service` on every connection accepted from `listener` until `shutdown` resolves,
/// then drains and stops as the module doc describes.
pub async fn serve<S, B>(
    listener: TcpListener,
    service: S,
    lifecycle: Lifecycle,
    options: ServeOptions,
    shutdown: impl Future<Output = ()>,
) -> ServeSummary
where
    S: Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn StdError + Send + Sync>>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    let graceful = GracefulShutdown::new();
    let builder = options.http1_builder();

    let accepted = accept_until_drained(
        listener,
        &lifecycle,
        options.drain_delay,
        shutdown,
        |stream| {
            let conn = builder.serve_connection(TokioIo::new(stream), service.clone());
            let watched = graceful.watch(conn);
            tokio::spawn(async move {
                if let Err(e) = watched.await {
                    tracing::debug!("connection ended with error: {e}");
                }
            });
        },
    )
    .await;
    lifecycle.streams.cancel();
    let finished_cleanly = finish_within(options.shutdown_timeout, graceful.shutdown()).await;
    accepted.summary(finished_cleanly)
}

/// How many connections an [`accept_until_drained`] loop accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Accepted {
    /// Connections accepted in total.
    pub connections: u64,
    /// Connections accepted during the drain delay (after the shutdown signal).
    pub while_draining: u64,
}

impl Accepted {
    /// The [`ServeSummary`] of a loop whose in-flight work then ended cleanly or not.
    pub fn summary(self, finished_cleanly: bool) -> ServeSummary {
        ServeSummary {
            connections: self.connections,
            accepted_while_draining: self.while_draining,
            finished_cleanly,
        }
    }
}

/// The accept half of every serve loop here: hands each accepted connection (`TCP_NODELAY`
/// set) to `on_accept` until `shutdown` resolves; then marks `lifecycle` draining, keeps
/// accepting for `drain_delay`, and stops accepting (the listener is dropped). What is still in
/// flight is the caller's to finish ([`finish_within`]).
pub async fn accept_until_drained(
    listener: TcpListener,
    lifecycle: &Lifecycle,
    drain_delay: Duration,
    shutdown: impl Future<Output = ()>,
    mut on_accept: impl FnMut(tokio::net::TcpStream),
) -> Accepted {
    let mut connections = 0u64;
    let mut accept_one = |stream: tokio::net::TcpStream| {
        let _ = stream.set_nodelay(true);
        connections += 1;
        on_accept(stream);
    };
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            biased;
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => accept_one(stream),
                Err(e) => accept_backoff(e).await,
            },
        }
    }

    lifecycle.start_draining();
    let mut while_draining = 0u64;
    if !drain_delay.is_zero() {
        tracing::info!(delay = ?drain_delay, "draining: still serving, reporting not ready");
        let drain_end = tokio::time::sleep(drain_delay);
        tokio::pin!(drain_end);
        loop {
            tokio::select! {
                biased;
                () = &mut drain_end => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        while_draining += 1;
                        accept_one(stream);
                    }
                    Err(e) => accept_backoff(e).await,
                },
            }
        }
    }
    drop(listener);
    tracing::info!("stopped accepting; finishing in-flight requests");
    Accepted {
        connections,
        while_draining,
    }
}

/// Waits at most `timeout` for `in_flight` (the connections still being served); false, with
/// a warning, when the time ran out first.
pub async fn finish_within(timeout: Duration, in_flight: impl Future<Output = ()>) -> bool {
    let finished = tokio::time::timeout(timeout, in_flight).await.is_ok();
    if !finished {
        tracing::warn!(timeout = ?timeout, "shutdown timeout: closing busy connections");
    }
    finished
}

/// Accept failures (typically EMFILE) are transient: log and pause briefly instead of spinning.
async fn accept_backoff(error: std::io::Error) {
    tracing::warn!("accept failed: {error}");
    tokio::time::sleep(Duration::from_millis(50)).await;
}

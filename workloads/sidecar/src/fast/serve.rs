//! The main listener's accept loop: `workload_common::serve`'s drain-then-stop shutdown for
//! connections served by the fast path ([`super::conn`]). When `shutdown` resolves the server
//! drains (keeps accepting and serving for `drain_delay`, `/readyz` failing), then stops
//! accepting, cancels the closing token (idle connections close, streams end cleanly, general
//! path connections shut down gracefully) and waits at most `shutdown_timeout` for the rest.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio_util::task::TaskTracker;
use workload_common::serve::{Lifecycle, ServeOptions, ServeSummary};

use super::FastPath;
use super::conn;

/// Serves `listener` until `shutdown` resolves, then drains and stops (see the module doc).
pub(crate) async fn serve(
    listener: TcpListener,
    fast: Arc<FastPath>,
    lifecycle: Lifecycle,
    options: ServeOptions,
    shutdown: impl Future<Output = ()>,
) -> ServeSummary {
    let tracker = TaskTracker::new();
    let mut connections = 0u64;
    let accept_one = |stream: TcpStream, connections: &mut u64| {
        let _ = stream.set_nodelay(true);
        *connections += 1;
        tracker.spawn(conn::run(fast.clone(), stream));
    };

    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            biased;
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => accept_one(stream, &mut connections),
                Err(e) => accept_backoff(e).await,
            },
        }
    }

    lifecycle.start_draining();
    let before_drain = connections;
    if !options.drain_delay.is_zero() {
        tracing::info!(delay = ?options.drain_delay, "draining: still serving, reporting not ready");
        let drain_end = tokio::time::sleep(options.drain_delay);
        tokio::pin!(drain_end);
        loop {
            tokio::select! {
                biased;
                () = &mut drain_end => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => accept_one(stream, &mut connections),
                    Err(e) => accept_backoff(e).await,
                },
            }
        }
    }
    drop(listener);
    tracing::info!("stopped accepting; finishing in-flight requests");
    fast.closing.cancel();
    tracker.close();
    let finished_cleanly = tokio::time::timeout(options.shutdown_timeout, tracker.wait())
        .await
        .is_ok();
    if !finished_cleanly {
        tracing::warn!(timeout = ?options.shutdown_timeout, "shutdown timeout: closing busy connections");
    }
    ServeSummary {
        connections,
        accepted_while_draining: connections - before_drain,
        finished_cleanly,
    }
}

/// Accept failures (typically EMFILE) are transient: log and pause briefly instead of spinning.
async fn accept_backoff(error: std::io::Error) {
    tracing::warn!("accept failed: {error}");
    tokio::time::sleep(Duration::from_millis(50)).await;
}

//! The main listener's accept loop: `workload_common::serve`'s drain-then-stop shutdown for
//! connections served by the fast path ([`super::conn`]). When `shutdown` resolves the server
//! drains (keeps accepting and serving for `drain_delay`, `/readyz` failing), then stops
//! accepting, cancels the closing token (idle connections close, streams end cleanly, general
//! path connections shut down gracefully) and waits at most `shutdown_timeout` for the rest.

use std::future::Future;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio_util::task::TaskTracker;
use workload_common::serve::{
    Lifecycle, ServeOptions, ServeSummary, accept_until_drained, finish_within,
};

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
    let accepted = accept_until_drained(
        listener,
        &lifecycle,
        options.drain_delay,
        shutdown,
        |stream| {
            tracker.spawn(conn::run(fast.clone(), stream));
        },
    )
    .await;
    fast.closing.cancel();
    tracker.close();
    let finished_cleanly = finish_within(options.shutdown_timeout, tracker.wait()).await;
    accepted.summary(finished_cleanly)
}

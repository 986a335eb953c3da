//! flagsvc's accept loop: `workload_common::serve`'s drain-then-stop shutdown, with one
//! decision per connection. Its first bytes are peeked: a plain `GET /stream` goes to the raw
//! SSE path ([`crate::raw_sse`], no hyper buffers held while the stream idles), everything else
//! to hyper with the bytes still unread (the same builder as `workload_common::serve`:
//! `ServeOptions::http1_builder`).

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http::{Request, Response};
use hyper::body::Incoming;
use hyper::service::Service;
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use tokio::net::{TcpListener, TcpStream};
use workload_common::serve::{
    Lifecycle, ServeOptions, ServeSummary, accept_until_drained, finish_within,
};

use crate::routes::{App, Body};

/// Largest request head the raw path looks at; a longer one goes to hyper.
const PEEK_BYTES: usize = 2048;

/// Serves `app` on `listener` until `shutdown` resolves, then drains and stops as
/// `workload_common::serve` does (keep serving for `drain_delay`, stop accepting, end the
/// streams, wait at most `shutdown_timeout`).
pub(crate) async fn serve(
    listener: TcpListener,
    app: App,
    lifecycle: Lifecycle,
    options: ServeOptions,
    shutdown: impl Future<Output = ()>,
) -> ServeSummary {
    let graceful = GracefulShutdown::new();
    let builder = Arc::new(options.http1_builder());
    let service = app.clone().into_service();
    let accepted = accept_until_drained(
        listener,
        &lifecycle,
        options.drain_delay,
        shutdown,
        |stream| {
            tokio::spawn(connection(
                stream,
                app.clone(),
                service.clone(),
                Arc::clone(&builder),
                graceful.watcher(),
                options.header_read_timeout,
            ));
        },
    )
    .await;
    lifecycle.streams_closing().cancel();
    // Every connection task holds a watcher until it ends, raw streams included.
    let finished_cleanly = finish_within(options.shutdown_timeout, graceful.shutdown()).await;
    accepted.summary(finished_cleanly)
}

/// One connection: the raw SSE path or hyper, decided on its first bytes.
async fn connection<S>(
    stream: TcpStream,
    app: App,
    service: S,
    builder: Arc<hyper::server::conn::http1::Builder>,
    watcher: Watcher,
    header_read_timeout: Duration,
) where
    S: Service<Request<Incoming>, Response = Response<Body>, Error = Infallible> + Send + 'static,
    S::Future: Send + 'static,
{
    let started = Instant::now();
    let closing = app.streams_closing();
    let first = tokio::select! {
        () = closing.cancelled() => return,
        first = tokio::time::timeout(header_read_timeout, peek_stream_head(&stream)) => first,
    };
    match first {
        // Nothing arrived within the header timeout, or the client left: close, as hyper does.
        Err(_) | Ok(Err(_)) => {}
        Ok(Ok(Some(head_len))) => {
            crate::raw_sse::serve(app, stream, head_len, started).await;
            drop(watcher);
        }
        Ok(Ok(None)) => {
            let conn = builder.serve_connection(TokioIo::new(stream), service);
            // Boxed: the raw streams' tasks are not sized by hyper's connection future.
            if let Err(e) = Box::pin(watcher.watch(conn)).await {
                tracing::debug!("connection ended with error: {e}");
            }
        }
    }
}

/// Waits for the connection's first bytes and returns the head length when they are a raw-path
/// `GET /stream`, `None` when hyper should serve them; an error when the client closed first.
async fn peek_stream_head(stream: &TcpStream) -> std::io::Result<Option<usize>> {
    let mut buf = vec![0u8; PEEK_BYTES];
    let n = stream.peek(&mut buf).await?;
    if n == 0 {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    Ok(crate::raw_sse::stream_head_len(&buf[..n]))
}

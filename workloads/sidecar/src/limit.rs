//! The concurrency limit: at most N requests in flight to the upstream, a limit on requests in
//! flight (Envoy's `max_requests` circuit breaker / Istio's `http2MaxRequests`), not on rate.
//!
//! Unlike `tower::limit::ConcurrencyLimit`, the slot (a semaphore permit) is not released when
//! the response head arrives: it moves into the response body ([`PermitBody`]) and is released
//! when the body ends, fails or is dropped. A server-sent-events stream therefore holds its slot
//! for its whole life, which is the mechanism of the topology-skew incident.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use bytes::Buf;
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::PollSemaphore;
use tower::{BoxError, Layer, Service};

/// Layer enforcing the concurrency limit; clones share the same slots.
#[derive(Debug, Clone)]
pub struct ConcurrencyLimitLayer {
    semaphore: Arc<Semaphore>,
    max: usize,
}

impl ConcurrencyLimitLayer {
    pub fn new(max: usize) -> Self {
        Self {
            semaphore: Arc::new(Semaphore::new(max)),
            max,
        }
    }

    /// The configured limit.
    pub fn max(&self) -> usize {
        self.max
    }

    /// The slots themselves (the fast path takes its permits from the same semaphore).
    pub(crate) fn semaphore(&self) -> &Arc<Semaphore> {
        &self.semaphore
    }

    /// Slots currently held (requests in flight, streams included).
    pub fn in_flight(&self) -> usize {
        self.max.saturating_sub(self.semaphore.available_permits())
    }
}

impl<S> Layer<S> for ConcurrencyLimitLayer {
    type Service = ConcurrencyLimit<S>;

    fn layer(&self, inner: S) -> ConcurrencyLimit<S> {
        ConcurrencyLimit {
            inner,
            semaphore: PollSemaphore::new(self.semaphore.clone()),
            permit: None,
        }
    }
}

/// The concurrency-limit service: `poll_ready` waits (FIFO) for a slot, `call` moves it into
/// the response.
#[derive(Debug)]
pub struct ConcurrencyLimit<S> {
    inner: S,
    semaphore: PollSemaphore,
    permit: Option<OwnedSemaphorePermit>,
}

impl<S: Clone> Clone for ConcurrencyLimit<S> {
    /// A clone shares the slots but not a slot this instance has reserved.
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            semaphore: self.semaphore.clone(),
            permit: None,
        }
    }
}

/// Returned when the limit's semaphore was closed (it never is while the sidecar runs).
#[derive(Debug, thiserror::Error)]
#[error("concurrency limit closed")]
pub struct LimitClosed;

impl<S, Req, B> Service<Req> for ConcurrencyLimit<S>
where
    S: Service<Req, Response = http::Response<B>>,
    S::Error: Into<BoxError>,
{
    type Response = http::Response<PermitBody<B>>;
    type Error = BoxError;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        if self.permit.is_none() {
            match ready!(self.semaphore.poll_acquire(cx)) {
                Some(permit) => self.permit = Some(permit),
                None => return Poll::Ready(Err(LimitClosed.into())),
            }
        }
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, req: Req) -> Self::Future {
        let permit = self
            .permit
            .take()
            .expect("poll_ready must return Ready before call (tower contract)");
        ResponseFuture {
            inner: self.inner.call(req),
            permit: Some(permit),
        }
    }
}

pin_project! {
    /// Response future of [`ConcurrencyLimit`]: holds the slot until the response exists, then
    /// hands it to the body. An error or a drop before that releases it.
    pub struct ResponseFuture<F> {
        #[pin]
        inner: F,
        permit: Option<OwnedSemaphorePermit>,
    }
}

impl<F, B, E> Future for ResponseFuture<F>
where
    F: Future<Output = Result<http::Response<B>, E>>,
    E: Into<BoxError>,
{
    type Output = Result<http::Response<PermitBody<B>>, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let result = ready!(this.inner.poll(cx));
        let permit = this.permit.take();
        Poll::Ready(match result {
            Ok(response) => Ok(response.map(|body| PermitBody {
                inner: body,
                permit,
            })),
            Err(e) => Err(e.into()),
        })
    }
}

pin_project! {
    /// A response body holding a concurrency slot, released when the body ends (last frame or
    /// error) or is dropped (the server dropped it because the client went away).
    pub struct PermitBody<B> {
        #[pin]
        inner: B,
        permit: Option<OwnedSemaphorePermit>,
    }
}

impl<B> PermitBody<B> {
    /// True while the body still holds its slot.
    pub fn holds_slot(&self) -> bool {
        self.permit.is_some()
    }
}

impl<B> Body for PermitBody<B>
where
    B: Body,
    B::Data: Buf,
{
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.project();
        let frame = ready!(this.inner.poll_frame(cx));
        match &frame {
            Some(Ok(_)) => {}
            None | Some(Err(_)) => drop(this.permit.take()),
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

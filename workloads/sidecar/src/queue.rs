//! The admission queue: a tower layer in front of the concurrency limit.
//!
//! Modelled on linkerd2-proxy's `loadshed` layer, with a wait in between: a request whose inner
//! service (the concurrency limit) is ready at once goes straight through; otherwise it joins
//! the queue, if the queue has room (`capacity`, `None` = unbounded), and waits for the inner
//! service to become ready, at most `timeout` (`None` = forever). Order is FIFO because the
//! inner limit waits on tokio's fair semaphore; the queue depth is tracked here explicitly.
//! Rejections are errors ([`Rejection`]) the edge turns into 503 responses.
//!
//! [`Queue::poll_ready`] is always ready: the queue *is* the buffer, waiting happens per request
//! inside the response future (a clone of the inner service waits for readiness there).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError};
use tokio::time::Instant;
use tower::{BoxError, Layer, Service, ServiceExt};

use crate::metrics::Metrics;

/// How the admission queue behaves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueConfig {
    /// Most requests waiting at once; `None` = unbounded. `Some(0)`: nothing waits.
    pub capacity: Option<usize>,
    /// Longest a request waits for a slot; `None` = forever.
    pub timeout: Option<Duration>,
    /// Depth above which the queue counts as saturated (see [`QueueHandle::saturated_for`]).
    pub saturated_above: Option<usize>,
}

/// Why the admission queue refused a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    #[error("admission queue full")]
    QueueFull,
    #[error("timed out in the admission queue")]
    QueueTimeout,
}

impl Rejection {
    /// Value of the `x-sidecar-reject` header.
    pub fn header_value(self) -> &'static str {
        match self {
            Self::QueueFull => "queue-full",
            Self::QueueTimeout => "queue-timeout",
        }
    }

    /// Value of the metrics `reason` label.
    pub fn metric_reason(self) -> &'static str {
        match self {
            Self::QueueFull => "queue_full",
            Self::QueueTimeout => "queue_timeout",
        }
    }
}

#[derive(Debug, Default)]
struct State {
    depth: usize,
    above_since: Option<Instant>,
}

#[derive(Debug)]
struct Shared {
    config: QueueConfig,
    state: Mutex<State>,
}

/// Shared view of the queue: its depth and how long it has been saturated.
#[derive(Debug, Clone)]
pub struct QueueHandle {
    shared: Arc<Shared>,
}

impl QueueHandle {
    pub fn new(config: QueueConfig) -> Self {
        Self {
            shared: Arc::new(Shared {
                config,
                state: Mutex::new(State::default()),
            }),
        }
    }

    pub fn config(&self) -> QueueConfig {
        self.shared.config
    }

    /// Requests waiting right now.
    pub fn depth(&self) -> usize {
        self.lock().depth
    }

    /// How long the depth has stayed above `saturated_above` without interruption; `None` when
    /// it is at or below it (or no threshold is set).
    pub fn saturated_for(&self) -> Option<Duration> {
        self.lock()
            .above_since
            .map(|since| Instant::now().saturating_duration_since(since))
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is two integers updated atomically under the lock: a panic elsewhere
        // cannot leave it half-written, so a poisoned lock is still usable.
        self.shared
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Takes a place in the queue, or `None` when it is full.
    pub(crate) fn enter(&self) -> Option<Waiting> {
        let mut state = self.lock();
        if self
            .shared
            .config
            .capacity
            .is_some_and(|cap| state.depth >= cap)
        {
            return None;
        }
        state.depth += 1;
        if let Some(threshold) = self.shared.config.saturated_above
            && state.depth > threshold
            && state.above_since.is_none()
        {
            state.above_since = Some(Instant::now());
        }
        Some(Waiting {
            handle: self.clone(),
        })
    }

    fn leave(&self) {
        let mut state = self.lock();
        state.depth = state.depth.saturating_sub(1);
        if self
            .shared
            .config
            .saturated_above
            .is_none_or(|threshold| state.depth <= threshold)
        {
            state.above_since = None;
        }
    }
}

/// A place in the queue; leaving it (drop) lowers the depth, whatever the outcome.
pub(crate) struct Waiting {
    handle: QueueHandle,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.handle.leave();
    }
}

/// Layer adding the admission queue described in the module doc.
#[derive(Debug, Clone)]
pub struct QueueLayer {
    handle: QueueHandle,
    metrics: Arc<Metrics>,
}

impl QueueLayer {
    pub fn new(handle: QueueHandle, metrics: Arc<Metrics>) -> Self {
        Self { handle, metrics }
    }
}

impl<S> Layer<S> for QueueLayer {
    type Service = Queue<S>;

    fn layer(&self, inner: S) -> Queue<S> {
        Queue {
            inner,
            handle: self.handle.clone(),
            metrics: self.metrics.clone(),
        }
    }
}

/// The admission queue service; see the module doc.
#[derive(Debug, Clone)]
pub struct Queue<S> {
    inner: S,
    handle: QueueHandle,
    metrics: Arc<Metrics>,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl<S, Req> Service<Req> for Queue<S>
where
    S: Service<Req> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    Req: Send + 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = BoxFuture<Result<S::Response, BoxError>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Req) -> Self::Future {
        let mut svc = self.inner.clone();
        let handle = self.handle.clone();
        let metrics = self.metrics.clone();
        metrics.received.inc();
        Box::pin(async move {
            admit(&mut svc, &handle, &metrics).await?;
            metrics.admitted.inc();
            svc.call(req).await.map_err(Into::into)
        })
    }
}

/// Waits until `svc` is ready, queueing as configured.
async fn admit<S, Req>(svc: &mut S, handle: &QueueHandle, metrics: &Metrics) -> Result<(), BoxError>
where
    S: Service<Req>,
    S::Error: Into<BoxError>,
{
    let mut ready = std::pin::pin!(svc.ready());
    if let Poll::Ready(result) = futures::poll!(ready.as_mut()) {
        // A free slot: no queueing at all.
        return result.map(drop).map_err(Into::into);
    }
    let Some(_waiting) = handle.enter() else {
        metrics.reject(Rejection::QueueFull.metric_reason());
        return Err(Rejection::QueueFull.into());
    };
    let started = Instant::now();
    let waited = match handle.config().timeout {
        Some(limit) => tokio::time::timeout(limit, ready).await.ok(),
        None => Some(ready.await),
    };
    metrics.queue_wait.observe(started.elapsed().as_secs_f64());
    match waited {
        Some(result) => result.map(drop).map_err(Into::into),
        None => {
            metrics.reject(Rejection::QueueTimeout.metric_reason());
            Err(Rejection::QueueTimeout.into())
        }
    }
}

/// Why the fast path's admission gave no slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AdmitError {
    Rejected(Rejection),
    /// The limit's semaphore was closed (it never is while the sidecar runs).
    Closed,
}

/// The fast path's admission, the same as [`Queue`]'s for the same slots: a free slot at once,
/// else a place in the queue (or `queue_full`) and a FIFO wait for a slot (or `queue_timeout`),
/// counted the same way. Dropping the future leaves the queue.
pub(crate) async fn admit_permit(
    semaphore: &Arc<Semaphore>,
    handle: &QueueHandle,
    metrics: &Metrics,
) -> Result<OwnedSemaphorePermit, AdmitError> {
    match semaphore.clone().try_acquire_owned() {
        Ok(permit) => return Ok(permit),
        Err(TryAcquireError::Closed) => return Err(AdmitError::Closed),
        Err(TryAcquireError::NoPermits) => {}
    }
    let Some(_waiting) = handle.enter() else {
        metrics.reject(Rejection::QueueFull.metric_reason());
        return Err(AdmitError::Rejected(Rejection::QueueFull));
    };
    let started = Instant::now();
    let acquire = semaphore.clone().acquire_owned();
    let waited = match handle.config().timeout {
        Some(limit) => tokio::time::timeout(limit, acquire).await.ok(),
        None => Some(acquire.await),
    };
    metrics.queue_wait.observe(started.elapsed().as_secs_f64());
    match waited {
        Some(Ok(permit)) => Ok(permit),
        Some(Err(_closed)) => Err(AdmitError::Closed),
        None => {
            metrics.reject(Rejection::QueueTimeout.metric_reason());
            Err(AdmitError::Rejected(Rejection::QueueTimeout))
        }
    }
}

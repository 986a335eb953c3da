//! The innermost service: forwards a request to the one upstream over a pooled HTTP/1
//! keep-alive client (hyper-util's legacy client) and relays the response without buffering.
//!
//! A response whose body has no declared length (chunked or close-delimited, e.g. SSE) is a
//! *stream*: it is exempt from the upstream timeout, counted in `sidecar_streams_open`, and
//! ended cleanly when the server stops accepting (drain). Any other response must arrive
//! completely within `--upstream-timeout` of the request being sent; a head that does not
//! arrive in time becomes a 504, a body that stalls past the deadline is cut off.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;
use workload_common::headers::strip_hop_by_hop;

use bytes::Bytes;
use futures::FutureExt;
use futures::future::BoxFuture;

use http::{Request, Response, Uri};
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use pin_project_lite::pin_project;
use tokio::time::{Instant, Sleep};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};
use tower::{BoxError, Service};

use crate::errors::{FailureKind, UpstreamError};
use crate::metrics::Metrics;

/// Where and how to reach the upstream.
#[derive(Debug, Clone)]
pub struct ProxyConfig {
    /// `http://host:port` of the workload.
    pub upstream: Uri,
    /// Deadline for a non-streaming response; `None` = no deadline.
    pub timeout: Option<Duration>,
    /// Deadline for establishing a TCP connection to the upstream.
    pub connect_timeout: Duration,
}

/// The forwarding service; cheap to clone (the connection pool is shared).
#[derive(Clone)]
pub struct Proxy {
    client: Client<HttpConnector, Incoming>,
    config: Arc<ProxyConfig>,
    metrics: Arc<Metrics>,
    closing: CancellationToken,
}

impl Proxy {
    /// `closing` is cancelled when streams must end (the serve loop stopped accepting).
    pub fn new(config: ProxyConfig, metrics: Arc<Metrics>, closing: CancellationToken) -> Self {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(config.connect_timeout));
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(30))
            .build(connector);
        Self {
            client,
            config: Arc::new(config),
            metrics,
            closing,
        }
    }
}

impl Service<Request<Incoming>> for Proxy {
    type Response = Response<UpstreamBody>;
    type Error = UpstreamError;
    type Future = BoxFuture<'static, Result<Response<UpstreamBody>, UpstreamError>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), UpstreamError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<Incoming>) -> Self::Future {
        let started = Instant::now();
        let req = match to_upstream(req, &self.config.upstream) {
            Ok(req) => req,
            Err(e) => {
                self.metrics.upstream_failure(FailureKind::Other.reason());
                return futures::future::ready(Err(e)).boxed();
            }
        };
        let sent = self.client.request(req);
        let this = self.clone();
        async move {
            let deadline = this.config.timeout.map(|t| started + t);
            let result = match deadline {
                Some(at) => match tokio::time::timeout_at(at, sent).await {
                    Ok(result) => result.map_err(UpstreamError::classify),
                    Err(_elapsed) => Err(UpstreamError::new(FailureKind::Timeout, None)),
                },
                None => sent.await.map_err(UpstreamError::classify),
            };
            this.metrics
                .request_duration
                .observe(started.elapsed().as_secs_f64());
            let mut response = match result {
                Ok(response) => response,
                Err(e) => {
                    this.metrics.upstream_failure(e.kind.reason());
                    return Err(e);
                }
            };
            this.metrics.upstream_response(response.status().as_u16());
            strip_hop_by_hop(response.headers_mut());
            let make_body = UpstreamBody::new(&this, response.body(), deadline);
            Ok(response.map(make_body))
        }
        .boxed()
    }
}

/// Rewrites the request for the upstream: absolute URI, hop-by-hop headers removed, Host kept.
fn to_upstream(req: Request<Incoming>, upstream: &Uri) -> Result<Request<Incoming>, UpstreamError> {
    let (mut parts, body) = req.into_parts();
    let path = parts
        .uri
        .path_and_query()
        .map_or("/", |pq| pq.as_str())
        .to_string();
    let mut builder = Uri::builder().path_and_query(path);
    if let Some(scheme) = upstream.scheme() {
        builder = builder.scheme(scheme.clone());
    }
    if let Some(authority) = upstream.authority() {
        builder = builder.authority(authority.clone());
    }
    parts.uri = builder
        .build()
        .map_err(|e| UpstreamError::new(FailureKind::Other, Some(e.into())))?;
    strip_hop_by_hop(&mut parts.headers);
    Ok(Request::from_parts(parts, body))
}

/// Keeps `sidecar_streams_open` right: one per live stream.
pub(crate) struct StreamGuard(Arc<Metrics>);

impl StreamGuard {
    pub(crate) fn open(metrics: &Arc<Metrics>) -> Self {
        metrics.streams_open.inc();
        Self(metrics.clone())
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.0.streams_open.dec();
    }
}

pin_project! {
    /// The upstream's response body, relayed frame by frame as it arrives.
    pub struct UpstreamBody {
        #[pin]
        inner: Incoming,
        #[pin]
        deadline: Option<Sleep>,
        closing: Option<Pin<Box<WaitForCancellationFutureOwned>>>,
        stream: Option<StreamGuard>,
        metrics: Arc<Metrics>,
        done: bool,
    }
}

impl UpstreamBody {
    /// Returns a constructor for the body of a response whose head is `head_body`.
    fn new(
        proxy: &Proxy,
        head_body: &Incoming,
        deadline: Option<Instant>,
    ) -> impl FnOnce(Incoming) -> UpstreamBody + use<> {
        let streaming = head_body.size_hint().exact().is_none();
        let metrics = proxy.metrics.clone();
        let closing = proxy.closing.clone();
        move |inner| UpstreamBody {
            inner,
            deadline: deadline
                .filter(|_| !streaming)
                .map(tokio::time::sleep_until),
            closing: streaming.then(|| Box::pin(closing.cancelled_owned())),
            stream: streaming.then(|| StreamGuard::open(&metrics)),
            metrics,
            done: false,
        }
    }

    /// True when this body is relayed as a stream (no declared length).
    pub fn is_stream(&self) -> bool {
        self.stream.is_some()
    }
}

impl Body for UpstreamBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let mut this = self.project();
        if *this.done {
            return Poll::Ready(None);
        }
        if let Some(closing) = this.closing.as_mut()
            && closing.as_mut().poll(cx).is_ready()
        {
            // Shutting down: end the stream cleanly (the client sees the final chunk).
            *this.done = true;
            this.stream.take();
            return Poll::Ready(None);
        }
        if let Some(deadline) = this.deadline.as_mut().as_pin_mut()
            && deadline.poll(cx).is_ready()
        {
            *this.done = true;
            this.metrics.upstream_failure(FailureKind::Timeout.reason());
            return Poll::Ready(Some(Err(
                UpstreamError::new(FailureKind::Timeout, None).into()
            )));
        }
        let frame = ready!(this.inner.poll_frame(cx));
        match frame {
            Some(Ok(frame)) => Poll::Ready(Some(Ok(frame))),
            Some(Err(e)) => {
                *this.done = true;
                this.stream.take();
                let error = UpstreamError::classify(e);
                this.metrics.upstream_failure(error.kind.reason());
                Poll::Ready(Some(Err(error.into())))
            }
            None => {
                *this.done = true;
                this.stream.take();
                Poll::Ready(None)
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.done || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

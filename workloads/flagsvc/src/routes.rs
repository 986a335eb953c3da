//! Request routing for flagsvc: maps method and path to a handler and stamps the pod identity
//! on every response.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use futures::Stream;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, StreamBody, combinators::BoxBody};
use hyper::body::{Frame, Incoming};
use workload_common::identity::IdentityHeaders;
use workload_common::serve::Lifecycle;

use crate::Config;
use crate::flags::FlagStore;
use crate::metrics::{Metrics, OPENMETRICS, Route, Tracked};

pub type Body = BoxBody<Bytes, Infallible>;

/// Shared state of all connections.
#[derive(Clone)]
pub struct App {
    inner: Arc<AppInner>,
}

struct AppInner {
    config: Config,
    identity: IdentityHeaders,
    store: Arc<FlagStore>,
    lifecycle: Lifecycle,
    metrics: Arc<Metrics>,
}

impl App {
    pub fn new(config: Config, store: Arc<FlagStore>, lifecycle: Lifecycle) -> Self {
        let identity = config.identity.headers();
        Self {
            inner: Arc::new(AppInner {
                config,
                identity,
                store,
                lifecycle,
                metrics: Arc::default(),
            }),
        }
    }

    /// A hyper service answering with this app.
    pub fn into_service(
        self,
    ) -> impl hyper::service::Service<
        Request<Incoming>,
        Response = Response<Body>,
        Error = Infallible,
        Future = impl Future<Output = Result<Response<Body>, Infallible>> + Send,
    > + Clone
    + Send
    + 'static {
        hyper::service::service_fn(move |req| {
            let app = self.clone();
            async move {
                let started = tokio::time::Instant::now();
                let route = Route::of(req.method(), req.uri().path());
                let mut response = app.handle(req).await;
                app.inner.identity.apply(response.headers_mut());
                app.inner
                    .metrics
                    .observe(route, response.status(), started.elapsed());
                Ok(response)
            }
        })
    }

    async fn handle(&self, req: Request<Incoming>) -> Response<Body> {
        let path = req.uri().path();
        match (req.method(), path) {
            (&Method::GET, "/healthz") => text(StatusCode::OK, "ok\n"),
            (&Method::GET, "/readyz") if self.inner.lifecycle.is_draining() => {
                text(StatusCode::SERVICE_UNAVAILABLE, "draining\n")
            }
            (&Method::GET, "/readyz") => text(StatusCode::OK, "ready\n"),
            (&Method::GET, "/stream") => self.stream(),
            (&Method::GET, "/metrics") => self.metrics(),
            (&Method::GET, p) if p.starts_with("/flags/") && p.len() > "/flags/".len() => {
                let key = p["/flags/".len()..].to_string();
                self.flag(&key).await
            }
            (m, p) if m != Method::GET && (p.starts_with("/flags/") || p == "/stream") => {
                text(StatusCode::METHOD_NOT_ALLOWED, "only GET is supported\n")
            }
            _ => text(StatusCode::NOT_FOUND, "not found\n"),
        }
    }

    async fn flag(&self, key: &str) -> Response<Body> {
        self.inner.config.service_time.spend().await;
        let flag = self.inner.store.get(key);
        let body = serde_json::to_vec(&flag).unwrap_or_default();
        Response::builder()
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(body)).boxed())
            .unwrap_or_else(|_| text(StatusCode::INTERNAL_SERVER_ERROR, "encode\n"))
    }

    fn stream(&self) -> Response<Body> {
        let mut response = Response::new(BodyExt::boxed(StreamBody::new(self.stream_events())));
        *response.headers_mut() = stream_headers();
        response
    }

    /// The counted event stream of one `GET /stream` client.
    pub(crate) fn stream_events(
        &self,
    ) -> Tracked<impl Stream<Item = Result<Frame<Bytes>, Infallible>> + Send + 'static> {
        let events = crate::sse::event_stream(
            &self.inner.store,
            self.inner.config.sse_heartbeat,
            self.inner.lifecycle.streams_closing(),
        );
        Tracked::new(events, Arc::clone(&self.inner.metrics))
    }

    /// The response head the general path sends for `GET /stream` (hyper adds
    /// `transfer-encoding` and `date` there), as bytes for the raw path.
    pub(crate) fn stream_head(&self) -> Vec<u8> {
        let mut headers = stream_headers();
        self.inner.identity.apply(&mut headers);
        let mut head = Vec::with_capacity(256);
        head.extend_from_slice(b"HTTP/1.1 200 OK\r\n");
        for (name, value) in &headers {
            head.extend_from_slice(name.as_str().as_bytes());
            head.extend_from_slice(b": ");
            head.extend_from_slice(value.as_bytes());
            head.extend_from_slice(b"\r\n");
        }
        head.extend_from_slice(b"transfer-encoding: chunked\r\ndate: ");
        head.extend_from_slice(httpdate::fmt_http_date(std::time::SystemTime::now()).as_bytes());
        head.extend_from_slice(b"\r\n\r\n");
        head
    }

    /// Counts a `GET /stream` answered by the raw path, as the service counts its own.
    pub(crate) fn observe_stream(&self, elapsed: std::time::Duration) {
        self.inner
            .metrics
            .observe(Route::Stream, StatusCode::OK, elapsed);
    }

    /// The closing token of long-lived streams.
    pub(crate) fn streams_closing(&self) -> tokio_util::sync::CancellationToken {
        self.inner.lifecycle.streams_closing()
    }
}

fn stream_headers() -> http::HeaderMap {
    let mut headers = http::HeaderMap::with_capacity(8);
    headers.insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-cache"),
    );
    headers
}

impl App {
    fn metrics(&self) -> Response<Body> {
        let text = self
            .inner
            .metrics
            .encode(self.inner.lifecycle.is_draining());
        let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            http::HeaderValue::from_static(OPENMETRICS),
        );
        response
    }
}

fn text(status: StatusCode, body: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain"),
    );
    response
}

//! The admin listener: Prometheus `/metrics` (OpenMetrics text), `/healthz` and a mirror of
//! `/readyz`. Live-state gauges are refreshed from the queue, the limit and readiness at each
//! scrape, so they are exact at scrape time.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use futures::future::{Ready, ready};
use http::{HeaderValue, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use prometheus_client::registry::Registry;
use workload_common::identity::IdentityHeaders;

use crate::edge::{ResponseBody, local_response, readyz_response};
use crate::limit::ConcurrencyLimitLayer;
use crate::metrics::{Metrics, encode};
use crate::queue::QueueHandle;
use crate::readiness::Readiness;

/// OpenMetrics content type, as Prometheus expects it.
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The admin listener's service.
#[derive(Clone)]
pub struct Admin {
    inner: Arc<Inner>,
}

struct Inner {
    metrics: Arc<Metrics>,
    registry: Registry,
    limit: ConcurrencyLimitLayer,
    queue: QueueHandle,
    readiness: Readiness,
    identity: IdentityHeaders,
}

impl Admin {
    pub fn new(
        metrics: Arc<Metrics>,
        limit: ConcurrencyLimitLayer,
        queue: QueueHandle,
        readiness: Readiness,
        identity: IdentityHeaders,
    ) -> Self {
        let registry = metrics.registry();
        Self {
            inner: Arc::new(Inner {
                metrics,
                registry,
                limit,
                queue,
                readiness,
                identity,
            }),
        }
    }

    /// Sets the live-state gauges and returns the exposition text.
    pub fn render(&self) -> String {
        let i = &self.inner;
        let gauge = |v: usize| i64::try_from(v).unwrap_or(i64::MAX);
        i.metrics.in_flight.set(gauge(i.limit.in_flight()));
        i.metrics.max_concurrency.set(gauge(i.limit.max()));
        i.metrics.queue_depth.set(gauge(i.queue.depth()));
        i.metrics.ready.set(i64::from(i.readiness.is_ready()));
        encode(&i.registry)
    }
}

impl hyper::service::Service<Request<Incoming>> for Admin {
    type Response = Response<ResponseBody>;
    type Error = Infallible;
    type Future = Ready<Result<Response<ResponseBody>, Infallible>>;

    fn call(&self, req: Request<Incoming>) -> Self::Future {
        let identity = &self.inner.identity;
        let resp = match req.uri().path() {
            "/metrics" => {
                let mut resp = Response::new(
                    Full::new(Bytes::from(self.render()))
                        .map_err(|never| match never {})
                        .boxed_unsync(),
                );
                resp.headers_mut()
                    .insert(header::CONTENT_TYPE, HeaderValue::from_static(OPENMETRICS));
                resp
            }
            "/healthz" => local_response(StatusCode::OK, "ok\n", identity),
            "/readyz" => readyz_response(self.inner.readiness.state(), identity),
            _ => local_response(StatusCode::NOT_FOUND, "not found\n", identity),
        };
        ready(Ok(resp))
    }
}

//! Source-side Prometheus metrics: the demand as the caller sees it (Istio's
//! `reporter="source"`), which incident 3's autoscaler should have scaled on. Served in the
//! OpenMetrics text format on `--metrics-listen` at `/metrics`.
//!
//! | metric | type | meaning |
//! | --- | --- | --- |
//! | `loadgen_attempted_total` | counter | requests handed to a connection |
//! | `loadgen_responses_total{code}` | counter | HTTP responses by status code |
//! | `loadgen_transport_errors_total{kind}` | counter | `connect_refused`, `reset`, `timeout`, `other` |
//! | `loadgen_dropped_total` | counter | arrivals not sent (over `--max-in-flight`, or unsent at stop) |
//! | `loadgen_in_flight` | gauge | requests outstanding: waiting for a connection or sending |
//! | `loadgen_sse_streams_open` | gauge | SSE streams currently open |
//! | `loadgen_sse_events_total` | counter | SSE events received |

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use tokio::net::TcpListener;
use workload_common::serve::{Lifecycle, ServeOptions, serve};

use crate::error_kind::ErrorKind;

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CodeLabel {
    code: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabel {
    kind: &'static str,
}

/// The source-side metric set. Cloning shares the same counters.
#[derive(Clone)]
pub struct Metrics {
    registry: Arc<Registry>,
    pub(crate) attempted: Counter,
    responses: Family<CodeLabel, Counter>,
    errors: Family<KindLabel, Counter>,
    pub(crate) dropped: Counter,
    pub(crate) in_flight: Gauge,
    pub(crate) sse_streams_open: Gauge,
    pub(crate) sse_events: Counter,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::default();
        let attempted = Counter::default();
        let responses = Family::<CodeLabel, Counter>::default();
        let errors = Family::<KindLabel, Counter>::default();
        let dropped = Counter::default();
        let in_flight = Gauge::default();
        let sse_streams_open = Gauge::default();
        let sse_events = Counter::default();
        registry.register(
            "loadgen_attempted",
            "Requests handed to a connection (source side demand)",
            attempted.clone(),
        );
        registry.register(
            "loadgen_responses",
            "HTTP responses received, by status code",
            responses.clone(),
        );
        registry.register(
            "loadgen_transport_errors",
            "Requests that got no HTTP response, by kind",
            errors.clone(),
        );
        registry.register(
            "loadgen_dropped",
            "Scheduled requests never sent (over --max-in-flight or unsent at stop)",
            dropped.clone(),
        );
        registry.register(
            "loadgen_in_flight",
            "Requests outstanding: waiting for a connection or sending",
            in_flight.clone(),
        );
        registry.register(
            "loadgen_sse_streams_open",
            "Server-sent-event streams currently open",
            sse_streams_open.clone(),
        );
        registry.register(
            "loadgen_sse_events",
            "Server-sent events received",
            sse_events.clone(),
        );
        // Pre-create every transport error kind so a scrape shows zeros, not gaps.
        for kind in ErrorKind::ALL {
            let _ = errors.get_or_create(&KindLabel {
                kind: kind.as_str(),
            });
        }
        Self {
            registry: Arc::new(registry),
            attempted,
            responses,
            errors,
            dropped,
            in_flight,
            sse_streams_open,
            sse_events,
        }
    }

    /// The counter for one status code (callers cache it; creating allocates).
    pub(crate) fn response_counter(&self, code: u16) -> Counter {
        self.responses
            .get_or_create(&CodeLabel {
                code: code.to_string(),
            })
            .clone()
    }

    pub(crate) fn error_counter(&self, kind: ErrorKind) -> Counter {
        self.errors
            .get_or_create(&KindLabel {
                kind: kind.as_str(),
            })
            .clone()
    }

    /// The metrics in the OpenMetrics text format.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut out, &self.registry) {
            tracing::warn!("encoding metrics failed: {e}");
        }
        out
    }
}

/// Serves `GET /metrics` on `listener` until `shutdown` resolves.
pub async fn serve_metrics(
    listener: TcpListener,
    metrics: Metrics,
    shutdown: impl Future<Output = ()>,
) {
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let metrics = metrics.clone();
        async move {
            let response = if req.uri().path() == "/metrics" {
                Response::builder()
                    .header(
                        CONTENT_TYPE,
                        "application/openmetrics-text; version=1.0.0; charset=utf-8",
                    )
                    .body(Full::new(Bytes::from(metrics.encode())))
            } else {
                Response::builder()
                    .status(StatusCode::NOT_FOUND)
                    .body(Full::new(Bytes::from_static(b"not found\n")))
            };
            Ok::<_, Infallible>(response.unwrap_or_else(|_| Response::new(Full::default())))
        }
    });
    let options = ServeOptions {
        shutdown_timeout: std::time::Duration::from_secs(1),
        ..ServeOptions::default()
    };
    serve(listener, service, Lifecycle::new(), options, shutdown).await;
}

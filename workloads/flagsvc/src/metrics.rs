//! flagsvc's Prometheus metrics (`GET /metrics`, OpenMetrics text), kept in
//! `prometheus-client` types: requests by route and status, the time to the response head by
//! route, open SSE streams and events sent, and whether the server is draining. The names are
//! listed with the other workloads' in docs/metrics.md.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::Stream;
use http::{Method, StatusCode};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// Content type of the exposition.
pub const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Which handler a request went to: the `route` label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Route {
    Flags,
    Stream,
    Healthz,
    Readyz,
    Metrics,
    Other,
}

impl Route {
    /// The route of a request, as the router will dispatch it.
    pub fn of(method: &Method, path: &str) -> Self {
        match path {
            "/stream" => Route::Stream,
            "/healthz" => Route::Healthz,
            "/readyz" => Route::Readyz,
            "/metrics" if method == Method::GET => Route::Metrics,
            p if p.starts_with("/flags/") && p.len() > "/flags/".len() => Route::Flags,
            _ => Route::Other,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Route::Flags => "flags",
            Route::Stream => "stream",
            Route::Healthz => "healthz",
            Route::Readyz => "readyz",
            Route::Metrics => "metrics",
            Route::Other => "other",
        }
    }
}

/// `{route="flags",code="200"}`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteCode {
    pub route: &'static str,
    pub code: u16,
}

/// `{route="flags"}`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabel {
    pub route: &'static str,
}

/// Every metric flagsvc exposes. Share it behind an `Arc`.
#[derive(Debug)]
pub struct Metrics {
    /// `flagsvc_requests_total{route,code}`: requests answered, by route and status code.
    pub requests: Family<RouteCode, Counter>,
    /// `flagsvc_request_duration_seconds{route}`: from the request head to the response head
    /// (for flag lookups: the service time).
    pub duration: Family<RouteLabel, Histogram>,
    /// `flagsvc_sse_streams_open`: SSE streams currently open.
    pub streams_open: Gauge,
    /// `flagsvc_sse_events_total`: SSE events sent (snapshot, flag, heartbeat, shutdown).
    pub sse_events: Counter,
    /// `flagsvc_draining`: 1 once SIGTERM arrived (readyz fails, streams are told to close).
    pub draining: Gauge,
}

impl Default for Metrics {
    fn default() -> Self {
        Self {
            requests: Family::default(),
            duration: Family::new_with_constructor(|| {
                // 1 ms .. ~65 s.
                Histogram::new(exponential_buckets(0.001, 2.0, 17))
            }),
            streams_open: Gauge::default(),
            sse_events: Counter::default(),
            draining: Gauge::default(),
        }
    }
}

impl Metrics {
    /// Counts one answered request.
    pub fn observe(&self, route: Route, status: StatusCode, elapsed: Duration) {
        let route = route.as_str();
        self.requests
            .get_or_create(&RouteCode {
                route,
                code: status.as_u16(),
            })
            .inc();
        self.duration
            .get_or_create(&RouteLabel { route })
            .observe(elapsed.as_secs_f64());
    }

    /// The exposition, with the drain state as of now.
    pub fn encode(&self, draining: bool) -> String {
        self.draining.set(i64::from(draining));
        let mut registry = Registry::default();
        registry.register(
            "flagsvc_requests",
            "Requests answered, by route and status code",
            self.requests.clone(),
        );
        registry.register(
            "flagsvc_request_duration_seconds",
            "Time from the request head to the response head, by route",
            self.duration.clone(),
        );
        registry.register(
            "flagsvc_sse_streams_open",
            "SSE streams currently open",
            self.streams_open.clone(),
        );
        registry.register(
            "flagsvc_sse_events",
            "SSE events sent",
            self.sse_events.clone(),
        );
        registry.register(
            "flagsvc_draining",
            "1 once SIGTERM arrived and the server drains",
            self.draining.clone(),
        );
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &registry);
        out
    }
}

/// An SSE body counted while it lives: open streams go up on creation and down when the body
/// is dropped (the client left or the stream ended); every frame is one event.
pub struct Tracked<S> {
    inner: Pin<Box<S>>,
    metrics: Arc<Metrics>,
}

impl<S> Tracked<S> {
    pub fn new(inner: S, metrics: Arc<Metrics>) -> Self {
        metrics.streams_open.inc();
        Self {
            inner: Box::pin(inner),
            metrics,
        }
    }
}

impl<S: Stream> Stream for Tracked<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let next = self.inner.as_mut().poll_next(cx);
        if let Poll::Ready(Some(_)) = &next {
            self.metrics.sse_events.inc();
        }
        next
    }
}

impl<S> Drop for Tracked<S> {
    fn drop(&mut self) {
        self.metrics.streams_open.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;

    #[test]
    fn routes_of_requests() {
        assert_eq!(Route::of(&Method::GET, "/flags/a"), Route::Flags);
        assert_eq!(Route::of(&Method::GET, "/flags/"), Route::Other);
        assert_eq!(Route::of(&Method::POST, "/stream"), Route::Stream);
        assert_eq!(Route::of(&Method::POST, "/metrics"), Route::Other);
        assert_eq!(Route::of(&Method::GET, "/nope"), Route::Other);
    }

    #[test]
    fn counts_requests_and_encodes_every_family() {
        let m = Metrics::default();
        m.observe(Route::Flags, StatusCode::OK, Duration::from_millis(20));
        m.observe(Route::Flags, StatusCode::OK, Duration::from_millis(30));
        m.observe(Route::Other, StatusCode::NOT_FOUND, Duration::ZERO);
        let text = m.encode(true);
        assert!(text.contains("flagsvc_requests_total{route=\"flags\",code=\"200\"} 2"));
        assert!(text.contains("flagsvc_requests_total{route=\"other\",code=\"404\"} 1"));
        assert!(text.contains("flagsvc_request_duration_seconds_count{route=\"flags\"} 2"));
        assert!(
            text.contains(
                "flagsvc_request_duration_seconds_bucket{le=\"0.032\",route=\"flags\"} 2"
            ) || text.contains(
                "flagsvc_request_duration_seconds_bucket{route=\"flags\",le=\"0.032\"} 2"
            ),
            "{text}"
        );
        assert!(text.contains("flagsvc_draining 1"));
        assert!(text.contains("flagsvc_sse_streams_open 0"));
        assert!(text.ends_with("# EOF\n"));
    }

    #[tokio::test]
    async fn a_tracked_stream_counts_events_and_closes_on_drop() {
        let m = Arc::new(Metrics::default());
        let mut s = Tracked::new(futures::stream::iter([1, 2, 3]), m.clone());
        assert_eq!(m.streams_open.get(), 1);
        assert_eq!(s.next().await, Some(1));
        assert_eq!(s.next().await, Some(2));
        assert_eq!(m.sse_events.get(), 2);
        drop(s);
        assert_eq!(m.streams_open.get(), 0);
    }
}

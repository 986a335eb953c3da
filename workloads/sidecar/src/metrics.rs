//! The sidecar's Prometheus metrics (the destination-side view, what Istio reports with
//! `reporter="destination"`), kept in `prometheus-client` types and encoded as OpenMetrics text.
//!
//! Gauges that mirror live state (in flight, queue depth, readiness) are set from that state at
//! scrape time by the admin endpoint; counters and histograms are updated where things happen.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// Label set `{reason="..."}`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReasonLabel {
    pub reason: &'static str,
}

/// Label set `{code="200"}`: the upstream's HTTP status code.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CodeLabel {
    pub code: u16,
}

/// Label set `{outcome="..."}`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OutcomeLabel {
    pub outcome: &'static str,
}

/// Every metric the sidecar exposes. Cheap handles: share it behind an `Arc`.
#[derive(Debug)]
pub struct Metrics {
    /// `sidecar_in_flight`: requests holding a concurrency slot (streams included).
    pub in_flight: Gauge,
    /// `sidecar_queue_depth`: requests waiting in the admission queue.
    pub queue_depth: Gauge,
    /// `sidecar_max_concurrency`: the configured limit.
    pub max_concurrency: Gauge,
    /// `sidecar_ready`: 1 while `/readyz` answers 200, else 0.
    pub ready: Gauge,
    /// `sidecar_streams_open`: streaming upstream responses currently being relayed.
    pub streams_open: Gauge,
    /// `sidecar_received_total`: proxied requests that reached the sidecar, counted on arrival
    /// (received = admitted + rejected + still queued + abandoned by their client while queued).
    pub received: Counter,
    /// `sidecar_admitted_total`: requests that got a concurrency slot.
    pub admitted: Counter,
    /// `sidecar_rejected_total{reason="queue_full|queue_timeout"}`.
    pub rejected: Family<ReasonLabel, Counter>,
    /// `sidecar_upstream_responses_total{code}`: response heads received from the upstream.
    pub upstream_responses: Family<CodeLabel, Counter>,
    /// `sidecar_upstream_failures_total{reason="connect|timeout|reset|other"}`: the sidecar's own
    /// 502/504 answers, plus upstream bodies that broke off after their head was relayed.
    pub upstream_failures: Family<ReasonLabel, Counter>,
    /// `sidecar_requests_total{outcome="upstream|queue_full|queue_timeout|upstream_failure"}`:
    /// every proxied request by how it was answered.
    pub requests: Family<OutcomeLabel, Counter>,
    /// `sidecar_request_duration_seconds`: from admission (slot granted) to the response head.
    pub request_duration: Histogram,
    /// `sidecar_queue_wait_seconds`: time spent waiting in the admission queue, for requests
    /// that had to wait (admitted or timed out).
    pub queue_wait: Histogram,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

fn latency_histogram() -> Histogram {
    // 1 ms .. ~65 s.
    Histogram::new(exponential_buckets(0.001, 2.0, 17))
}

impl Metrics {
    /// The counters now (the gauges read 0), as the harness reads a sidecar's totals.
    pub fn totals(&self) -> workload_contract::sidecar::SidecarMetrics {
        let rejected = |reason| self.rejected.get_or_create(&ReasonLabel { reason }).get();
        workload_contract::sidecar::SidecarMetrics {
            received: self.received.get(),
            admitted: self.admitted.get(),
            rejected_queue_full: rejected(workload_contract::sidecar::REASON_QUEUE_FULL),
            rejected_queue_timeout: rejected(workload_contract::sidecar::REASON_QUEUE_TIMEOUT),
            ..Default::default()
        }
    }

    /// All metrics at zero, with every known label value of the labelled counters created, so
    /// each series is exposed (as 0) from the first scrape on.
    pub fn new() -> Self {
        let metrics = Self {
            in_flight: Gauge::default(),
            queue_depth: Gauge::default(),
            max_concurrency: Gauge::default(),
            ready: Gauge::default(),
            streams_open: Gauge::default(),
            received: Counter::default(),
            admitted: Counter::default(),
            rejected: Family::default(),
            upstream_responses: Family::default(),
            upstream_failures: Family::default(),
            requests: Family::default(),
            request_duration: latency_histogram(),
            queue_wait: latency_histogram(),
        };
        for reason in ["queue_full", "queue_timeout"] {
            let _ = metrics.rejected.get_or_create(&ReasonLabel { reason });
        }
        for reason in ["connect", "timeout", "reset", "other"] {
            let _ = metrics
                .upstream_failures
                .get_or_create(&ReasonLabel { reason });
        }
        for outcome in [
            "upstream",
            "queue_full",
            "queue_timeout",
            "upstream_failure",
        ] {
            let _ = metrics.requests.get_or_create(&OutcomeLabel { outcome });
        }
        metrics
    }

    /// Counts a rejection (`reason` is `queue_full` or `queue_timeout`).
    pub fn reject(&self, reason: &'static str) {
        self.rejected.get_or_create(&ReasonLabel { reason }).inc();
    }

    /// Counts a 502/504 the sidecar produced, or an upstream body that broke off.
    pub fn upstream_failure(&self, reason: &'static str) {
        self.upstream_failures
            .get_or_create(&ReasonLabel { reason })
            .inc();
    }

    /// Counts a response head received from the upstream.
    pub fn upstream_response(&self, code: u16) {
        self.upstream_responses
            .get_or_create(&CodeLabel { code })
            .inc();
    }

    /// Counts a proxied request by outcome.
    pub fn request(&self, outcome: &'static str) {
        self.requests.get_or_create(&OutcomeLabel { outcome }).inc();
    }

    /// A registry holding handles to all metrics above, under the names the harness scrapes.
    pub fn registry(&self) -> Registry {
        let mut r = Registry::default();
        r.register(
            "sidecar_in_flight",
            "Requests holding a concurrency slot",
            self.in_flight.clone(),
        );
        r.register(
            "sidecar_queue_depth",
            "Requests waiting in the admission queue",
            self.queue_depth.clone(),
        );
        r.register(
            "sidecar_max_concurrency",
            "Configured concurrency limit",
            self.max_concurrency.clone(),
        );
        r.register(
            "sidecar_ready",
            "1 while /readyz succeeds",
            self.ready.clone(),
        );
        r.register(
            "sidecar_streams_open",
            "Streaming responses being relayed",
            self.streams_open.clone(),
        );
        r.register(
            "sidecar_received",
            "Proxied requests that reached the sidecar, counted on arrival",
            self.received.clone(),
        );
        r.register(
            "sidecar_admitted",
            "Requests admitted to the upstream",
            self.admitted.clone(),
        );
        r.register(
            "sidecar_rejected",
            "Requests rejected by the admission queue",
            self.rejected.clone(),
        );
        r.register(
            "sidecar_upstream_responses",
            "Response heads received from the upstream, by status code",
            self.upstream_responses.clone(),
        );
        r.register(
            "sidecar_upstream_failures",
            "Upstream failures answered with 502/504 or breaking a relayed body",
            self.upstream_failures.clone(),
        );
        r.register(
            "sidecar_requests",
            "Proxied requests by outcome",
            self.requests.clone(),
        );
        r.register(
            "sidecar_request_duration_seconds",
            "Time from admission to the response head",
            self.request_duration.clone(),
        );
        r.register(
            "sidecar_queue_wait_seconds",
            "Time spent waiting in the admission queue",
            self.queue_wait.clone(),
        );
        r
    }
}

/// Encodes `registry` as OpenMetrics text.
pub fn encode(registry: &Registry) -> String {
    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = prometheus_client::encoding::text::encode(&mut out, registry);
    out
}

//! Each tower layer of the sidecar tested alone (and the two together) against `tower-test`
//! mocks: the admission queue and the concurrency limit.

mod limit;
mod queue;

use std::task::{Context, Poll};

use tower::Service;

/// Polls `svc` for readiness once, without a real waker (the tests re-poll by hand).
pub fn poll_ready<S: Service<R>, R>(svc: &mut S) -> Poll<Result<(), S::Error>> {
    svc.poll_ready(&mut Context::from_waker(futures::task::noop_waker_ref()))
}

/// The value of the sample `series` (name with labels, as exposed) in `metrics`' text.
pub fn sample(metrics: &sidecar::metrics::Metrics, series: &str) -> f64 {
    let text = sidecar::metrics::encode(&metrics.registry());
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or_else(|| panic!("no sample {series} in:\n{text}"))
}

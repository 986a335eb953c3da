//! The admission queue layer: bound, timeout, depth accounting, saturation, FIFO.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::poll;
use http::Response;
use http_body_util::Full;
use sidecar::limit::ConcurrencyLimitLayer;
use sidecar::metrics::{Metrics, ReasonLabel};
use sidecar::queue::{QueueConfig, QueueHandle, QueueLayer, Rejection};
use tower::{BoxError, Layer, Service};
use tower_test::mock;

use crate::sample;

fn rejection(result: Result<&'static str, BoxError>) -> Option<Rejection> {
    result
        .err()
        .and_then(|e| e.downcast_ref::<Rejection>().copied())
}

fn rejected(metrics: &Metrics, reason: &'static str) -> u64 {
    metrics
        .rejected
        .get_or_create(&ReasonLabel { reason })
        .get()
}

type Svc = sidecar::queue::Queue<mock::Mock<&'static str, &'static str>>;
type Ctl = mock::Handle<&'static str, &'static str>;

fn setup(config: QueueConfig) -> (Svc, Ctl, QueueHandle, Arc<Metrics>) {
    let (inner, ctl) = mock::pair();
    let queue = QueueHandle::new(config);
    let metrics = Arc::new(Metrics::new());
    let svc = QueueLayer::new(queue.clone(), metrics.clone()).layer(inner);
    (svc, ctl, queue, metrics)
}

#[tokio::test]
async fn rejects_at_once_when_the_bound_is_reached_then_admits_waiters() {
    let (mut svc, mut ctl, queue, metrics) = setup(QueueConfig {
        capacity: Some(2),
        ..QueueConfig::default()
    });
    ctl.allow(0);
    let mut a = svc.call("a");
    let mut b = svc.call("b");
    let mut c = svc.call("c");
    assert!(poll!(&mut a).is_pending());
    assert!(poll!(&mut b).is_pending());
    assert_eq!(queue.depth(), 2);
    let rejected_c = match poll!(&mut c) {
        std::task::Poll::Ready(result) => rejection(result),
        std::task::Poll::Pending => panic!("the third request must be rejected at once"),
    };
    assert_eq!(rejected_c, Some(Rejection::QueueFull));
    assert_eq!(rejected(&metrics, "queue_full"), 1);

    ctl.allow(2);
    assert!(
        poll!(&mut a).is_pending(),
        "admitted, waiting for its response"
    );
    assert!(poll!(&mut b).is_pending());
    assert_eq!(queue.depth(), 0);
    for expected in ["a", "b"] {
        let (req, send) = ctl.next_request().await.unwrap();
        assert_eq!(req, expected);
        send.send_response(expected);
    }
    assert_eq!(a.await.unwrap(), "a");
    assert_eq!(b.await.unwrap(), "b");
    assert_eq!(metrics.admitted.get(), 2);
    assert_eq!(sample(&metrics, "sidecar_queue_wait_seconds_count"), 2.0);
}

#[tokio::test]
async fn zero_capacity_admits_only_free_slots() {
    let (mut svc, mut ctl, queue, metrics) = setup(QueueConfig {
        capacity: Some(0),
        ..QueueConfig::default()
    });
    ctl.allow(1);
    let mut a = svc.call("a");
    assert!(poll!(&mut a).is_pending());
    let b = svc.call("b").await;
    assert_eq!(rejection(b), Some(Rejection::QueueFull));
    assert_eq!(queue.depth(), 0);
    let (_, send) = ctl.next_request().await.unwrap();
    send.send_response("a");
    assert_eq!(a.await.unwrap(), "a");
    assert_eq!(metrics.admitted.get(), 1);
    assert_eq!(
        sample(&metrics, "sidecar_queue_wait_seconds_count"),
        0.0,
        "the fast path never waits"
    );
}

#[tokio::test(start_paused = true)]
async fn times_out_at_the_configured_timeout() {
    let (mut svc, mut ctl, queue, metrics) = setup(QueueConfig {
        timeout: Some(Duration::from_secs(1)),
        ..QueueConfig::default()
    });
    ctl.allow(0);
    let mut a = svc.call("a");
    assert!(poll!(&mut a).is_pending());
    tokio::time::advance(Duration::from_millis(999)).await;
    assert!(poll!(&mut a).is_pending(), "not yet at the timeout");
    assert_eq!(queue.depth(), 1);
    tokio::time::advance(Duration::from_millis(2)).await;
    let result = match poll!(&mut a) {
        std::task::Poll::Ready(result) => result,
        std::task::Poll::Pending => panic!("must time out after 1 s"),
    };
    assert_eq!(rejection(result), Some(Rejection::QueueTimeout));
    assert_eq!(queue.depth(), 0);
    assert_eq!(rejected(&metrics, "queue_timeout"), 1);
    assert_eq!(metrics.admitted.get(), 0);
}

#[tokio::test(start_paused = true)]
async fn without_timeout_waits_until_a_slot_frees() {
    let (mut svc, mut ctl, queue, _metrics) = setup(QueueConfig::default());
    ctl.allow(0);
    let mut a = svc.call("a");
    assert!(poll!(&mut a).is_pending());
    tokio::time::advance(Duration::from_secs(3600)).await;
    assert!(
        poll!(&mut a).is_pending(),
        "no timeout: still waiting after an hour"
    );
    assert_eq!(queue.depth(), 1);
    ctl.allow(1);
    assert!(poll!(&mut a).is_pending());
    let (req, send) = ctl.next_request().await.unwrap();
    assert_eq!(req, "a");
    send.send_response("ok");
    assert_eq!(a.await.unwrap(), "ok");
}

#[tokio::test]
async fn a_dropped_waiter_leaves_the_queue() {
    let (mut svc, mut ctl, queue, _metrics) = setup(QueueConfig {
        capacity: Some(1),
        ..QueueConfig::default()
    });
    ctl.allow(0);
    let mut a = svc.call("a");
    assert!(poll!(&mut a).is_pending());
    assert_eq!(queue.depth(), 1);
    drop(a);
    assert_eq!(queue.depth(), 0);
    let mut b = svc.call("b");
    assert!(poll!(&mut b).is_pending(), "room again after the drop");
    assert_eq!(queue.depth(), 1);
}

#[tokio::test(start_paused = true)]
async fn saturation_is_timed_while_above_the_threshold() {
    let (mut svc, mut ctl, queue, _metrics) = setup(QueueConfig {
        saturated_above: Some(1),
        ..QueueConfig::default()
    });
    ctl.allow(0);
    let mut a = svc.call("a");
    assert!(poll!(&mut a).is_pending());
    assert_eq!(queue.saturated_for(), None, "depth 1 is not above 1");
    let mut b = svc.call("b");
    assert!(poll!(&mut b).is_pending());
    assert_eq!(queue.saturated_for(), Some(Duration::ZERO));
    tokio::time::advance(Duration::from_millis(500)).await;
    assert_eq!(queue.saturated_for(), Some(Duration::from_millis(500)));
    drop(b);
    assert_eq!(queue.saturated_for(), None, "back at the threshold");
    let mut c = svc.call("c");
    assert!(poll!(&mut c).is_pending());
    assert_eq!(
        queue.saturated_for(),
        Some(Duration::ZERO),
        "the clock restarts"
    );
}

#[tokio::test]
async fn inner_errors_pass_through_unchanged() {
    let (mut svc, mut ctl, _queue, metrics) = setup(QueueConfig::default());
    ctl.send_error("inner broke");
    let result = svc.call("a").await;
    let error = result.expect_err("the inner readiness error surfaces");
    assert!(error.downcast_ref::<Rejection>().is_none());
    assert_eq!(error.to_string(), "inner broke");
    assert_eq!(metrics.admitted.get(), 0);
}

#[tokio::test]
async fn with_the_limit_below_waiters_get_slots_in_arrival_order() {
    type Resp = Response<Full<Bytes>>;
    let (inner, mut ctl) = mock::pair::<&'static str, Resp>();
    let limit = ConcurrencyLimitLayer::new(1);
    let queue = QueueHandle::new(QueueConfig::default());
    let metrics = Arc::new(Metrics::new());
    let mut svc = QueueLayer::new(queue.clone(), metrics).layer(limit.layer(inner));

    let mut first = svc.call("first");
    assert!(poll!(&mut first).is_pending());
    let (_, send) = ctl.next_request().await.unwrap();
    let mut waiters: Vec<_> = ["b", "c", "d"].into_iter().map(|r| svc.call(r)).collect();
    for w in &mut waiters {
        assert!(poll!(w).is_pending());
    }
    assert_eq!(queue.depth(), 3);
    assert_eq!(limit.in_flight(), 1);
    send.send_response(Response::new(Full::new(Bytes::from_static(b"1"))));
    let response = first.await.unwrap();
    drop(response); // the body held the slot
    // Poll in reverse order: the slot still goes to the oldest waiter.
    for w in waiters.iter_mut().rev() {
        let _ = poll!(w);
    }
    let (req, _send) = ctl.next_request().await.unwrap();
    assert_eq!(req, "b");
    assert_eq!(queue.depth(), 2);
    assert_eq!(limit.in_flight(), 1);
}

//! The concurrency limit layer: N slots, each held by the response body until it ends.

use bytes::Bytes;
use futures::poll;
use http::Response;
use http_body_util::{BodyExt, Full};
use sidecar::limit::{ConcurrencyLimit, ConcurrencyLimitLayer};
use tower::{Layer, Service};
use tower_test::mock;

use crate::poll_ready;

type Resp = Response<Full<Bytes>>;
type Svc = ConcurrencyLimit<mock::Mock<&'static str, Resp>>;

fn setup(max: usize) -> (Svc, mock::Handle<&'static str, Resp>, ConcurrencyLimitLayer) {
    let (inner, ctl) = mock::pair();
    let layer = ConcurrencyLimitLayer::new(max);
    (layer.layer(inner), ctl, layer)
}

fn body(text: &'static str) -> Resp {
    Response::new(Full::new(Bytes::from_static(text.as_bytes())))
}

#[tokio::test]
async fn never_more_than_n_and_the_body_holds_the_slot() {
    let (svc, mut ctl, layer) = setup(2);
    let (mut s1, mut s2, mut s3) = (svc.clone(), svc.clone(), svc.clone());
    assert!(poll_ready(&mut s1).is_ready());
    assert!(poll_ready(&mut s2).is_ready());
    assert!(poll_ready(&mut s3).is_pending(), "third caller waits");
    assert_eq!(layer.in_flight(), 2);

    let f1 = s1.call("one");
    let _f2 = s2.call("two");
    let (req, send) = ctl.next_request().await.unwrap();
    assert_eq!(req, "one");
    send.send_response(body("hello"));
    let response = f1.await.unwrap();
    assert!(response.body().holds_slot());
    assert!(
        poll_ready(&mut s3).is_pending(),
        "response head alone frees nothing"
    );
    assert_eq!(layer.in_flight(), 2);

    drop(response);
    assert!(
        poll_ready(&mut s3).is_ready(),
        "dropping the body frees the slot"
    );
    assert_eq!(layer.in_flight(), 2);
}

#[tokio::test]
async fn the_slot_returns_when_the_body_ends_not_only_on_drop() {
    let (mut svc, mut ctl, layer) = setup(1);
    assert!(poll_ready(&mut svc).is_ready());
    let fut = svc.call("a");
    let (_, send) = ctl.next_request().await.unwrap();
    send.send_response(body("payload"));
    let mut response = fut.await.unwrap();
    let frame = response.body_mut().frame().await.unwrap().unwrap();
    assert_eq!(frame.into_data().unwrap(), Bytes::from_static(b"payload"));
    assert_eq!(layer.in_flight(), 1, "body not finished yet");
    assert!(response.body_mut().frame().await.is_none());
    assert!(!response.body().holds_slot());
    assert_eq!(
        layer.in_flight(),
        0,
        "released at end of stream, body still alive"
    );
}

#[tokio::test]
async fn errors_and_dropped_futures_release_the_slot() {
    let (mut svc, mut ctl, layer) = setup(1);
    assert!(poll_ready(&mut svc).is_ready());
    let failing = svc.call("fails");
    let (_, send) = ctl.next_request().await.unwrap();
    send.send_error("upstream broke");
    let error = failing.await.err().expect("the error surfaces");
    assert_eq!(error.to_string(), "upstream broke");
    assert_eq!(layer.in_flight(), 0);

    assert!(poll_ready(&mut svc).is_ready());
    let mut abandoned = svc.call("abandoned");
    assert!(poll!(&mut abandoned).is_pending());
    assert_eq!(layer.in_flight(), 1);
    drop(abandoned);
    assert_eq!(layer.in_flight(), 0);
}

#[tokio::test]
async fn a_clone_does_not_share_a_reserved_slot() {
    let (mut svc, _ctl, layer) = setup(1);
    assert!(poll_ready(&mut svc).is_ready());
    let mut twin = svc.clone();
    assert!(poll_ready(&mut twin).is_pending());
    drop(svc);
    // The unused reservation went back and straight to the waiting twin.
    assert_eq!(layer.in_flight(), 1);
    assert!(poll_ready(&mut twin).is_ready());
    drop(twin);
    assert_eq!(
        layer.in_flight(),
        0,
        "a reserved but unused slot returns on drop"
    );
}

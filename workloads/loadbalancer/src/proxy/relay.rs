//! Relaying one request: the per-request accounting ticket, the streaming response body with
//! its idle timeout, error classification and the responses the balancer generates itself.

use std::error::Error as StdError;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::header::{self, HeaderValue};
use http::{Response, StatusCode};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use tokio::time::{Instant, Sleep};

use super::Shared;
use super::stats::{LbErrorReason, Outcome};

pub(super) type BoxError = Box<dyn StdError + Send + Sync>;

/// The body of every response the balancer sends.
pub type LbBody = UnsyncBoxBody<Bytes, BoxError>;

/// Header naming the pod a response came from (or was generated for).
pub const TARGET_HEADER: &str = "x-lb-target";
/// Header naming why the balancer generated an error response.
pub const ERROR_HEADER: &str = "x-lb-error";

/// One request sent to a pod: records its outcome once, and on drop marks it finished (a
/// request dropped before an outcome was recorded lost its client).
pub(super) struct Ticket {
    shared: Arc<Shared>,
    pod: String,
    second: u64,
    recorded: bool,
}

impl Ticket {
    pub(super) fn new(shared: Arc<Shared>, pod: String, second: u64) -> Self {
        Ticket {
            shared,
            pod,
            second,
            recorded: false,
        }
    }

    pub(super) fn pod(&self) -> &str {
        &self.pod
    }

    pub(super) fn record(&mut self, outcome: Outcome) {
        if !self.recorded {
            self.recorded = true;
            self.shared.lock().record(&self.pod, self.second, outcome);
        }
    }

    fn body_error(&self) {
        self.shared.lock().record_body_error(&self.pod, self.second);
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        if !self.recorded {
            state.record(&self.pod, self.second, Outcome::ClientClosed);
        }
        state.done(&self.pod);
    }
}

/// A target's response body relayed frame by frame (no buffering), cut with an error when the
/// target stays silent for longer than the idle timeout. Holds the request's ticket until the
/// body ends or is dropped.
pub(super) struct RelayBody {
    inner: Incoming,
    idle: Duration,
    deadline: Pin<Box<Sleep>>,
    ticket: Option<Ticket>,
}

impl RelayBody {
    pub(super) fn new(inner: Incoming, idle: Duration, ticket: Ticket) -> Self {
        RelayBody {
            inner,
            idle,
            deadline: Box::pin(tokio::time::sleep(idle)),
            ticket: Some(ticket),
        }
    }

    fn fail(&mut self, error: BoxError) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        if let Some(ticket) = self.ticket.take() {
            ticket.body_error();
        }
        Poll::Ready(Some(Err(error)))
    }
}

impl Body for RelayBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                let next = Instant::now() + this.idle;
                this.deadline.as_mut().reset(next);
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => this.fail(Box::new(e)),
            Poll::Ready(None) => {
                this.ticket = None;
                Poll::Ready(None)
            }
            Poll::Pending => {
                if this.deadline.as_mut().poll(cx).is_ready() {
                    this.fail("target idle timeout while streaming the response body".into())
                } else {
                    Poll::Pending
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// What a failed exchange with a target was, as an ALB reports it.
pub(super) fn classify(error: &hyper_util::client::legacy::Error) -> LbErrorReason {
    let mut source: Option<&(dyn StdError + 'static)> = error.source();
    let mut timed_out = false;
    let mut parse = false;
    while let Some(e) = source {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            timed_out |= io.kind() == std::io::ErrorKind::TimedOut;
        }
        if let Some(h) = e.downcast_ref::<hyper::Error>() {
            parse |= h.is_parse() || h.is_parse_status();
        }
        source = e.source();
    }
    if error.is_connect() {
        if timed_out {
            LbErrorReason::ConnectTimeout
        } else {
            LbErrorReason::Connect
        }
    } else if parse {
        LbErrorReason::Malformed
    } else {
        LbErrorReason::Reset
    }
}

/// The balancer's own response for a chosen target that failed.
pub(super) fn error_response(reason: LbErrorReason, pod: &str) -> Response<LbBody> {
    let status = StatusCode::from_u16(reason.status()).unwrap_or(StatusCode::BAD_GATEWAY);
    let mut response = text_response(status, reason.message());
    let headers = response.headers_mut();
    headers.insert(ERROR_HEADER, HeaderValue::from_static(reason.as_str()));
    if let Ok(value) = HeaderValue::from_str(pod) {
        headers.insert(TARGET_HEADER, value);
    }
    response
}

/// 503 for a request that found no routable target.
pub(super) fn no_target_response() -> Response<LbBody> {
    let mut response = text_response(
        StatusCode::SERVICE_UNAVAILABLE,
        "503 Service Temporarily Unavailable: no routable target\n",
    );
    response
        .headers_mut()
        .insert(ERROR_HEADER, HeaderValue::from_static("no-target"));
    response
}

fn text_response(status: StatusCode, body: &'static str) -> Response<LbBody> {
    let mut response = Response::new(
        Full::new(Bytes::from_static(body.as_bytes()))
            .map_err(|never| match never {})
            .boxed_unsync(),
    );
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

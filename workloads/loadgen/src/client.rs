//! The HTTP/1 client. A [`Slot`] is one worker's connection: reused (keep-alive, reopened when
//! the server closed it; the fast path in [`crate::keepalive`]) or opened per request (hyper's
//! low-level `client::conn::http1` over a TCP stream we open ourselves, so the connection model
//! is explicit; SSE streams use it too). Failures are classified into the [`ErrorKind`]s the
//! report keeps apart ([`crate::error_kind`]).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::HeaderValue;
use http_body_util::{BodyExt, Empty};
use hyper::client::conn::http1::{self, Connection, SendRequest};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::time::Instant;
use workload_common::identity::POD_HEADER;

use crate::config::{ConnectionModel, Target};
use crate::counting::{Counted, WireCounter};
use crate::error_kind::{ErrorKind, classify_hyper, classify_io};
pub(crate) use crate::keepalive::Exchange;
use crate::keepalive::KeepAliveConn;

type Body = Empty<Bytes>;

/// A complete response (body read and discarded).
#[derive(Debug)]
struct Reply {
    status: u16,
    pod: Option<HeaderValue>,
}

/// A hyper connection over a TCP stream whose bytes are counted.
pub(crate) type CountedConnection = Connection<TokioIo<Counted<TcpStream>>, Body>;

/// Opens a TCP connection and performs the (local) HTTP/1 handshake; its bytes are counted
/// into `counter`.
pub(crate) async fn connect(
    addr: SocketAddr,
    counter: Arc<WireCounter>,
) -> Result<(SendRequest<Body>, CountedConnection), ErrorKind> {
    let stream = TcpStream::connect(addr)
        .await
        .map_err(|e| classify_io(&e))?;
    let _ = stream.set_nodelay(true);
    http1::handshake(TokioIo::new(Counted::new(stream, counter)))
        .await
        .map_err(|e| classify_hyper(&e))
}

/// Sends one request and reads the whole response body.
async fn exchange(sender: &mut SendRequest<Body>, target: &Target) -> Result<Reply, ErrorKind> {
    let response = sender
        .send_request(target.request())
        .await
        .map_err(|e| classify_hyper(&e))?;
    let status = response.status().as_u16();
    let pod = response.headers().get(POD_HEADER).cloned();
    let mut body = response.into_body();
    while let Some(frame) = body.frame().await {
        frame.map_err(|e| classify_hyper(&e))?;
    }
    Ok(Reply { status, pod })
}

/// One worker's connection: the keep-alive fast path ([`KeepAliveConn`]), or hyper for a new
/// connection per request (the general path, where connection setup dominates anyway).
pub(crate) enum Slot {
    /// Boxed: the connection's buffer state is much larger than the other variant (one
    /// allocation per worker, not per request).
    KeepAlive(Box<KeepAliveConn>),
    PerRequest {
        /// The `x-pod` of the last response, kept for [`Exchange::Response`] to borrow.
        pod: Option<HeaderValue>,
        /// The bytes of the current request's connection (one counter for the worker's life).
        wire: Arc<WireCounter>,
    },
}

impl Slot {
    pub(crate) fn new(model: ConnectionModel, target: &Target) -> Self {
        match model {
            ConnectionModel::KeepAlive => {
                Self::KeepAlive(Box::new(KeepAliveConn::new(target.wire.clone())))
            }
            ConnectionModel::PerRequest => Self::PerRequest {
                pod: None,
                wire: Arc::default(),
            },
        }
    }

    /// Opens the keep-alive connection before the first request needs it. A failure is left
    /// for that request to meet and count.
    pub(crate) async fn warm_up(&mut self, addr: SocketAddr, timeout: Duration) {
        if let Self::KeepAlive(conn) = self {
            conn.warm_up(addr, timeout).await;
        }
    }

    /// Carries out one request, started at `start`, within `timeout`.
    pub(crate) async fn execute(
        &mut self,
        addr: SocketAddr,
        target: &Target,
        start: Instant,
        timeout: Duration,
    ) -> Exchange<'_> {
        let deadline = start + timeout;
        match self {
            Self::KeepAlive(conn) => conn.execute(addr, deadline).await,
            Self::PerRequest { pod, wire } => {
                // Whatever a connection given up on counted after it was taken.
                wire.take();
                let attempt = async {
                    let (sender, conn) = connect(addr, wire.clone()).await?;
                    let request = async move {
                        let mut sender = sender;
                        exchange(&mut sender, target).await
                    };
                    // The connection is driven right here; dropping the sender lets it finish.
                    let (reply, _) = tokio::join!(request, conn);
                    reply
                };
                let kind = match tokio::time::timeout_at(deadline, attempt).await {
                    Ok(Ok(reply)) => {
                        *pod = reply.pod;
                        return Exchange::Response {
                            status: reply.status,
                            pod: pod.as_ref().and_then(|v| v.to_str().ok()),
                            bytes: wire.take(),
                        };
                    }
                    Ok(Err(kind)) => kind,
                    Err(_) => ErrorKind::Timeout,
                };
                Exchange::Failure {
                    kind,
                    conn_pod: None,
                    bytes: wire.take(),
                }
            }
        }
    }
}

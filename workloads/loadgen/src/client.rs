//! The HTTP/1 client: hyper's low-level `client::conn::http1` over TCP streams we open ourselves,
//! so the connection model is explicit. A [`Slot`] is one worker's connection: reused
//! (keep-alive, reopened when the server closed it) or opened per request. Failures are
//! classified into the [`ErrorKind`]s the report keeps apart.

use std::io;
use std::net::SocketAddr;
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
use crate::recorder::ErrorKind;

type Body = Empty<Bytes>;

/// A complete response (body read and discarded).
#[derive(Debug)]
pub(crate) struct Reply {
    pub status: u16,
    pub pod: Option<HeaderValue>,
}

/// A request that got no response.
#[derive(Debug)]
pub(crate) struct Failure {
    pub kind: ErrorKind,
    /// Pod that last answered on the reused connection the request failed on.
    pub conn_pod: Option<HeaderValue>,
}

/// Maps an I/O error to its kind.
pub(crate) fn classify_io(e: &io::Error) -> ErrorKind {
    use io::ErrorKind as K;
    match e.kind() {
        K::ConnectionRefused => ErrorKind::ConnectRefused,
        K::ConnectionReset
        | K::ConnectionAborted
        | K::BrokenPipe
        | K::UnexpectedEof
        | K::NotConnected => ErrorKind::Reset,
        _ => ErrorKind::Other,
    }
}

/// Maps a hyper error to its kind: an I/O cause decides; a connection closed before the
/// response completed is a reset; protocol errors are `other`.
pub(crate) fn classify_hyper(e: &hyper::Error) -> ErrorKind {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<io::Error>() {
            match classify_io(io) {
                ErrorKind::Other => {}
                kind => return kind,
            }
        }
        source = s.source();
    }
    if e.is_incomplete_message() || e.is_canceled() || e.is_closed() {
        ErrorKind::Reset
    } else {
        ErrorKind::Other
    }
}

/// Opens a TCP connection and performs the (local) HTTP/1 handshake.
pub(crate) async fn connect(
    addr: SocketAddr,
) -> Result<(SendRequest<Body>, Connection<TokioIo<TcpStream>, Body>), ErrorKind> {
    let stream = TcpStream::connect(addr)
        .await
        .map_err(|e| classify_io(&e))?;
    let _ = stream.set_nodelay(true);
    http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| classify_hyper(&e))
}

/// Connects and drives the connection in its own task (it ends when the sender is dropped).
pub(crate) async fn open(addr: SocketAddr) -> Result<SendRequest<Body>, ErrorKind> {
    let (sender, conn) = connect(addr).await?;
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            tracing::debug!("connection ended: {e}");
        }
    });
    Ok(sender)
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

/// One worker's connection.
pub(crate) struct Slot {
    model: ConnectionModel,
    conn: Option<SendRequest<Body>>,
    conn_pod: Option<HeaderValue>,
}

impl Slot {
    pub(crate) fn new(model: ConnectionModel) -> Self {
        Self {
            model,
            conn: None,
            conn_pod: None,
        }
    }

    /// Opens the keep-alive connection before the first request needs it. A failure is left
    /// for that request to meet and count.
    pub(crate) async fn warm_up(&mut self, addr: SocketAddr, timeout: Duration) {
        if self.model != ConnectionModel::KeepAlive || self.conn.is_some() {
            return;
        }
        if let Ok(Ok(sender)) = tokio::time::timeout(timeout, open(addr)).await {
            self.conn = Some(sender);
        }
    }

    /// Carries out one request within `timeout`.
    pub(crate) async fn execute(
        &mut self,
        addr: SocketAddr,
        target: &Target,
        timeout: Duration,
    ) -> Result<Reply, Failure> {
        let deadline = Instant::now() + timeout;
        match self.model {
            ConnectionModel::KeepAlive => self.keep_alive(addr, target, deadline).await,
            ConnectionModel::PerRequest => {
                let attempt = async {
                    let (sender, conn) = connect(addr).await?;
                    let request = async move {
                        let mut sender = sender;
                        exchange(&mut sender, target).await
                    };
                    // The connection is driven right here; dropping the sender lets it finish.
                    let (reply, _) = tokio::join!(request, conn);
                    reply
                };
                match tokio::time::timeout_at(deadline, attempt).await {
                    Ok(Ok(reply)) => Ok(reply),
                    Ok(Err(kind)) => Err(Failure {
                        kind,
                        conn_pod: None,
                    }),
                    Err(_) => Err(Failure {
                        kind: ErrorKind::Timeout,
                        conn_pod: None,
                    }),
                }
            }
        }
    }

    async fn keep_alive(
        &mut self,
        addr: SocketAddr,
        target: &Target,
        deadline: Instant,
    ) -> Result<Reply, Failure> {
        // A connection the server closed while idle is replaced silently: no request was lost.
        let existing = self.conn.take().filter(|s| !s.is_closed());
        let conn_pod = existing.as_ref().and(self.conn_pod.clone());
        let attempt = async {
            let reusable = match existing {
                Some(mut s) => s.ready().await.is_ok().then_some(s),
                None => None,
            };
            let mut sender = match reusable {
                Some(s) => s,
                None => open(addr).await?,
            };
            let reply = exchange(&mut sender, target).await?;
            Ok::<_, ErrorKind>((reply, sender))
        };
        // On any failure the connection is dropped (closed) and the next request reconnects.
        match tokio::time::timeout_at(deadline, attempt).await {
            Ok(Ok((reply, sender))) => {
                self.conn = Some(sender);
                self.conn_pod.clone_from(&reply.pod);
                Ok(reply)
            }
            Ok(Err(kind)) => Err(Failure { kind, conn_pod }),
            Err(_) => Err(Failure {
                kind: ErrorKind::Timeout,
                conn_pod,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_map_to_kinds() {
        let kind = |k| classify_io(&io::Error::from(k));
        assert_eq!(
            kind(io::ErrorKind::ConnectionRefused),
            ErrorKind::ConnectRefused
        );
        assert_eq!(kind(io::ErrorKind::ConnectionReset), ErrorKind::Reset);
        assert_eq!(kind(io::ErrorKind::BrokenPipe), ErrorKind::Reset);
        assert_eq!(kind(io::ErrorKind::UnexpectedEof), ErrorKind::Reset);
        assert_eq!(kind(io::ErrorKind::TimedOut), ErrorKind::Other);
        assert_eq!(kind(io::ErrorKind::PermissionDenied), ErrorKind::Other);
    }
}

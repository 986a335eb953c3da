//! Small loopback servers for the loadgen tests (hyper HTTP/1, or raw TCP misbehaviour).

#![allow(dead_code)]

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper_util::rt::TokioIo;
use loadgen::{RateSpec, RunConfig};
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

pub type Body = BoxBody<Bytes, Infallible>;

/// A running test server; stops accepting when dropped.
pub struct TestServer {
    pub addr: SocketAddr,
    pub connections: Arc<AtomicUsize>,
    accept: JoinHandle<()>,
}

impl TestServer {
    pub fn url(&self, path: &str) -> http::Uri {
        format!("http://{}{path}", self.addr).parse().unwrap()
    }

    pub fn accepted(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

pub fn full(status: u16, pod: &str, body: &'static str) -> Response<Body> {
    Response::builder()
        .status(status)
        .header("x-pod", pod)
        .body(Full::new(Bytes::from_static(body.as_bytes())).boxed())
        .unwrap()
}

/// A streaming body: `event` once at once, then once every `every`, `limit` times in all.
pub fn sse_body(event: &'static [u8], every: Duration, limit: Option<usize>) -> Body {
    let stream = futures::stream::unfold(0usize, move |n| async move {
        if limit.is_some_and(|l| n >= l) {
            return None;
        }
        if n > 0 {
            tokio::time::sleep(every).await;
        }
        Some((
            Ok::<_, Infallible>(Frame::data(Bytes::from_static(event))),
            n + 1,
        ))
    });
    BodyExt::boxed(StreamBody::new(stream))
}

/// Accepts on a loopback listener and hands each connection, with its index (from 0, in
/// accept order), to `on_accept`.
pub async fn accept_each<F>(on_accept: F) -> TestServer
where
    F: Fn(usize, TcpStream) + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let connections = Arc::new(AtomicUsize::new(0));
    let counter = connections.clone();
    let accept = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            on_accept(counter.fetch_add(1, Ordering::SeqCst), stream);
        }
    });
    TestServer {
        addr,
        connections,
        accept,
    }
}

/// Serves `handler(connection_index, request)` on every connection (indices from 0, in accept
/// order).
pub async fn http_server<F, Fut>(handler: F) -> TestServer
where
    F: Fn(usize, Request<Incoming>) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Response<Body>> + Send + 'static,
{
    accept_each(move |index, stream| {
        let handler = handler.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let fut = handler(index, req);
                async move { Ok::<_, Infallible>(fut.await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    })
    .await
}

/// What a raw server does with each connection.
#[derive(Clone, Copy)]
pub enum Misbehave {
    /// Read the request, then close without answering.
    CloseWithoutResponse,
    /// Read the request and never answer (keep the socket open).
    NeverAnswer,
}

pub async fn raw_server(mode: Misbehave) -> TestServer {
    accept_each(move |_, mut stream| {
        tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            match mode {
                Misbehave::CloseWithoutResponse => {
                    let _ = stream.read(&mut buf).await;
                    drop(stream);
                }
                Misbehave::NeverAnswer => {
                    // Read (and ignore) until the client gives up and closes.
                    while matches!(stream.read(&mut buf).await, Ok(n) if n > 0) {}
                }
            }
        });
    })
    .await
}

/// A config for tests: constant `rps` for `duration`, `connections` keep-alive connections.
pub fn config(url: http::Uri, rps: f64, duration: Duration, connections: usize) -> RunConfig {
    let mut c = RunConfig::new(url);
    c.rate = RateSpec::Constant(rps);
    c.duration = duration;
    c.connections = connections;
    c.timeout = Duration::from_secs(5);
    c
}

/// `GET path` over a fresh connection (`workload_test_support::get`); returns (status, body).
pub async fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    let reply = workload_test_support::get(addr, path).await.unwrap();
    (reply.status, reply.body)
}

/// Reads one request head (up to the blank line) from a raw connection, adding the bytes it
/// read to `read`; false when the client closed.
pub async fn read_request(stream: &mut TcpStream, pending: &mut Vec<u8>, read: &mut u64) -> bool {
    loop {
        if let Some(at) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            pending.drain(..at + 4);
            return true;
        }
        let mut buf = [0u8; 1024];
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => {
                *read += n as u64;
                pending.extend_from_slice(&buf[..n]);
            }
        }
    }
}

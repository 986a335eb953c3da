//! One `GET` on a fresh HTTP/1 connection (hyper's low-level client), the whole body read,
//! bounded to 20 s: what the tests ask a workload, a sidecar or an admin port.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Request};
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// A whole response.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: String,
}

impl Reply {
    /// The value of header `name`, `""` when absent (or not text).
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
}

/// `GET path` on a fresh connection to `addr` with `Host: addr`, whole body read; bounded to
/// 20 s.
pub async fn get(addr: SocketAddr, path: &str) -> Result<Reply, String> {
    get_with_host(addr, path, &addr.to_string()).await
}

/// [`get`] with this `Host` header.
pub async fn get_with_host(addr: SocketAddr, path: &str, host: &str) -> Result<Reply, String> {
    let attempt = async {
        let stream = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| e.to_string())?;
        tokio::spawn(conn);
        let req = Request::get(path)
            .header("host", host)
            .body(Empty::<Bytes>::new())
            .unwrap();
        let resp = sender.send_request(req).await.map_err(|e| e.to_string())?;
        let (parts, body) = resp.into_parts();
        let body = body.collect().await.map_err(|e| e.to_string())?;
        Ok(Reply {
            status: parts.status.as_u16(),
            headers: parts.headers,
            body: String::from_utf8_lossy(&body.to_bytes()).into_owned(),
        })
    };
    tokio::time::timeout(Duration::from_secs(20), attempt)
        .await
        .map_err(|_| "request took over 20 s".to_string())?
}

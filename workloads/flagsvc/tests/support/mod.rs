//! Test client: one keep-alive HTTP/1 connection, a GET helper returning status, headers, body.

#![allow(dead_code)]

use bytes::Bytes;
use http::{HeaderMap, Request};
use http_body_util::{BodyExt, Empty};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use std::net::SocketAddr;
use tokio::net::TcpStream;

pub struct Conn {
    sender: SendRequest<Empty<Bytes>>,
}

pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Conn {
    pub async fn open(addr: SocketAddr) -> std::io::Result<Conn> {
        let stream = TcpStream::connect(addr).await?;
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(std::io::Error::other)?;
        tokio::spawn(conn);
        Ok(Conn { sender })
    }

    pub async fn get(&mut self, path: &str) -> Result<Reply, String> {
        self.sender.ready().await.map_err(|e| e.to_string())?;
        let req = Request::get(path).body(Empty::new()).unwrap();
        let resp = self
            .sender
            .send_request(req)
            .await
            .map_err(|e| e.to_string())?;
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        Ok(Reply {
            status,
            headers,
            body,
        })
    }

    /// Sends GET and returns the response with its body unread (for streams).
    pub async fn open_stream(
        &mut self,
        path: &str,
    ) -> Result<hyper::Response<hyper::body::Incoming>, String> {
        self.sender.ready().await.map_err(|e| e.to_string())?;
        let req = Request::get(path).body(Empty::new()).unwrap();
        self.sender
            .send_request(req)
            .await
            .map_err(|e| e.to_string())
    }
}

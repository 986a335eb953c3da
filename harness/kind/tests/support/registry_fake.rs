//! A fake container registry on 127.0.0.1 for the image-pin tests: the registry HTTP API v2's
//! `HEAD /v2/<name>/manifests/<tag>` (tag `missing` is a 404), with Bearer token auth the way
//! distribution's token spec describes it (401 + `WWW-Authenticate: Bearer realm,service,scope`,
//! `GET /token` answering `{"token": …}`), or one of the failure modes the tests need. Every
//! request is recorded with its `Authorization` and `Accept` headers.

#![allow(dead_code)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;

/// The token the fake token service hands out.
pub const TOKEN: &str = "fake-anonymous-token";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegistryMode {
    /// 401 with a Bearer challenge until the token is presented.
    BearerToken,
    /// No auth.
    Open,
    /// The token service answers `{}`.
    TokenWithoutToken,
    /// 401 with `WWW-Authenticate: Basic`.
    BasicOnly,
    /// 200 without `Docker-Content-Digest`.
    NoDigestHeader,
}

#[derive(Debug, Clone)]
pub struct SeenRequest {
    pub method: String,
    pub uri: String,
    pub authorization: Option<String>,
    pub accept: Option<String>,
}

pub struct FakeRegistry {
    /// `127.0.0.1:PORT`, the registry host of the test's image references.
    pub addr: SocketAddr,
    seen: Arc<Mutex<Vec<SeenRequest>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeRegistry {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn header(req: &Request<Incoming>, name: &str) -> Option<String> {
    req.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

fn answer(
    mode: RegistryMode,
    digest: &str,
    addr: SocketAddr,
    req: &Request<Incoming>,
) -> Response<Full<Bytes>> {
    let path = req.uri().path();
    let reply = |status: u16| Response::builder().status(status);
    if path == "/token" {
        let body = if mode == RegistryMode::TokenWithoutToken {
            "{}".to_owned()
        } else {
            format!("{{\"token\": \"{TOKEN}\", \"expires_in\": 300}}")
        };
        return reply(200)
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body)))
            .unwrap();
    }
    let Some(rest) = path.strip_prefix("/v2/") else {
        return reply(404).body(Full::new(Bytes::new())).unwrap();
    };
    let Some((name, tag)) = rest.split_once("/manifests/") else {
        return reply(404).body(Full::new(Bytes::new())).unwrap();
    };
    let authorized = header(req, "authorization").as_deref() == Some(&format!("Bearer {TOKEN}"));
    match mode {
        RegistryMode::BearerToken | RegistryMode::TokenWithoutToken if !authorized => {
            return reply(401)
                .header(
                    "www-authenticate",
                    format!(
                        "Bearer realm=\"http://{addr}/token\",service=\"fake-registry\",scope=\"repository:{name}:pull\""
                    ),
                )
                .body(Full::new(Bytes::new()))
                .unwrap();
        }
        RegistryMode::BasicOnly => {
            return reply(401)
                .header("www-authenticate", "Basic realm=\"fake\"")
                .body(Full::new(Bytes::new()))
                .unwrap();
        }
        _ => {}
    }
    if tag == "missing" {
        return reply(404).body(Full::new(Bytes::new())).unwrap();
    }
    let mut ok = reply(200).header("content-type", "application/vnd.oci.image.index.v1+json");
    if mode != RegistryMode::NoDigestHeader {
        ok = ok.header("docker-content-digest", digest);
    }
    ok.body(Full::new(Bytes::new())).unwrap()
}

impl FakeRegistry {
    pub async fn start(mode: RegistryMode, digest: &str) -> FakeRegistry {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let recorded = seen.clone();
        let digest = digest.to_owned();
        let task = tokio::spawn(async move {
            // Ends when the test drops the registry (the task is aborted).
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let recorded = recorded.clone();
                let digest = digest.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                        recorded.lock().unwrap().push(SeenRequest {
                            method: req.method().to_string(),
                            uri: req.uri().to_string(),
                            authorization: header(&req, "authorization"),
                            accept: header(&req, "accept"),
                        });
                        let response = answer(mode, &digest, addr, &req);
                        async move { Ok::<_, Infallible>(response) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        FakeRegistry { addr, seen, task }
    }

    pub fn seen(&self) -> Vec<SeenRequest> {
        self.seen.lock().unwrap().clone()
    }
}

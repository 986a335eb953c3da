//! A scripted Kubernetes API server on 127.0.0.1 for tests (the kind target's, the load
//! balancer's): every request is recorded (method, path with query, content type, body), and a
//! handler written by the test answers it — a status with a JSON body, or a watch stream of
//! events that then stays open (as a real watch does until its timeout), ends (a dropped
//! watch), or goes on with the events the test sends later ([`Reply::Live`]), or any of these
//! once a future is done ([`Reply::Deferred`], e.g. held by a [`Gate`]). A kube client for it
//! comes from [`ApiServer::client`], a kubeconfig file from [`ApiServer::write_kubeconfig`].

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::Value;

mod gate;
pub use gate::Gate;

/// One request as the server got it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    /// Path and query: `/api/v1/namespaces?labelSelector=...`.
    pub uri: String,
    pub content_type: Option<String>,
    pub body: String,
}

impl Seen {
    pub fn path(&self) -> &str {
        self.uri.split('?').next().unwrap_or("")
    }

    pub fn query(&self, key: &str) -> Option<String> {
        let query = self.uri.split_once('?')?.1;
        form_urlencoded::parse(query.as_bytes())
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.into_owned())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }

    pub fn is_watch(&self) -> bool {
        self.query("watch").as_deref() == Some("true")
            || self.query("watch").as_deref() == Some("1")
    }
}

/// An answer.
pub enum Reply {
    /// A status and a JSON body.
    Json(u16, Value),
    /// Plain text (pod logs, the pod proxy).
    Text(u16, String),
    /// A watch: these events (`{"type": "ADDED", "object": ...}`), then the stream stays open
    /// (`hold`) or ends.
    Watch { events: Vec<Value>, hold: bool },
    /// A watch: these events, then every event sent on the channel until its sender is dropped
    /// (then the stream ends) or for at most two minutes.
    Live {
        events: Vec<Value>,
        live: tokio::sync::broadcast::Receiver<Value>,
    },
    /// The answer this future gives, when it gives it (the future must end by itself: bound it
    /// in time). A deferred answer that is deferred again is a 500.
    Deferred(std::pin::Pin<Box<dyn Future<Output = Reply> + Send>>),
}

/// A Kubernetes `Status` failure body.
pub fn status(code: u16, reason: &str, message: &str) -> Reply {
    Reply::Json(
        code,
        serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Failure", "message": message, "reason": reason, "code": code
        }),
    )
}

/// A list of `kind` (`PodList`) with `items`.
pub fn list(kind: &str, api_version: &str, items: Vec<Value>) -> Reply {
    Reply::Json(
        200,
        serde_json::json!({
            "kind": kind, "apiVersion": api_version,
            "metadata": { "resourceVersion": "1" }, "items": items
        }),
    )
}

type Handler = dyn Fn(&Seen) -> Reply + Send + Sync;

/// The running server.
pub struct ApiServer {
    pub addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ApiServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ApiServer {
    /// Serves `handler` on a free loopback port.
    pub async fn start(handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let handler: Arc<Handler> = Arc::new(handler);
        let (seen2, handler2) = (seen.clone(), handler.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let (seen, handler) = (seen2.clone(), handler2.clone());
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                        let (seen, handler) = (seen.clone(), handler.clone());
                        async move { Ok::<_, Infallible>(answer(req, &seen, &*handler).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        ApiServer { addr, seen, task }
    }

    /// A kube client for this server (plain HTTP, namespace `default`).
    pub fn client(&self) -> kube::Client {
        let config = kube::Config::new(format!("http://{}", self.addr).parse().unwrap());
        kube::Client::try_from(config).unwrap()
    }

    /// Writes a kubeconfig naming this server (plain HTTP, namespace `default`) to `path`, for
    /// code that finds its cluster with `KUBECONFIG`.
    pub fn write_kubeconfig(&self, path: &std::path::Path) -> std::io::Result<()> {
        let config = serde_json::json!({
            "apiVersion": "v1", "kind": "Config",
            "clusters": [{ "name": "mock", "cluster": { "server": format!("http://{}", self.addr) } }],
            "users": [{ "name": "mock", "user": {} }],
            "contexts": [{ "name": "mock", "context": { "cluster": "mock", "user": "mock", "namespace": "default" } }],
            "current-context": "mock"
        });
        std::fs::write(path, config.to_string())
    }

    /// Every request so far, in arrival order.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// The first request whose path ends with `suffix`; panics naming it when none came.
    pub fn first_to(&self, suffix: &str) -> Seen {
        self.seen()
            .into_iter()
            .find(|s| s.path().ends_with(suffix))
            .unwrap_or_else(|| panic!("no request to a path ending with {suffix}"))
    }

    /// Requests that are not watches or lists of the watchers (the calls the target made).
    pub fn calls(&self) -> Vec<Seen> {
        self.seen().into_iter().filter(|s| !s.is_watch()).collect()
    }
}

type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

async fn answer(
    req: Request<Incoming>,
    seen: &Mutex<Vec<Seen>>,
    handler: &Handler,
) -> Response<Body> {
    let method = req.method().to_string();
    let uri = req
        .uri()
        .path_and_query()
        .map(|p| p.to_string())
        .unwrap_or_default();
    let content_type = req
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let request = Seen {
        method,
        uri,
        content_type,
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    seen.lock().unwrap().push(request.clone());
    let reply = match handler(&request) {
        Reply::Deferred(later) => later.await,
        reply => reply,
    };
    match reply {
        Reply::Json(code, value) => Response::builder()
            .status(code)
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(value.to_string())).boxed())
            .unwrap(),
        Reply::Text(code, text) => Response::builder()
            .status(code)
            .header("content-type", "text/plain")
            .body(Full::new(Bytes::from(text)).boxed())
            .unwrap(),
        Reply::Watch { events, hold } => watch_response(events, hold, None),
        Reply::Live { events, live } => watch_response(events, false, Some(live)),
        Reply::Deferred(_) => Response::builder()
            .status(500)
            .header("content-type", "text/plain")
            .body(
                Full::new(Bytes::from(
                    "mock-apiserver: a deferred answer deferred again",
                ))
                .boxed(),
            )
            .unwrap(),
    }
}

/// A watch stream: `events`, then `live` ones or (`hold`) silence, bounded to two minutes.
fn watch_response(
    events: Vec<Value>,
    hold: bool,
    live: Option<tokio::sync::broadcast::Receiver<Value>>,
) -> Response<Body> {
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Frame<Bytes>, Infallible>>(64);
    tokio::spawn(async move {
        let line = |event: &Value| Ok(Frame::data(Bytes::from(format!("{event}\n"))));
        for event in &events {
            if tx.send(line(event)).await.is_err() {
                return;
            }
        }
        // A real watch stays open until its timeout; bounded here.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
        if let Some(mut live) = live {
            while let Ok(Ok(event)) = tokio::time::timeout_at(deadline, live.recv()).await {
                if tx.send(line(&event)).await.is_err() {
                    return;
                }
            }
        } else if hold {
            tokio::time::sleep_until(deadline).await;
        }
        drop(tx);
    });
    let stream = tokio_stream_from(rx);
    Response::builder()
        .status(200)
        .header("content-type", "application/json")
        .body(StreamBody::new(stream).boxed())
        .unwrap()
}

fn tokio_stream_from(
    mut rx: tokio::sync::mpsc::Receiver<Result<Frame<Bytes>, Infallible>>,
) -> impl futures::Stream<Item = Result<Frame<Bytes>, Infallible>> + Send + Sync + 'static {
    futures::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

//! Shared by the in-cluster tests: a kube client from a kubeconfig file naming the scripted
//! API server, the balancer started in-process with flags (or watching `flagsvc`), small HTTP
//! helpers, the objects the
//! API server answers with, and bounded waiting.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::Bytes;
use clap::Parser;
use http::Request;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use kube::config::{KubeConfigOptions, Kubeconfig};
use loadbalancer::cli::Cli;
use mock_apiserver::{ApiServer, Reply, Seen, list};
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

pub const NS: &str = "harness-r1";
pub const GATE: &str = "target-health.harness.io/flagsvc";
/// Both listeners on a free loopback port.
pub const LOOPBACK_LISTENERS: [&str; 4] =
    ["--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"];
/// Watching Service `flagsvc` and sending to its pods' port 8081 (the namespace is not given).
pub const WATCH_FLAGSVC: [&str; 4] = ["--watch-service", "flagsvc", "--target-port", "8081"];

/// A kube client read from a kubeconfig file (in a temporary directory, gone once the client is
/// made: it names a plain-HTTP server and no credentials) that points at `server`.
pub async fn client(server: &ApiServer) -> kube::Client {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubeconfig");
    server.write_kubeconfig(&path).unwrap();
    let kubeconfig = Kubeconfig::read_from(&path).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .unwrap();
    assert_eq!(config.cluster_url.host(), Some("127.0.0.1"));
    kube::Client::try_from(config).unwrap()
}

pub struct Running {
    pub addr: SocketAddr,
    pub admin: SocketAddr,
    pub stop: CancellationToken,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// The balancer with `args` (after the listeners), fed by `client`.
pub async fn start(args: &[&str], client: kube::Client) -> Running {
    start_serving(args, Some(client)).await
}

/// The balancer with `args` (after the listeners on 127.0.0.1): with a `client`, as
/// `serve_with_client` runs it; without, as the binary does (`loadbalancer::serve`).
pub async fn start_serving(args: &[&str], client: Option<kube::Client>) -> Running {
    let argv = ["loadbalancer"]
        .into_iter()
        .chain(LOOPBACK_LISTENERS)
        .chain(args.iter().copied());
    let cli = Cli::try_parse_from(argv).unwrap();
    let config = cli.to_config().unwrap();
    let listener = TcpListener::bind(cli.listen).await.unwrap();
    let admin = TcpListener::bind(cli.admin_listen).await.unwrap();
    let (addr, admin_addr) = (listener.local_addr().unwrap(), admin.local_addr().unwrap());
    let stop = CancellationToken::new();
    let stopped = stop.clone().cancelled_owned();
    tokio::spawn(async move {
        match client {
            Some(client) => {
                loadbalancer::serve_with_client(listener, admin, config, Some(client), stopped)
                    .await
            }
            None => loadbalancer::serve(listener, admin, config, stopped).await,
        }
        .unwrap();
    });
    Running {
        addr,
        admin: admin_addr,
        stop,
    }
}

/// One ready endpoint, `pod-0` at 10.1.0.1, in slice `s`.
pub fn one_ready_slice() -> Value {
    slice("s", "1", vec![endpoint("pod-0", "10.1.0.1", Some(true))])
}

/// The balancer watching Service `flagsvc` in [`NS`] through `server` (see [`client`]),
/// sending to `--target-port target_port`, with `more` flags.
pub async fn start_watching(server: &ApiServer, target_port: u16, more: &[&str]) -> Running {
    let target_port = target_port.to_string();
    let watch = [
        "--watch-service",
        "flagsvc",
        "--namespace",
        NS,
        "--target-port",
        &target_port,
    ];
    let args: Vec<&str> = watch.into_iter().chain(more.iter().copied()).collect();
    start(&args, client(server).await).await
}

/// The API server's answer to the EndpointSlice requests of a balancer whose slices never
/// change: the list holds `slices`, a watch stays open with nothing.
pub fn slices_then_quiet(seen: &Seen, slices: Vec<Value>) -> Reply {
    if seen.is_watch() {
        return Reply::Watch {
            events: vec![],
            hold: true,
        };
    }
    list("EndpointSliceList", "discovery.k8s.io/v1", slices)
}

/// One request on a fresh connection: (status, body).
pub async fn request(addr: SocketAddr, method: &str, path: &str, body: String) -> (u16, String) {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let req = Request::builder()
        .method(method)
        .uri(path)
        .header("host", "lb.test")
        .body(Full::new(Bytes::from(body)))
        .unwrap();
    let resp = tokio::time::timeout(Duration::from_secs(5), sender.send_request(req))
        .await
        .expect("an answer within 5 s")
        .unwrap();
    let status = resp.status().as_u16();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}

pub async fn get_json(addr: SocketAddr, path: &str) -> Value {
    let (status, body) = request(addr, "GET", path, String::new()).await;
    assert_eq!(status, 200, "GET {path}: {body}");
    serde_json::from_str(&body).unwrap()
}

/// The pods in `GET /endpoints`.
pub async fn endpoint_pods(admin: SocketAddr) -> Vec<String> {
    get_json(admin, "/endpoints").await["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["pod"].as_str().unwrap().to_owned())
        .collect()
}

/// The pods in `GET /targets`.
pub async fn routable(admin: SocketAddr) -> Vec<String> {
    serde_json::from_value(get_json(admin, "/targets").await["pods"].clone()).unwrap()
}

/// Polls `check` every 20 ms, at most 500 times (10 s), and panics with `what` if it never
/// holds.
pub async fn wait_until<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..500 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{what} never happened within 10 s");
}

/// A pod on 127.0.0.1: `/` answers 200 `ok`, `/readyz` 200 while `ready` holds, else 503.
pub async fn pod_server(ready: Arc<AtomicBool>) -> SocketAddr {
    pod_answering("ok", ready).await
}

/// A pod on 127.0.0.1: `/` answers 200 `body`, `/readyz` 200 while `ready` holds, else 503.
pub async fn pod_answering(body: &'static str, ready: Arc<AtomicBool>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let ready = ready.clone();
            let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                let ready = ready.clone();
                async move {
                    let mut resp = http::Response::new(Full::new(Bytes::from(body)));
                    if req.uri().path() == "/readyz" && !ready.load(Ordering::SeqCst) {
                        *resp.status_mut() = http::StatusCode::SERVICE_UNAVAILABLE;
                    }
                    Ok::<_, std::convert::Infallible>(resp)
                }
            });
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service),
            );
        }
    });
    addr
}

/// An endpoint of `pod` at `ip`; `ready: None` leaves `conditions.ready` unset.
pub fn endpoint(pod: &str, ip: &str, ready: Option<bool>) -> Value {
    let mut e =
        json!({ "addresses": [ip], "targetRef": { "kind": "Pod", "name": pod, "namespace": NS } });
    e["conditions"] = match ready {
        Some(ready) => json!({ "ready": ready, "serving": ready, "terminating": false }),
        None => json!({}),
    };
    e
}

/// An EndpointSlice of Service `flagsvc`.
pub fn slice(name: &str, resource_version: &str, endpoints: Vec<Value>) -> Value {
    json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {
            "name": name, "namespace": NS, "resourceVersion": resource_version,
            "labels": { "kubernetes.io/service-name": "flagsvc" }
        },
        "addressType": "IPv4",
        "ports": [{ "name": "http", "port": 8081, "protocol": "TCP" }],
        "endpoints": endpoints
    })
}

pub fn watch_event(kind: &str, object: Value) -> Value {
    json!({ "type": kind, "object": object })
}

/// A pod of the Service; `gated`: lists the readiness gate; `containers_ready`: its
/// ContainersReady condition.
pub fn pod(name: &str, uid: &str, gated: bool, containers_ready: bool) -> Value {
    let status = if containers_ready { "True" } else { "False" };
    let mut pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": { "name": name, "namespace": NS, "uid": uid, "resourceVersion": "5",
                      "labels": { "app": "flagsvc" } },
        "spec": { "containers": [{ "name": "flagsvc", "image": "harness/flagsvc" }] },
        "status": { "phase": "Running", "podIP": "127.0.0.1", "conditions": [
            { "type": "ContainersReady", "status": status },
            { "type": "Ready", "status": "False" }
        ] }
    });
    if gated {
        pod["spec"]["readinessGates"] = json!([{ "conditionType": GATE }]);
    }
    pod
}

//! flagsvc's HTTP API in-process: flag lookups, identity headers, probes, SSE lifecycle.

mod support;

use std::time::Duration;

use flagsvc::{Config, ServiceTime};
use http_body_util::BodyExt;
use support::Conn;
use tokio::net::TcpListener;
use workload_common::identity::Identity;
use workload_common::serve::ServeOptions;

fn config(flag_change: Duration) -> Config {
    Config {
        service_time: ServiceTime::Fixed(Duration::from_millis(5)),
        sse_heartbeat: Duration::from_millis(100),
        flag_change_interval: flag_change,
        identity: Identity {
            pod: "pod-7".into(),
            node: "node-a".into(),
            zone: "zone-a".into(),
        },
        serve: ServeOptions {
            shutdown_timeout: Duration::from_secs(5),
            ..ServeOptions::default()
        },
    }
}

async fn start(
    cfg: Config,
) -> (
    std::net::SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<workload_common::serve::ServeSummary>,
) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let task = tokio::spawn(flagsvc::serve(listener, cfg, async {
        let _ = rx.await;
    }));
    (addr, tx, task)
}

#[tokio::test]
async fn flag_lookup_returns_json_with_identity_headers() {
    let (addr, stop, task) = start(config(Duration::ZERO)).await;
    let mut conn = Conn::open(addr).await.unwrap();
    let reply = conn.get("/flags/checkout").await.unwrap();
    assert_eq!(reply.status, 200);
    assert_eq!(reply.headers["x-pod"], "pod-7");
    assert_eq!(reply.headers["x-node"], "node-a");
    assert_eq!(reply.headers["x-zone"], "zone-a");
    let json: serde_json::Value = serde_json::from_slice(&reply.body).unwrap();
    assert_eq!(json["key"], "checkout");
    assert!(json["enabled"].is_boolean());

    let missing = conn.get("/nope").await.unwrap();
    assert_eq!(missing.status, 404);
    assert_eq!(
        missing.headers["x-pod"], "pod-7",
        "errors carry identity too"
    );
    assert_eq!(conn.get("/healthz").await.unwrap().status, 200);
    assert_eq!(conn.get("/readyz").await.unwrap().status, 200);
    assert_eq!(conn.get("/flags/").await.unwrap().status, 404);
    stop.send(()).unwrap();
    assert!(task.await.unwrap().finished_cleanly);
}

#[tokio::test]
async fn stream_sends_snapshot_changes_heartbeats_and_ends_on_shutdown() {
    let (addr, stop, task) = start(config(Duration::from_millis(150))).await;
    let mut conn = Conn::open(addr).await.unwrap();
    let resp = conn.open_stream("/stream").await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    assert_eq!(resp.headers()["x-pod"], "pod-7");
    let mut body = resp.into_body();

    let mut text = String::new();
    let collect = async {
        while let Some(frame) = body.frame().await {
            let frame = frame.unwrap();
            if let Some(data) = frame.data_ref() {
                text.push_str(std::str::from_utf8(data).unwrap());
            }
            if text.contains("event: flag") && text.contains("event: heartbeat") {
                break;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(5), collect)
        .await
        .expect("flag change and heartbeat within 5s");
    assert!(text.starts_with("id: 1\nevent: snapshot\n"), "{text}");

    stop.send(()).unwrap();
    let mut rest = String::new();
    let drain = async {
        while let Some(frame) = body.frame().await {
            if let Some(data) = frame.ok().as_ref().and_then(|f| f.data_ref()) {
                rest.push_str(std::str::from_utf8(data).unwrap());
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(5), drain)
        .await
        .expect("stream ends after shutdown");
    assert!(rest.contains("event: shutdown"), "clean end event: {rest}");
    assert!(task.await.unwrap().finished_cleanly);
}

#[tokio::test]
async fn readyz_fails_while_draining_but_requests_are_served() {
    let mut cfg = config(Duration::ZERO);
    cfg.serve.drain_delay = Duration::from_millis(600);
    let (addr, stop, task) = start(cfg).await;
    let mut conn = Conn::open(addr).await.unwrap();
    assert_eq!(conn.get("/readyz").await.unwrap().status, 200);
    stop.send(()).unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut fresh = Conn::open(addr)
        .await
        .expect("still accepting while draining");
    assert_eq!(fresh.get("/readyz").await.unwrap().status, 503);
    assert_eq!(fresh.get("/flags/demo").await.unwrap().status, 200);
    let summary = task.await.unwrap();
    assert_eq!(summary.accepted_while_draining, 1);
}

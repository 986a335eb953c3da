//! flagsvc's `/metrics` in-process: requests by route and status, latency, open SSE streams,
//! events sent and the drain state, read back from the exposition text.

mod support;

use std::time::Duration;

use flagsvc::{Config, ServiceTime};
use http_body_util::BodyExt;
use support::Conn;
use tokio::net::TcpListener;
use workload_common::identity::Identity;
use workload_common::serve::ServeOptions;

/// The value of one series line, e.g. `flagsvc_sse_streams_open`.
fn value(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no `{series}` in:\n{text}"))
}

async fn scrape(conn: &mut Conn) -> String {
    let reply = conn.get("/metrics").await.unwrap();
    assert_eq!(reply.status, 200);
    assert!(
        reply.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/openmetrics-text")
    );
    String::from_utf8(reply.body.to_vec()).unwrap()
}

#[tokio::test]
async fn metrics_follow_requests_streams_and_draining() {
    let cfg = Config {
        service_time: ServiceTime::Fixed(Duration::from_millis(30)),
        sse_heartbeat: Duration::from_millis(50),
        flag_change_interval: Duration::ZERO,
        identity: Identity {
            pod: "pod-1".into(),
            node: "n".into(),
            zone: "z".into(),
        },
        serve: ServeOptions {
            drain_delay: Duration::from_millis(500),
            shutdown_timeout: Duration::from_secs(5),
            ..ServeOptions::default()
        },
    };
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(flagsvc::serve(listener, cfg, async {
        let _ = stopped.await;
    }));

    let mut conn = Conn::open(addr).await.unwrap();
    for _ in 0..3 {
        assert_eq!(conn.get("/flags/checkout").await.unwrap().status, 200);
    }
    assert_eq!(conn.get("/nope").await.unwrap().status, 404);

    let mut streamer = Conn::open(addr).await.unwrap();
    let stream = streamer.open_stream("/stream").await.unwrap();
    let mut body = stream.into_body();
    // The snapshot and a heartbeat or two.
    for _ in 0..2 {
        body.frame().await.unwrap().unwrap();
    }

    let text = scrape(&mut conn).await;
    assert_eq!(
        value(
            &text,
            "flagsvc_requests_total{route=\"flags\",code=\"200\"}"
        ),
        3.0
    );
    assert_eq!(
        value(
            &text,
            "flagsvc_requests_total{route=\"other\",code=\"404\"}"
        ),
        1.0
    );
    assert_eq!(
        value(
            &text,
            "flagsvc_requests_total{route=\"stream\",code=\"200\"}"
        ),
        1.0
    );
    assert_eq!(
        value(
            &text,
            "flagsvc_request_duration_seconds_count{route=\"flags\"}"
        ),
        3.0
    );
    let sum = value(
        &text,
        "flagsvc_request_duration_seconds_sum{route=\"flags\"}",
    );
    assert!(sum >= 0.09, "3 lookups of 30 ms: {sum}");
    assert_eq!(value(&text, "flagsvc_sse_streams_open"), 1.0);
    assert!(value(&text, "flagsvc_sse_events_total") >= 2.0);
    assert_eq!(value(&text, "flagsvc_draining"), 0.0);

    drop(body);
    drop(streamer);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let text = scrape(&mut conn).await;
    assert_eq!(
        value(&text, "flagsvc_sse_streams_open"),
        0.0,
        "the client left"
    );

    stop.send(()).unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut fresh = Conn::open(addr).await.unwrap();
    let text = scrape(&mut fresh).await;
    assert_eq!(value(&text, "flagsvc_draining"), 1.0);
    drop(fresh);
    drop(conn);
    task.await.unwrap();
}

//! The load balancer's data plane against hyper test backends on loopback.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::{Body, Frame, Incoming};
use hyper::client::conn::http1::SendRequest;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use loadbalancer::proxy::{
    ERROR_HEADER, LbConfig, LbErrorReason, LbStats, LoadBalancer, PodTarget, TARGET_HEADER,
};
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::time::{Instant, timeout};
use tokio_util::sync::CancellationToken;

type TestBody = UnsyncBoxBody<Bytes, std::convert::Infallible>;

/// A body fed from a channel, one frame per message: the backend's SSE stream.
struct ChannelBody(mpsc::UnboundedReceiver<Bytes>);

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        self.0
            .poll_recv(cx)
            .map(|event| event.map(|data| Ok(Frame::data(data))))
    }
}

/// A hyper backend standing in for a pod: `/` answers its name, `/slow` after 500 ms, `/hang`
/// after 10 s, `/sse` streams what the test pushes into `sse`.
struct Backend {
    pod: &'static str,
    addr: SocketAddr,
    connections: Arc<AtomicUsize>,
    sse: Arc<Mutex<Option<mpsc::UnboundedReceiver<Bytes>>>>,
}

impl Backend {
    async fn start(pod: &'static str, stop: &CancellationToken) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let backend = Backend {
            pod,
            addr: listener.local_addr().unwrap(),
            connections: Arc::default(),
            sse: Arc::default(),
        };
        let (connections, sse, stop) = (
            backend.connections.clone(),
            backend.sse.clone(),
            stop.clone(),
        );
        tokio::spawn(async move {
            loop {
                let (stream, _) = tokio::select! {
                    () = stop.cancelled() => return,
                    accepted = listener.accept() => accepted.unwrap(),
                };
                connections.fetch_add(1, Ordering::SeqCst);
                let sse = sse.clone();
                let service = service_fn(move |req: Request<Incoming>| {
                    let sse = sse.clone();
                    async move { Ok::<_, std::convert::Infallible>(route(pod, req, sse).await) }
                });
                let stop = stop.clone();
                tokio::spawn(async move {
                    let conn = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service);
                    tokio::select! {
                        () = stop.cancelled() => {}
                        _ = conn => {}
                    }
                });
            }
        });
        backend
    }

    fn target(&self) -> PodTarget {
        PodTarget {
            pod: self.pod.into(),
            addr: self.addr,
        }
    }
}

async fn route(
    pod: &'static str,
    req: Request<Incoming>,
    sse: Arc<Mutex<Option<mpsc::UnboundedReceiver<Bytes>>>>,
) -> Response<TestBody> {
    let full = |text: &'static str| Full::new(Bytes::from_static(text.as_bytes())).boxed_unsync();
    match req.uri().path() {
        "/slow" => tokio::time::sleep(Duration::from_millis(500)).await,
        "/hang" => tokio::time::sleep(Duration::from_secs(10)).await,
        "/sse" => {
            let events = sse.lock().unwrap().take().expect("one SSE stream per test");
            return Response::builder()
                .header("content-type", "text/event-stream")
                .body(ChannelBody(events).boxed_unsync())
                .unwrap();
        }
        _ => {}
    }
    Response::new(full(pod))
}

/// A keep-alive client connection to the balancer.
async fn connect(addr: SocketAddr) -> SendRequest<Empty<Bytes>> {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    sender
}

#[derive(Debug)]
struct Reply {
    status: StatusCode,
    target: Option<String>,
    error: Option<String>,
    body: String,
}

async fn send(sender: &mut SendRequest<Empty<Bytes>>, path: &str) -> Response<Incoming> {
    sender.ready().await.unwrap();
    let req = Request::get(path)
        .header("host", "lb.test")
        .body(Empty::new())
        .unwrap();
    timeout(Duration::from_secs(5), sender.send_request(req))
        .await
        .expect("response head within 5 s")
        .unwrap()
}

async fn get(sender: &mut SendRequest<Empty<Bytes>>, path: &str) -> Reply {
    let response = send(sender, path).await;
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_string())
    };
    let (status, target, error) = (
        response.status(),
        header(TARGET_HEADER),
        header(ERROR_HEADER),
    );
    let body = timeout(Duration::from_secs(5), response.into_body().collect())
        .await
        .expect("body within 5 s")
        .unwrap()
        .to_bytes();
    Reply {
        status,
        target,
        error,
        body: String::from_utf8(body.to_vec()).unwrap(),
    }
}

async fn start_lb(config: LbConfig, stop: &CancellationToken) -> LoadBalancer {
    LoadBalancer::start(Instant::now(), config, stop.clone())
        .await
        .unwrap()
}

/// Waits (bounded) until `check` holds for a snapshot.
async fn wait_for(lb: &LoadBalancer, what: &str, check: impl Fn(&LbStats) -> bool) {
    for _ in 0..300 {
        if check(&lb.snapshot()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for {what}: {:#?}", lb.snapshot());
}

fn assert_buckets_sum_to_totals(stats: &LbStats) {
    for (pod, pod_stats) in &stats.pods {
        assert_eq!(pod_stats.bucket_sum(), pod_stats.totals, "pod {pod}");
    }
    let mut sum = loadbalancer::proxy::Counts::default();
    for pod_stats in stats.pods.values() {
        sum.add(&pod_stats.totals);
    }
    assert_eq!(sum, stats.totals);
    assert_eq!(
        stats.no_target_buckets.values().sum::<u64>(),
        stats.no_target
    );
}

/// An address nothing listens on any more: the pod's process is gone.
async fn gone_addr() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    listener.local_addr().unwrap()
}

#[tokio::test]
async fn round_robin_is_exact_over_kept_alive_connections() {
    let stop = CancellationToken::new();
    let lb = start_lb(LbConfig::default(), &stop).await;
    let backends = [
        Backend::start("p1", &stop).await,
        Backend::start("p2", &stop).await,
        Backend::start("p3", &stop).await,
    ];
    lb.set_targets(backends.iter().map(Backend::target).collect());

    let mut client = connect(lb.addr()).await;
    let mut seen = BTreeMap::<String, u64>::new();
    let mut order = Vec::new();
    for _ in 0..300 {
        let reply = get(&mut client, "/").await;
        assert_eq!(reply.status, StatusCode::OK);
        assert_eq!(reply.target.as_deref(), Some(reply.body.as_str()));
        *seen.entry(reply.body.clone()).or_default() += 1;
        if order.len() < 6 {
            order.push(reply.body);
        }
    }
    assert_eq!(order, ["p1", "p2", "p3", "p1", "p2", "p3"]);
    assert_eq!(
        seen,
        BTreeMap::from([("p1".into(), 100), ("p2".into(), 100), ("p3".into(), 100)])
    );

    wait_for(&lb, "all requests finished", |s| {
        s.pods.values().all(|p| p.in_flight == 0)
    })
    .await;
    let stats = lb.snapshot();
    assert_eq!(stats.connections, 1, "the client connection was kept alive");
    for backend in &backends {
        let pod = stats.pod(backend.pod).unwrap();
        assert_eq!(pod.totals.sent, 100);
        assert_eq!(pod.totals.status(200), 100);
        assert_eq!(pod.totals.responses(), 100);
        assert!(pod.totals.lb_errors.is_empty());
        // Pooled keep-alive connections: one per target, allowing for the pool's return of a
        // connection racing the next request.
        let conns = backend.connections.load(Ordering::SeqCst);
        assert!(
            (1..=3).contains(&conns),
            "{} connections to {}",
            conns,
            backend.pod
        );
    }
    assert_eq!(stats.requests(), 300);
    assert_buckets_sum_to_totals(&stats);
    stop.cancel();
}

#[tokio::test]
async fn removed_target_gets_no_new_requests_but_in_flight_completes() {
    let stop = CancellationToken::new();
    let lb = start_lb(LbConfig::default(), &stop).await;
    let (a, b) = (
        Backend::start("a", &stop).await,
        Backend::start("b", &stop).await,
    );
    lb.set_targets(vec![a.target()]);

    let mut slow_client = connect(lb.addr()).await;
    let slow = tokio::spawn(async move { get(&mut slow_client, "/slow").await });
    wait_for(&lb, "the slow request in flight to a", |s| {
        s.pod("a").is_some_and(|p| p.in_flight == 1)
    })
    .await;

    // a is deregistered (draining): out of the routable set.
    lb.set_targets(vec![b.target()]);
    let mut client = connect(lb.addr()).await;
    for _ in 0..10 {
        let reply = get(&mut client, "/").await;
        assert_eq!((reply.status, reply.body.as_str()), (StatusCode::OK, "b"));
    }

    let reply = slow.await.unwrap();
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.target.as_deref(), Some("a"));
    assert_eq!(reply.body, "a");

    wait_for(&lb, "a's request finished", |s| {
        s.pod("a").unwrap().in_flight == 0
    })
    .await;
    let stats = lb.snapshot();
    let (pa, pb) = (stats.pod("a").unwrap(), stats.pod("b").unwrap());
    assert_eq!((pa.totals.sent, pa.totals.status(200)), (1, 1));
    assert_eq!((pb.totals.sent, pb.totals.status(200)), (10, 10));
    let removed = pa.removed_at_ms().expect("a was removed");
    assert!(pa.last_sent_ms.unwrap() <= removed);
    assert!(pb.first_sent_ms.unwrap() >= removed);
    assert_eq!(pb.removed_at_ms(), None);
    assert_eq!(
        pa.routable.iter().map(|c| c.routable).collect::<Vec<_>>(),
        [true, false]
    );
    assert_buckets_sum_to_totals(&stats);
    stop.cancel();
}

#[tokio::test]
async fn gone_target_gives_502_connect_counted_for_its_pod() {
    let stop = CancellationToken::new();
    let lb = start_lb(LbConfig::default(), &stop).await;
    let live = Backend::start("live", &stop).await;
    let gone = PodTarget {
        pod: "gone".into(),
        addr: gone_addr().await,
    };
    lb.set_targets(vec![gone.clone()]);

    let mut client = connect(lb.addr()).await;
    let reply = get(&mut client, "/").await;
    assert_eq!(reply.status, StatusCode::BAD_GATEWAY);
    assert_eq!(reply.error.as_deref(), Some("connect"));
    assert_eq!(reply.target.as_deref(), Some("gone"));
    assert!(
        reply
            .body
            .contains("502 Bad Gateway: upstream connect error"),
        "{}",
        reply.body
    );

    // Behind the balancer with a live pod: strictly alternating, on the same client connection.
    lb.set_targets(vec![live.target(), gone.clone()]);
    let mut statuses = Vec::new();
    for _ in 0..10 {
        let reply = get(&mut client, "/").await;
        statuses.push((reply.status.as_u16(), reply.target.unwrap()));
    }
    let expected: Vec<_> = (0..10)
        .map(|i| {
            if i % 2 == 0 {
                (502, "gone".to_string())
            } else {
                (200, "live".to_string())
            }
        })
        .collect();
    // The cursor was at 1 after the first request, so the first of these goes to index 1.
    assert_eq!(statuses, expected);

    let stats = lb.snapshot();
    let g = stats.pod("gone").unwrap();
    assert_eq!(g.totals.sent, 6);
    assert_eq!(g.totals.status(502), 6);
    assert_eq!(g.totals.lb_error(LbErrorReason::Connect), 6);
    assert_eq!(g.in_flight, 0);
    assert_eq!(stats.pod_totals("live").status(200), 5);
    assert_eq!(stats.connections, 1, "502s keep the client connection");
    assert_buckets_sum_to_totals(&stats);
    stop.cancel();
}

#[tokio::test]
async fn reset_before_response_gives_502_reset() {
    let stop = CancellationToken::new();
    let lb = start_lb(LbConfig::default(), &stop).await;
    // A pod that accepts, reads the request and closes without answering.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        for _ in 0..10 {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let mut buf = [0u8; 1024];
            let _ = stream.read(&mut buf).await;
        }
    });
    lb.set_targets(vec![PodTarget {
        pod: "rude".into(),
        addr,
    }]);
    let mut client = connect(lb.addr()).await;
    for _ in 0..3 {
        let reply = get(&mut client, "/").await;
        assert_eq!(reply.status, StatusCode::BAD_GATEWAY);
        assert_eq!(reply.error.as_deref(), Some("reset"));
        assert_eq!(reply.target.as_deref(), Some("rude"));
    }
    let totals = lb.snapshot().pod_totals("rude");
    assert_eq!(totals.lb_error(LbErrorReason::Reset), 3);
    assert_eq!(totals.status(502), 3);
    stop.cancel();
}

#[tokio::test]
async fn silent_target_gives_504_after_the_target_timeout() {
    let stop = CancellationToken::new();
    let config = LbConfig {
        target_timeout: Duration::from_millis(200),
        ..LbConfig::default()
    };
    let lb = start_lb(config, &stop).await;
    let slow = Backend::start("slow", &stop).await;
    lb.set_targets(vec![slow.target()]);
    let mut client = connect(lb.addr()).await;
    let started = Instant::now();
    let reply = get(&mut client, "/hang").await;
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(reply.status, StatusCode::GATEWAY_TIMEOUT);
    assert_eq!(reply.error.as_deref(), Some("timeout"));
    assert_eq!(reply.target.as_deref(), Some("slow"));
    // The same target still serves fast requests.
    assert_eq!(get(&mut client, "/").await.status, StatusCode::OK);
    let totals = lb.snapshot().pod_totals("slow");
    assert_eq!(totals.lb_error(LbErrorReason::Timeout), 1);
    assert_eq!((totals.status(504), totals.status(200)), (1, 1));
    stop.cancel();
}

#[tokio::test]
async fn no_routable_target_gives_503() {
    let stop = CancellationToken::new();
    let lb = start_lb(LbConfig::default(), &stop).await;
    let mut client = connect(lb.addr()).await;
    let reply = get(&mut client, "/").await;
    assert_eq!(reply.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(reply.target, None);
    assert_eq!(reply.error.as_deref(), Some("no-target"));

    let pod = Backend::start("p", &stop).await;
    lb.set_targets(vec![pod.target()]);
    assert_eq!(get(&mut client, "/").await.status, StatusCode::OK);
    lb.set_targets(vec![]);
    assert_eq!(
        get(&mut client, "/").await.status,
        StatusCode::SERVICE_UNAVAILABLE
    );

    let stats = lb.snapshot();
    assert_eq!(stats.no_target, 2);
    assert_eq!(stats.requests(), 3);
    assert_eq!(stats.pod_totals("p").sent, 1);
    assert_buckets_sum_to_totals(&stats);
    stop.cancel();
}

#[tokio::test]
async fn sse_stream_is_relayed_without_buffering() {
    let stop = CancellationToken::new();
    let lb = start_lb(LbConfig::default(), &stop).await;
    let pod = Backend::start("sse-pod", &stop).await;
    let (events, rx) = mpsc::unbounded_channel();
    *pod.sse.lock().unwrap() = Some(rx);
    lb.set_targets(vec![pod.target()]);

    let mut client = connect(lb.addr()).await;
    let response = send(&mut client, "/sse").await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()[TARGET_HEADER], "sse-pod");
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut body = response.into_body();

    for event in ["data: one\n\n", "data: two\n\n"] {
        events.send(Bytes::from_static(event.as_bytes())).unwrap();
        let frame = timeout(Duration::from_secs(2), body.frame())
            .await
            .expect("the event arrives while the stream stays open")
            .expect("the stream is open")
            .unwrap();
        assert_eq!(frame.into_data().unwrap(), event.as_bytes());
    }
    let stats = lb.snapshot();
    let p = stats.pod("sse-pod").unwrap();
    assert_eq!((p.in_flight, p.totals.status(200)), (1, 1));

    drop(events);
    let end = timeout(Duration::from_secs(2), body.frame())
        .await
        .expect("the stream ends when the pod ends it");
    assert!(end.is_none(), "{end:?}");
    wait_for(&lb, "the stream finished", |s| {
        s.pod("sse-pod").unwrap().in_flight == 0
    })
    .await;
    let totals = lb.snapshot().pod_totals("sse-pod");
    assert_eq!((totals.sent, totals.body_errors), (1, 0));
    stop.cancel();
}

#[tokio::test]
async fn time_buckets_of_mixed_traffic_sum_to_totals() {
    let stop = CancellationToken::new();
    let lb = start_lb(LbConfig::default(), &stop).await;
    let live = Backend::start("live", &stop).await;
    lb.set_targets(vec![
        live.target(),
        PodTarget {
            pod: "gone".into(),
            addr: gone_addr().await,
        },
    ]);
    let mut client = connect(lb.addr()).await;
    for _ in 0..20 {
        get(&mut client, "/").await;
    }
    // Spread over more than one second so there is more than one bucket.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    for _ in 0..4 {
        get(&mut client, "/").await;
    }
    lb.set_targets(vec![]);
    for _ in 0..3 {
        get(&mut client, "/").await;
    }
    wait_for(&lb, "all finished", |s| {
        s.pods.values().all(|p| p.in_flight == 0)
    })
    .await;

    let stats = lb.snapshot();
    assert_buckets_sum_to_totals(&stats);
    let (l, g) = (stats.pod("live").unwrap(), stats.pod("gone").unwrap());
    assert_eq!((l.totals.sent, l.totals.status(200)), (12, 12));
    assert_eq!((g.totals.sent, g.totals.bad_gateway()), (12, 12));
    assert!(l.buckets.len() >= 2, "{:?}", l.buckets.keys());
    // The first 20 requests were sent within second 0, the last 4 after it.
    assert_eq!(g.window(0, 1).lb_error(LbErrorReason::Connect), 10);
    assert_eq!(g.window(1, 100).lb_error(LbErrorReason::Connect), 2);
    assert_eq!(stats.no_target, 3);
    assert_eq!(stats.requests(), 27);
    let json = serde_json::to_value(&stats).unwrap();
    assert_eq!(json["pods"]["gone"]["totals"]["lb_errors"]["connect"], 12);
    assert_eq!(json["pods"]["gone"]["totals"]["by_status"]["502"], 12);
    stop.cancel();
}

#[tokio::test]
async fn silent_stream_is_cut_after_the_target_timeout() {
    let stop = CancellationToken::new();
    let config = LbConfig {
        target_timeout: Duration::from_millis(300),
        ..LbConfig::default()
    };
    let lb = start_lb(config, &stop).await;
    let pod = Backend::start("quiet", &stop).await;
    let (events, rx) = mpsc::unbounded_channel();
    *pod.sse.lock().unwrap() = Some(rx);
    lb.set_targets(vec![pod.target()]);

    let mut client = connect(lb.addr()).await;
    let mut body = send(&mut client, "/sse").await.into_body();
    events.send(Bytes::from_static(b"data: hi\n\n")).unwrap();
    let first = timeout(Duration::from_secs(2), body.frame()).await.unwrap();
    assert_eq!(first.unwrap().unwrap().into_data().unwrap(), "data: hi\n\n");
    // Then the pod goes silent with the stream open: the balancer cuts it.
    let started = Instant::now();
    let cut = timeout(Duration::from_secs(3), body.frame())
        .await
        .expect("the stream is cut within the target timeout");
    assert!(matches!(cut, Some(Err(_)) | None), "{cut:?}");
    assert!(started.elapsed() >= Duration::from_millis(250));
    wait_for(&lb, "the cut stream finished", |s| {
        s.pod("quiet").unwrap().in_flight == 0
    })
    .await;
    let totals = lb.snapshot().pod_totals("quiet");
    assert_eq!((totals.status(200), totals.body_errors), (1, 1));
    drop(events);
    stop.cancel();
}

#[tokio::test]
async fn client_gone_before_the_response_is_counted() {
    use tokio::io::AsyncWriteExt;
    let stop = CancellationToken::new();
    let lb = start_lb(LbConfig::default(), &stop).await;
    let pod = Backend::start("p", &stop).await;
    lb.set_targets(vec![pod.target()]);
    let mut raw = TcpStream::connect(lb.addr()).await.unwrap();
    raw.write_all(b"GET /slow HTTP/1.1\r\nhost: lb.test\r\n\r\n")
        .await
        .unwrap();
    wait_for(&lb, "the request in flight", |s| {
        s.pod("p").is_some_and(|p| p.in_flight == 1)
    })
    .await;
    drop(raw);
    wait_for(&lb, "the request finished", |s| {
        s.pod("p").unwrap().in_flight == 0
    })
    .await;
    let totals = lb.snapshot().pod_totals("p");
    assert_eq!(
        (totals.sent, totals.client_closed, totals.responses()),
        (1, 1, 0)
    );
    stop.cancel();
}

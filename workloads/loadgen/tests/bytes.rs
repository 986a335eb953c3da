//! Bytes per pod against scripted raw-TCP servers that count every byte they read and wrote
//! on each connection (each connection answers as one pod): loadgen's `bytes_sent` and
//! `bytes_received` per pod are exactly the server's counts, on the keep-alive fast path, on
//! per-request connections (hyper) and on SSE streams; requests that got no answer are
//! counted as unattributed; the timeline's per-second bytes add up to the per-pod totals.

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{TestServer, accept_each, config};
use loadgen::{ConnectionModel, Report, ReportExt};
use tokio::io::AsyncWriteExt;
use workload_contract::loadgen::report::ByteCounts;
use workload_test_support::wait_until;

/// What the server read and wrote, by the pod its connection answered as.
type Tally = Arc<Mutex<BTreeMap<String, ByteCounts>>>;

/// What connection `conn` does with request `req`: the bytes to answer with, or `None` to
/// close without answering.
type Script = dyn Fn(usize, usize) -> Option<Vec<u8>> + Send + Sync;

/// The tally's key for requests read and not answered.
const UNANSWERED: &str = "(unanswered)";

/// Connection `c` answers as `pod(c)` with `script`'s replies, adding what it read and wrote to
/// the tally; a request it closes on instead of answering goes to [`UNANSWERED`].
async fn counting_server(pod: fn(usize) -> String, script: Arc<Script>) -> (TestServer, Tally) {
    let tally: Tally = Arc::default();
    let server_tally = tally.clone();
    let server = accept_each(move |conn, mut stream| {
        let (tally, script) = (server_tally.clone(), script.clone());
        tokio::spawn(async move {
            let mut pending = Vec::new();
            let add = |key: String, bytes: ByteCounts| {
                *tally.lock().unwrap().entry(key).or_default() += bytes;
            };
            for req in 0..10_000 {
                let mut read = 0;
                if !common::read_request(&mut stream, &mut pending, &mut read).await {
                    break;
                }
                let Some(reply) = script(conn, req) else {
                    add(
                        UNANSWERED.to_owned(),
                        ByteCounts {
                            sent: read,
                            received: 0,
                        },
                    );
                    break;
                };
                if stream.write_all(&reply).await.is_err() {
                    break;
                }
                let received = reply.len() as u64;
                add(
                    pod(conn),
                    ByteCounts {
                        sent: read,
                        received,
                    },
                );
            }
        });
    })
    .await;
    (server, tally)
}

fn sized(status: u16, pod: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nx-pod: {pod}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn chunked(pod: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nx-pod: {pod}\r\n\r\n\
         4\r\nwiki\r\n5;name=v\r\npedia\r\n0\r\n\r\n"
    )
    .into_bytes()
}

fn pod_of(conn: usize) -> String {
    format!("pod-{conn}")
}

/// The per-pod bytes of a report: its answers' and its streams'.
fn per_pod(report: &Report) -> BTreeMap<String, ByteCounts> {
    let pods = report.by_backend.keys().chain(report.sse.by_backend.keys());
    pods.map(|p| (p.clone(), report.bytes_of(p))).collect()
}

/// The server's tally once it stops changing (its last counts land just after loadgen
/// returns).
async fn settled(tally: &Tally) -> BTreeMap<String, ByteCounts> {
    let mut last = tally.lock().unwrap().clone();
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = tally.lock().unwrap().clone();
        if now == last {
            return now;
        }
        last = now;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_alive_bytes_per_pod_are_what_the_server_read_and_wrote() {
    // Four reused connections, each one pod: sized and chunked answers, a 503 now and then.
    let script: Arc<Script> = Arc::new(|conn, req| {
        let pod = pod_of(conn);
        Some(match req % 3 {
            0 => sized(200, &pod, "hello"),
            1 => chunked(&pod),
            _ => sized(503, &pod, "busy, try again"),
        })
    });
    let (server, tally) = counting_server(pod_of, script).await;
    let report = loadgen::run(
        config(server.url("/flags/a"), 40.0, Duration::from_secs(1), 4),
        std::future::pending(),
    )
    .await
    .unwrap();
    report.check_invariants().unwrap();
    assert_eq!(report.attempted, 40);
    assert_eq!(report.total_transport_errors(), 0);
    let server = settled(&tally).await;
    assert_eq!(per_pod(&report), server);
    assert_eq!(report.unattributed_bytes, ByteCounts::ZERO);
    // Every request is the same head: sent = requests × its length.
    let total_sent: u64 = server.values().map(|b| b.sent).sum();
    assert_eq!(total_sent % 40, 0, "{total_sent}");
    // The timeline's seconds add up to the same per pod.
    let mut rows: BTreeMap<String, ByteCounts> = BTreeMap::new();
    for row in &report.timeline {
        for (pod, b) in &row.bytes_by_backend {
            *rows.entry(pod.clone()).or_default() += *b;
        }
    }
    assert_eq!(rows, server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_request_connections_count_what_hyper_wrote_and_read() {
    let script: Arc<Script> = Arc::new(|conn, _| Some(chunked(&pod_of(conn))));
    let (server, tally) = counting_server(pod_of, script).await;
    let mut c = config(server.url("/p"), 20.0, Duration::from_secs(1), 2);
    c.connection_model = ConnectionModel::PerRequest;
    let report = loadgen::run(c, std::future::pending()).await.unwrap();
    report.check_invariants().unwrap();
    assert_eq!(report.responses["200"], 20);
    let server = settled(&tally).await;
    assert_eq!(server.len(), 20, "one connection per request");
    assert_eq!(per_pod(&report), server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_without_an_answer_are_unattributed() {
    // Each connection answers three requests and closes on the fourth without answering (the
    // keep-alive path counts a reset; the request's bytes are nobody's).
    let script: Arc<Script> =
        Arc::new(|conn, req| (req < 3).then(|| sized(200, &pod_of(conn), "ok")));
    let (server, tally) = counting_server(pod_of, script).await;
    let report = loadgen::run(
        config(server.url("/"), 20.0, Duration::from_secs(1), 1),
        std::future::pending(),
    )
    .await
    .unwrap();
    report.check_invariants().unwrap();
    let server = settled(&tally).await;
    assert_eq!(report.attempted, 20);
    assert_eq!(report.transport_errors["reset"], 5, "{report:?}");
    let mut answered = server.clone();
    let unanswered = answered.remove(UNANSWERED).unwrap();
    assert_eq!(per_pod(&report), answered);
    assert_eq!(report.unattributed_bytes, unanswered);
    assert_eq!(unanswered.received, 0);
    assert_eq!(unanswered.sent, 5 * answered["pod-0"].sent / 3);
    assert_eq!(
        report.total_bytes(),
        server.values().fold(ByteCounts::ZERO, |acc, b| acc + *b)
    );
}

/// One SSE event as a chunk: `data: {"n":NN}` and its framing, 22 bytes for two digits.
fn event_chunk(i: usize) -> Vec<u8> {
    let event = format!("data: {{\"n\":{:02}}}\n\n", i % 100);
    format!("{:x}\r\n{event}\r\n", event.len()).into_bytes()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sse_stream_bytes_go_to_the_pod_that_serves_the_stream() {
    // Two streams, each on its own connection answering as `stream-c`: a head, then an event
    // every 20 ms until the client goes away.
    let tally: Tally = Arc::default();
    let server_tally = tally.clone();
    let server = accept_each(move |conn, mut stream| {
        let tally = server_tally.clone();
        tokio::spawn(async move {
            let (mut read, mut written) = (0u64, 0u64);
            let mut pending = Vec::new();
            if common::read_request(&mut stream, &mut pending, &mut read).await {
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                     transfer-encoding: chunked\r\nx-pod: stream-{conn}\r\n\r\n"
                );
                let mut piece = head.into_bytes();
                for i in 0..500 {
                    if stream.write_all(&piece).await.is_err() {
                        break;
                    }
                    written += piece.len() as u64;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    piece = event_chunk(i);
                }
            }
            let mut t = tally.lock().unwrap();
            *t.entry(format!("stream-{conn}")).or_default() += ByteCounts {
                sent: read,
                received: written,
            };
        });
    })
    .await;
    let mut c = config(server.url("/flags/x"), 0.0, Duration::from_millis(800), 1);
    c.sse_streams = 2;
    c.sse_url = Some(server.url("/stream"));
    let report = loadgen::run(c, std::future::pending()).await.unwrap();
    report.check_invariants().unwrap();
    assert!(report.sse.events >= 2 * 20, "{:?}", report.sse);
    assert_eq!(report.sse.reconnects, 0);
    assert_eq!(server.accepted(), 2);
    // The server's writes end when a write fails after loadgen closed the stream.
    wait_until(
        "both streams ended at the server",
        Duration::from_secs(5),
        || {
            let n = tally.lock().unwrap().len();
            async move { n == 2 }
        },
    )
    .await;
    let server = tally.lock().unwrap().clone();
    let loadgen = per_pod(&report);
    assert_eq!(loadgen.keys().collect::<Vec<_>>(), ["stream-0", "stream-1"]);
    for (pod, b) in &loadgen {
        let s = server[pod];
        assert_eq!(b.sent, s.sent, "{pod}: the stream request, exactly");
        // Written after loadgen's last read (in flight, or accepted by the kernel after the
        // close): a few events at most, never less than loadgen read.
        assert!(b.received <= s.received, "{pod}: {b:?} vs {s:?}");
        assert!(s.received - b.received <= 4 * 22, "{pod}: {b:?} vs {s:?}");
        assert!(b.received > 40 * 22 / 2, "{pod}: {b:?}");
        assert!(!report.by_backend.contains_key(pod), "streams only");
    }
    assert_eq!(report.unattributed_bytes, ByteCounts::ZERO);
}

//! The keep-alive fast path against scripted raw-TCP servers: response framings written in
//! small pieces, responses cut short, `connection: close` and bodies delimited by the close,
//! connections the server closes while idle, protocol errors. Each test checks the counts
//! exactly (`attempted = responses + transport errors`) and the per-pod attribution.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{TestServer, accept_each, config};
use loadgen::{Report, ReportExt};
use tokio::io::AsyncWriteExt;

/// What the scripted server does for request `req` (0, 1, …) on connection `conn`.
#[derive(Clone)]
struct Reply {
    bytes: Vec<u8>,
    /// Written this many bytes at a time, with a short pause between pieces.
    piece: usize,
    /// Then close the connection (after `close_after` more, if set).
    close: bool,
    close_after: Duration,
}

impl Reply {
    fn whole(bytes: impl Into<Vec<u8>>) -> Self {
        Self {
            bytes: bytes.into(),
            piece: usize::MAX,
            close: false,
            close_after: Duration::ZERO,
        }
    }

    fn in_pieces(mut self, piece: usize) -> Self {
        self.piece = piece;
        self
    }

    fn then_close(mut self, after: Duration) -> Self {
        self.close = true;
        self.close_after = after;
        self
    }
}

async fn scripted<F>(script: F) -> TestServer
where
    F: Fn(usize, usize) -> Reply + Send + Sync + 'static,
{
    let script = Arc::new(script);
    accept_each(move |conn, mut stream| {
        // Each piece leaves as its own segment.
        let _ = stream.set_nodelay(true);
        let script = script.clone();
        tokio::spawn(async move {
            let mut pending = Vec::new();
            // Bounded: a client sends at most a few dozen requests per test.
            for req in 0..10_000 {
                if !common::read_request(&mut stream, &mut pending, &mut 0).await {
                    return;
                }
                let reply = script(conn, req);
                for piece in reply.bytes.chunks(reply.piece.max(1)) {
                    if stream.write_all(piece).await.is_err() {
                        return;
                    }
                    if reply.piece != usize::MAX {
                        tokio::time::sleep(Duration::from_millis(1)).await;
                    }
                }
                if reply.close {
                    tokio::time::sleep(reply.close_after).await;
                    return;
                }
            }
        });
    })
    .await
}

/// One second of load at `rps` over `connections` keep-alive connections to `server`.
async fn run(server: &TestServer, rps: f64, connections: usize) -> Report {
    loadgen::run(
        config(server.url("/"), rps, Duration::from_secs(1), connections),
        std::future::pending(),
    )
    .await
    .unwrap()
}

fn errors(report: &Report) -> [u64; 4] {
    ["connect_refused", "reset", "timeout", "other"].map(|k| report.transport_errors[k])
}

fn conserved(report: &Report) {
    assert_eq!(
        report.attempted,
        report.total_responses() + report.total_transport_errors()
    );
    report.check_invariants().unwrap();
}

fn chunked(pod: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Pod: {pod}\r\n\r\n\
         4\r\nwiki\r\n5;name=v\r\npedia\r\n0\r\nx-checksum: 1\r\n\r\n"
    )
    .into_bytes()
}

fn sized(status: u16, pod: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nx-pod: {pod}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn framings_written_in_small_pieces_count_per_pod_on_reused_connections() {
    // Connection c answers as pod-c: chunked bodies three bytes at a time, sized ones one byte
    // at a time, alternating, and a 503 every fourth request on a connection.
    let server = scripted(|conn, req| {
        let pod = format!("pod-{conn}");
        match req % 4 {
            0 => Reply::whole(chunked(&pod)).in_pieces(3),
            1 => Reply::whole(sized(200, &pod, "hello")).in_pieces(1),
            2 => Reply::whole(chunked(&pod)),
            _ => Reply::whole(sized(503, &pod, "busy")).in_pieces(7),
        }
    })
    .await;
    let report = run(&server, 20.0, 4).await;
    assert_eq!(report.attempted, 20);
    assert_eq!(errors(&report), [0, 0, 0, 0]);
    let ok = report.responses["200"];
    let busy = report.responses.get("503").copied().unwrap_or(0);
    assert_eq!(ok + busy, 20);
    // Some connection served four requests (20 over 4 connections).
    assert!(busy >= 1, "503s {busy}");
    conserved(&report);
    // Four connections, each reused for all its requests: one backend each, no other.
    assert_eq!(server.accepted(), 4);
    for (pod, b) in &report.by_backend {
        assert!(
            ["pod-0", "pod-1", "pod-2", "pod-3"].contains(&pod.as_str()),
            "{pod}"
        );
        assert_eq!(b.responses.values().sum::<u64>(), b.requests);
    }
    let per_pod: u64 = report.by_backend.values().map(|b| b.requests).sum();
    assert_eq!(per_pod, 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_response_cut_short_is_reset_and_counted_against_the_pod_that_answered_before() {
    // On every connection: a whole response, then a head promising 10 bytes, 3 of them, close.
    let server = scripted(|conn, req| {
        let pod = format!("p{conn}");
        if req == 0 {
            Reply::whole(sized(200, &pod, "ok"))
        } else {
            let cut = format!("HTTP/1.1 200 OK\r\ncontent-length: 10\r\nx-pod: {pod}\r\n\r\nabc");
            Reply::whole(cut).then_close(Duration::ZERO)
        }
    })
    .await;
    let report = run(&server, 20.0, 1).await;
    assert_eq!(report.attempted, 20);
    assert_eq!(report.responses["200"], 10);
    assert_eq!(errors(&report), [0, 10, 0, 0]);
    conserved(&report);
    // Each reset happened on a connection whose pod had answered once before.
    let pod_errors: u64 = report
        .by_backend
        .values()
        .map(|b| b.transport_errors.get("reset").copied().unwrap_or(0))
        .sum();
    assert_eq!(pod_errors, 10);
    assert_eq!(report.by_backend.len(), 10);
    assert_eq!(server.accepted(), 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_close_and_bodies_delimited_by_the_close_are_complete_responses() {
    // Even connections: `connection: close` with a length; odd ones: no length, body until close.
    let server = scripted(|conn, _| {
        if conn % 2 == 0 {
            let r =
                "HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\nx-pod: c\r\n\r\nok";
            Reply::whole(r).then_close(Duration::from_millis(50))
        } else {
            Reply::whole("HTTP/1.1 200 OK\r\nx-pod: e\r\n\r\nuntil the end")
                .in_pieces(4)
                .then_close(Duration::ZERO)
        }
    })
    .await;
    let report = run(&server, 20.0, 1).await;
    assert_eq!(report.attempted, 20);
    assert_eq!(report.responses["200"], 20);
    assert_eq!(errors(&report), [0, 0, 0, 0]);
    conserved(&report);
    assert_eq!(report.by_backend["c"].requests, 10);
    assert_eq!(report.by_backend["e"].requests, 10);
    assert_eq!(server.accepted(), 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_closed_while_idle_are_replaced_without_errors() {
    // One response per connection, then the server closes it 5 ms later without saying so;
    // requests come 100 ms apart, so each finds its connection closed and reconnects.
    let server =
        scripted(|_, _| Reply::whole(sized(200, "idle", "")).then_close(Duration::from_millis(5)))
            .await;
    let report = run(&server, 10.0, 1).await;
    assert_eq!(report.attempted, 10);
    assert_eq!(report.responses["200"], 10);
    assert_eq!(errors(&report), [0, 0, 0, 0]);
    conserved(&report);
    assert_eq!(server.accepted(), 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_errors_are_other_and_the_connection_is_not_reused() {
    let server = scripted(|_, req| {
        if req == 0 {
            Reply::whole("SSH-2.0-OpenSSH_9.2\r\n\r\n")
        } else {
            Reply::whole(sized(200, "never", "late"))
        }
    })
    .await;
    let report = run(&server, 10.0, 1).await;
    assert_eq!(report.attempted, 10);
    assert_eq!(errors(&report), [0, 0, 0, 10]);
    assert_eq!(report.total_responses(), 0);
    conserved(&report);
    // Every request met a fresh connection's first reply.
    assert_eq!(server.accepted(), 10);
}

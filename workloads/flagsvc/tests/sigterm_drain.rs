//! The real binary under steady load receives SIGTERM with a drain delay: every request sent
//! before the clients stop (as a load balancer would after deregistration) gets a 200, including
//! those still in flight when the server stops accepting.

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use support::Conn;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_with_drain_delay_loses_no_request() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_flagsvc"))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--service-time",
            "fixed:300ms",
            "--drain-delay",
            "1s",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("flagsvc binary starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr: std::net::SocketAddr = line
        .trim()
        .strip_prefix("listening http=")
        .unwrap()
        .parse()
        .unwrap();

    let ok = Arc::new(AtomicU64::new(0));
    let failed = Arc::new(AtomicU64::new(0));
    let sent = Arc::new(AtomicU64::new(0));
    let sigterm_at = Instant::now() + Duration::from_millis(700);
    // Clients keep sending until 0.9 s after SIGTERM: requests started then are still in flight
    // when accepting stops at 1.0 s, and must complete.
    let stop_sending_at = sigterm_at + Duration::from_millis(900);
    let mut workers = Vec::new();
    for _ in 0..8 {
        let (ok, failed, sent) = (ok.clone(), failed.clone(), sent.clone());
        workers.push(tokio::spawn(async move {
            let mut conn = Conn::open(addr).await.unwrap();
            for _ in 0..100 {
                if Instant::now() >= stop_sending_at {
                    break;
                }
                sent.fetch_add(1, Ordering::Relaxed);
                match conn.get("/flags/demo").await {
                    Ok(r) if r.status == 200 => ok.fetch_add(1, Ordering::Relaxed),
                    _ => failed.fetch_add(1, Ordering::Relaxed),
                };
            }
        }));
    }
    tokio::time::sleep_until(sigterm_at.into()).await;
    kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM).unwrap();
    for w in workers {
        w.await.unwrap();
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "flagsvc exits 0 after SIGTERM: {status}");
    assert_eq!(failed.load(Ordering::Relaxed), 0);
    let sent = sent.load(Ordering::Relaxed);
    // 8 workers × (1.6 s / 0.3 s) ≈ 40 requests; at least half of that proves load was steady.
    assert!(sent >= 20, "only {sent} requests were sent");
    assert_eq!(ok.load(Ordering::Relaxed), sent);
}

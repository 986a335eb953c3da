//! The cost of a kube-proxy forwarder per round trip, for `valgrind --tool=callgrind`
//! (instructions are repeatable whatever else the machine does): one keep-alive client sends
//! `N` 64-byte messages to an echo backend and reads each back, either directly (`direct`),
//! through the forwarder as it is now with no zone fault active (`pump`: `zone_faults::Path`),
//! or through the copy the forwarder used before zone faults (`copy`:
//! `tokio::io::copy_bidirectional`). A forwarder's instructions per round trip are a mode's
//! total minus `direct`'s, over `N`. Results: results/bench/forwarder-<date>.md.
//!
//!   cargo build --release -p harness-local --example forwarder_cost
//!   valgrind --tool=callgrind target/release/examples/forwarder_cost pump 20000

use std::net::SocketAddr;

use harness_local::zone_faults::{Path, ZoneFaults};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

async fn echo(listener: TcpListener) {
    let Ok((mut s, _)) = listener.accept().await else {
        return;
    };
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if s.write_all(&buf[..n]).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// A forwarder of one connection to `backend`, as `mode` forwards.
async fn forwarder(mode: String, backend: SocketAddr) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (client, _) = listener.accept().await.unwrap();
        let stop = CancellationToken::new();
        if mode == "pump" {
            let path = Path {
                faults: ZoneFaults::default(),
                from: "a".into(),
                to: Some("b".into()),
            };
            let upstream = path.connect(backend, &stop).await.unwrap();
            path.pump(client, upstream, &stop).await;
        } else {
            let (mut client, mut upstream) = (client, TcpStream::connect(backend).await.unwrap());
            let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
        }
    });
    addr
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "pump".into());
    let n: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(20_000);
    assert!(
        ["direct", "pump", "copy"].contains(&mode.as_str()),
        "mode is direct, pump or copy"
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        let backend = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let backend_addr = backend.local_addr().unwrap();
        tokio::spawn(echo(backend));
        let target = if mode == "direct" {
            backend_addr
        } else {
            forwarder(mode.clone(), backend_addr).await
        };
        let mut s = TcpStream::connect(target).await.unwrap();
        s.set_nodelay(true).unwrap();
        let msg = [7u8; 64];
        let mut back = [0u8; 64];
        for _ in 0..n {
            s.write_all(&msg).await.unwrap();
            s.read_exact(&mut back).await.unwrap();
        }
        println!("{mode}: {n} round trips");
    });
}

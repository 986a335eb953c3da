//! Hostile clients on raw TCP, for the servers' and proxies' robustness tests: bytes that are
//! no request, a head dribbled byte by byte (slowloris), a head growing past the limit slowly,
//! and a peer that vanishes with a RST. Every read is bounded to 5 s.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How long a client here waits for the server to close the connection.
const READ_LIMIT: Duration = Duration::from_secs(5);

/// Reads what `stream` receives until the server closes it (at most 5 s), as text.
pub async fn read_until_closed(stream: &mut TcpStream) -> String {
    let mut reply = Vec::new();
    let _ = tokio::time::timeout(READ_LIMIT, stream.read_to_end(&mut reply)).await;
    String::from_utf8_lossy(&reply).into_owned()
}

/// Writes `bytes` on a fresh connection and reads until the server closes it (at most 5 s).
pub async fn exchange(addr: SocketAddr, bytes: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let _ = stream.write_all(bytes).await;
    read_until_closed(&mut stream).await
}

/// Writes `head` on a fresh connection one byte every `every` (a slowloris client), then reads
/// until the server closes it: whether a write failed (the server closed first), and the reply.
pub async fn dribble(addr: SocketAddr, head: &[u8], every: Duration) -> (bool, String) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let mut write_failed = false;
    for byte in head {
        if stream.write_all(&[*byte]).await.is_err() {
            write_failed = true;
            break;
        }
        tokio::time::sleep(every).await;
    }
    (write_failed, read_until_closed(&mut stream).await)
}

/// Sends the start of a request head (`start`, no blank line), then `lines` header lines of
/// 1 KiB, one every `every`, stopping when a write fails; then reads until the server closes the
/// connection.
pub async fn head_over_the_limit(
    addr: SocketAddr,
    start: &[u8],
    lines: usize,
    every: Duration,
) -> String {
    let mut client = TcpStream::connect(addr).await.unwrap();
    client.write_all(start).await.unwrap();
    let line = format!("x-filler: {}\r\n", "a".repeat(1000));
    for _ in 0..lines {
        if client.write_all(line.as_bytes()).await.is_err() {
            break;
        }
        tokio::time::sleep(every).await;
    }
    read_until_closed(&mut client).await
}

/// Closes the connection with a RST (SO_LINGER 0): the peer vanishes without a FIN.
pub fn vanish(stream: TcpStream) {
    stream.set_zero_linger().unwrap();
    drop(stream);
}

//! A minimal HTTP/1 server that freezes periodically, for the coordinated-omission test in
//! `make bench` (scripts/bench.sh): it answers `200 ok` (with `x-pod: stall`) at once, except
//! during the last STALL of every PERIOD since it started, when every response is held until the
//! stall ends, as if the process were paused (a GC pause, a SIGSTOP, a blocked event loop).
//!
//! `cargo run --release -p loadgen --example stall_server -- 127.0.0.1:0 10s 1s`
//!
//! Arguments: ADDR (default 127.0.0.1:8080), PERIOD (default 10s), STALL (default 1s); durations
//! are a number with `ms` or `s`. Prints `listening http=ADDR` on stdout once bound; SIGINT or
//! SIGTERM stops it.

use std::convert::Infallible;
use std::io::Write;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::Full;
use hyper::body::Incoming;
use tokio::time::Instant;
use workload_common::serve::{Lifecycle, ServeOptions, serve};

fn parse_duration(s: &str) -> Result<Duration, String> {
    let (num, unit) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1u64)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1000u64)
    } else {
        return Err(format!("duration {s:?}: use e.g. 10s or 500ms"));
    };
    let n: u64 = num
        .trim()
        .parse()
        .map_err(|e| format!("duration {s:?}: {e}"))?;
    Ok(Duration::from_millis(n * unit))
}

/// How long a response that is ready `since_start` after the start must wait: until the end of the
/// stall window `[period - stall, period)` of its period, or not at all outside one.
fn hold_for(since_start: Duration, period: Duration, stall: Duration) -> Duration {
    let period_us = period.as_micros().max(1);
    let into = since_start.as_micros() % period_us;
    let stall_from = period_us.saturating_sub(stall.as_micros());
    if into >= stall_from {
        Duration::from_micros((period_us - into) as u64)
    } else {
        Duration::ZERO
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:8080".to_string());
    let period = parse_duration(&args.next().unwrap_or_else(|| "10s".to_string()))?;
    let stall = parse_duration(&args.next().unwrap_or_else(|| "1s".to_string()))?;
    if stall > period {
        return Err("STALL must not exceed PERIOD".into());
    }
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    let start = Instant::now();
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening http={}", listener.local_addr()?)?;
        out.flush()?;
    }
    let service = hyper::service::service_fn(move |_req: Request<Incoming>| async move {
        let hold = hold_for(start.elapsed(), period, stall);
        if !hold.is_zero() {
            tokio::time::sleep(hold).await;
        }
        Ok::<_, Infallible>(
            Response::builder()
                .header("x-pod", "stall")
                .body(Full::new(Bytes::from_static(b"ok")))
                .unwrap_or_default(),
        )
    });
    let shutdown = async {
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = async {
                match term.as_mut() {
                    Some(t) => { t.recv().await; }
                    None => std::future::pending::<()>().await,
                }
            } => {}
        }
    };
    let options = ServeOptions {
        shutdown_timeout: Duration::from_secs(2),
        ..ServeOptions::default()
    };
    serve(listener, service, Lifecycle::new(), options, shutdown).await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_only_inside_the_stall_window() {
        let p = Duration::from_secs(10);
        let s = Duration::from_secs(1);
        assert_eq!(hold_for(Duration::from_millis(0), p, s), Duration::ZERO);
        assert_eq!(hold_for(Duration::from_millis(8_999), p, s), Duration::ZERO);
        assert_eq!(
            hold_for(Duration::from_millis(9_000), p, s),
            Duration::from_secs(1)
        );
        assert_eq!(
            hold_for(Duration::from_millis(19_750), p, s),
            Duration::from_millis(250)
        );
    }
}

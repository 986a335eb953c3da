//! The serve loop's shutdown sequence: drain keeps serving, then in-flight requests finish.

use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use workload_common::serve::{Lifecycle, ServeOptions, serve};

async fn slow_ok(_req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    tokio::time::sleep(Duration::from_millis(300)).await;
    Ok(Response::new(Full::new(Bytes::from_static(b"done"))))
}

async fn get(addr: std::net::SocketAddr) -> Result<(u16, Bytes), String> {
    let stream = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(conn);
    let req = Request::get("/").body(Empty::<Bytes>::new()).unwrap();
    let resp = sender.send_request(req).await.map_err(|e| e.to_string())?;
    let status = resp.status().as_u16();
    let body = resp
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?;
    Ok((status, body.to_bytes()))
}

#[tokio::test]
async fn drain_delay_keeps_accepting_then_in_flight_requests_finish() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let lifecycle = Lifecycle::new();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let options = ServeOptions {
        drain_delay: Duration::from_millis(400),
        shutdown_timeout: Duration::from_secs(5),
        ..ServeOptions::default()
    };
    let server = tokio::spawn(serve(
        listener,
        service_fn(slow_ok),
        lifecycle.clone(),
        options,
        async {
            let _ = stop_rx.await;
        },
    ));

    let before = tokio::spawn(get(addr));
    tokio::time::sleep(Duration::from_millis(50)).await;
    stop_tx.send(()).unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(lifecycle.is_draining(), "draining starts at the signal");
    // Accepted during the drain delay, and finishes after accepting stopped.
    let during = tokio::spawn(get(addr));
    assert_eq!(before.await.unwrap().unwrap().0, 200);
    assert_eq!(
        during.await.unwrap().unwrap(),
        (200, Bytes::from_static(b"done"))
    );

    let summary = server.await.unwrap();
    assert!(summary.finished_cleanly);
    assert_eq!(summary.connections, 2);
    assert_eq!(summary.accepted_while_draining, 1);
    assert!(lifecycle.streams_closing().is_cancelled());
    // After the drain the port is closed.
    assert!(get(addr).await.is_err());
}

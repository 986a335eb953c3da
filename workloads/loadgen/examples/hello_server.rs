//! A minimal HTTP/1 server answering every request with `200 ok` and `x-pod: hello`, to try
//! loadgen against: `cargo run --release -p loadgen --example hello_server -- 127.0.0.1:8080`.

use std::convert::Infallible;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::Full;
use hyper::body::Incoming;
use workload_common::serve::{Lifecycle, ServeOptions, serve};

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8080".to_string());
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    eprintln!("listening on {}", listener.local_addr()?);
    let service = hyper::service::service_fn(|_req: Request<Incoming>| async {
        Ok::<_, Infallible>(
            Response::builder()
                .header("x-pod", "hello")
                .body(Full::new(Bytes::from_static(b"ok")))
                .unwrap_or_default(),
        )
    });
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    serve(
        listener,
        service,
        Lifecycle::new(),
        ServeOptions::default(),
        shutdown,
    )
    .await;
    Ok(())
}

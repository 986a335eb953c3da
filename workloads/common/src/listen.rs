//! A workload binary's two listeners (traffic and admin): bound as its flags say and announced
//! on stdout.

use std::net::SocketAddr;

use anyhow::Context;
use tokio::net::TcpListener;
use workload_contract::listening;

/// Binds `--listen` and `--admin-listen`, then prints the `listening http=ADDR admin=ADDR` line
/// (machine-readable: the harness and scripts read the bound ports from it).
pub async fn bind_and_announce(
    listen: SocketAddr,
    admin_listen: SocketAddr,
) -> anyhow::Result<(TcpListener, TcpListener)> {
    let listener = TcpListener::bind(listen)
        .await
        .with_context(|| format!("binding --listen {listen}"))?;
    let admin = TcpListener::bind(admin_listen)
        .await
        .with_context(|| format!("binding --admin-listen {admin_listen}"))?;
    println!(
        "{}",
        listening::line(&[
            ("http", listener.local_addr()?),
            ("admin", admin.local_addr()?)
        ])
    );
    Ok((listener, admin))
}

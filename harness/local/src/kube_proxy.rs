//! The data-plane half of the kube-proxy model: one TCP forwarder per zone on loopback. Each new
//! client connection gets a backend picked uniformly at random from the endpoints kube-proxy on
//! a node of that zone would use (as iptables mode does per connection); the connection keeps
//! that backend for its life. Which endpoints are usable is decided by the control-plane model
//! (`kube_model::kube_proxy`) and pushed here with [`ZoneProxy::set_backends`].

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::LocalError;
use crate::zone_faults::{Path, ZoneFaults};

/// A pod a proxy can forward to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backend {
    pub pod: String,
    pub addr: SocketAddr,
    /// The pod's zone, for the network between zones (`None`: not in a zone, no faults).
    pub zone: Option<String>,
}

#[derive(Debug, Default)]
struct State {
    backends: Vec<Backend>,
    /// Pod → connections assigned to it (the connection-level traffic matrix).
    connections: BTreeMap<String, u64>,
    /// Pod → connections to it still open.
    open: BTreeMap<String, u64>,
    /// Connections closed at once because no endpoint was usable.
    rejected: u64,
}

/// The forwarder of one zone.
#[derive(Debug, Clone)]
pub struct ZoneProxy {
    pub zone: String,
    pub addr: SocketAddr,
    state: Arc<Mutex<State>>,
    /// The faults between this zone and the backends' ([`crate::zone_faults`]).
    faults: ZoneFaults,
}

impl ZoneProxy {
    /// Binds 127.0.0.1:0 and forwards until `stop` is cancelled, through `faults` to backends
    /// in other zones.
    pub async fn start(
        zone: &str,
        seed: u64,
        faults: ZoneFaults,
        stop: CancellationToken,
    ) -> Result<Self, LocalError> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| LocalError::Io {
                context: format!("binding the kube-proxy forwarder of zone {zone}"),
                source: e,
            })?;
        let addr = listener.local_addr().map_err(|e| LocalError::Io {
            context: "reading the forwarder address".into(),
            source: e,
        })?;
        let proxy = ZoneProxy {
            zone: zone.to_string(),
            addr,
            state: Arc::new(Mutex::new(State::default())),
            faults,
        };
        let worker = proxy.clone();
        tokio::spawn(async move { worker.accept_loop(listener, seed, stop).await });
        Ok(proxy)
    }

    /// Replaces the usable endpoints; existing connections are not touched.
    pub fn set_backends(&self, backends: Vec<Backend>) {
        self.lock().backends = backends;
    }

    pub fn backends(&self) -> Vec<Backend> {
        self.lock().backends.clone()
    }

    /// Pod → connections forwarded to it so far.
    pub fn connection_counts(&self) -> BTreeMap<String, u64> {
        self.lock().connections.clone()
    }

    /// Connections to `pod` open now (they keep their backend whatever the endpoints do).
    pub fn open_connections(&self, pod: &str) -> u64 {
        self.lock().open.get(pod).copied().unwrap_or(0)
    }

    /// Connections closed because no endpoint was usable.
    pub fn rejected_connections(&self) -> u64 {
        self.lock().rejected
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    async fn accept_loop(self, listener: TcpListener, seed: u64, stop: CancellationToken) {
        let mut rng = SmallRng::seed_from_u64(seed);
        while let Some(client) = next_connection(&listener, &stop).await {
            let chosen = {
                let mut state = self.lock();
                if state.backends.is_empty() {
                    state.rejected += 1;
                    None
                } else {
                    let i = rng.random_range(0..state.backends.len());
                    let backend = state.backends[i].clone();
                    *state.connections.entry(backend.pod.clone()).or_default() += 1;
                    *state.open.entry(backend.pod.clone()).or_default() += 1;
                    Some(backend)
                }
            };
            // No usable endpoint: close at once (iptables would REJECT the SYN).
            let Some(backend) = chosen else { continue };
            let stop = stop.clone();
            let proxy = self.clone();
            let path = Path {
                faults: self.faults.clone(),
                from: self.zone.clone(),
                to: backend.zone.clone(),
            };
            tokio::spawn(async move {
                path.carry(client, backend.addr, &stop).await;
                if let Some(n) = proxy.lock().open.get_mut(&backend.pod) {
                    *n = n.saturating_sub(1);
                }
            });
        }
    }
}

/// The next connection `listener` accepts, or `None` once `stop` is cancelled (a failed
/// accept, out of descriptors say, is retried after 20 ms).
pub(crate) async fn next_connection(
    listener: &TcpListener,
    stop: &CancellationToken,
) -> Option<tokio::net::TcpStream> {
    loop {
        tokio::select! {
            () = stop.cancelled() => return None,
            accepted = listener.accept() => match accepted {
                Ok((client, _)) => return Some(client),
                Err(_) => tokio::time::sleep(std::time::Duration::from_millis(20)).await,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    /// A backend that answers every connection with its name and closes.
    async fn name_server(name: &'static str) -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            for _ in 0..1000 {
                let Ok((mut s, _)) = listener.accept().await else {
                    return;
                };
                let _ = s.write_all(name.as_bytes()).await;
            }
        });
        addr
    }

    async fn ask(proxy: SocketAddr) -> String {
        let mut s = TcpStream::connect(proxy).await.unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out).await;
        out
    }

    #[tokio::test]
    async fn picks_only_usable_backends_and_spreads_connections() {
        let stop = CancellationToken::new();
        let proxy = ZoneProxy::start("a", 42, ZoneFaults::default(), stop.clone())
            .await
            .unwrap();
        let (p1, p2, p3) = (
            name_server("p1").await,
            name_server("p2").await,
            name_server("p3").await,
        );
        proxy.set_backends(vec![
            Backend {
                pod: "p1".into(),
                addr: p1,
                zone: None,
            },
            Backend {
                pod: "p2".into(),
                addr: p2,
                zone: None,
            },
        ]);
        let mut seen = BTreeMap::<String, u64>::new();
        for _ in 0..200 {
            *seen.entry(ask(proxy.addr).await).or_default() += 1;
        }
        assert_eq!(seen.len(), 2, "p3 was not usable: {seen:?}");
        // Uniform choice: each of 2 backends gets 100 ± 4σ (σ ≈ 7).
        assert!(seen["p1"] > 70 && seen["p2"] > 70, "{seen:?}");
        assert_eq!(proxy.connection_counts(), seen);
        // Each of those connections was closed by its backend.
        for _ in 0..100 {
            if proxy.open_connections("p1") + proxy.open_connections("p2") == 0 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert_eq!(
            proxy.open_connections("p1") + proxy.open_connections("p2"),
            0
        );

        proxy.set_backends(vec![Backend {
            pod: "p3".into(),
            addr: p3,
            zone: None,
        }]);
        assert_eq!(ask(proxy.addr).await, "p3");
        proxy.set_backends(vec![]);
        assert_eq!(ask(proxy.addr).await, "", "no endpoints: closed at once");
        assert_eq!(proxy.rejected_connections(), 1);
        stop.cancel();
    }
}

//! The network between zones on loopback: the faults a `zoneNetwork` action sets (per link, an
//! unordered pair of zones), and the pump that carries a forwarded connection's bytes through
//! them. No root is needed: the faults act where the local target's cross-zone traffic flows,
//! in the kube-proxy forwarders, on real sockets.
//!
//! - A connection is set up after one round trip of the link's delay (SYN out, SYN-ACK back),
//!   plus the kernel's initial SYN retransmission timeout (1 s) when the SYN is lost.
//! - Each chunk read is written after the delay (± jitter, uniform), plus Linux's minimum
//!   retransmission timeout (200 ms) when it is lost; chunks keep their order, so a burst of
//!   several chunks is delayed once per chunk — bulk transfers slow more than with `tc netem`.
//! - A partition drops everything: a new connection is not opened (the caller's request times
//!   out as a dropped SYN would make it), established ones stall until it ends or the caller
//!   gives up. Nothing is refused.
//! - With no fault on any link, the pump is a plain copy: one atomic load per chunk.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use harness_core::scenario::model::{Link, ZoneFault, link};
use rand::Rng;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Linux's minimum retransmission timeout (`TCP_RTO_MIN`, 200 ms): what a lost segment costs.
pub const RTO_MIN: Duration = Duration::from_millis(200);
/// The initial SYN retransmission timeout (`TCP_TIMEOUT_INIT`, 1 s): what a lost SYN costs.
pub const SYN_RTO: Duration = Duration::from_secs(1);

/// The faults on the links between zones, shared by every forwarder.
#[derive(Debug, Clone)]
pub struct ZoneFaults {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    any: AtomicBool,
    links: RwLock<BTreeMap<Link, ZoneFault>>,
    /// Bumped on every change, so stalled connections look again.
    changed: watch::Sender<u64>,
}

impl Default for ZoneFaults {
    fn default() -> Self {
        ZoneFaults {
            inner: Arc::new(Inner {
                any: AtomicBool::new(false),
                links: RwLock::new(BTreeMap::new()),
                changed: watch::channel(0).0,
            }),
        }
    }
}

impl ZoneFaults {
    /// Makes `faults` the faults of every link (those not in it are cleared).
    pub fn replace(&self, faults: BTreeMap<Link, ZoneFault>) {
        let mut links = self.inner.links.write().unwrap_or_else(|e| e.into_inner());
        *links = faults;
        self.inner.any.store(!links.is_empty(), Ordering::Release);
        drop(links);
        self.inner.changed.send_modify(|n| *n += 1);
    }

    /// Sets `fault` on `link` (`Clear` removes it), the others kept (tests; a run replaces
    /// them all from the model).
    #[cfg(test)]
    pub fn set(&self, link: Link, fault: ZoneFault) {
        let mut faults = self
            .inner
            .links
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        match fault {
            ZoneFault::Clear => faults.remove(&link),
            fault => faults.insert(link, fault),
        };
        self.replace(faults);
    }

    /// The fault between zones `a` and `b` now (none within a zone).
    pub fn between(&self, a: &str, b: &str) -> Option<ZoneFault> {
        if !self.inner.any.load(Ordering::Acquire) || a == b {
            return None;
        }
        let links = self.inner.links.read().unwrap_or_else(|e| e.into_inner());
        links.get(&link(a, b)).copied()
    }

    /// Waits until the link between `a` and `b` is not partitioned (or `stop`); false on stop.
    async fn until_not_partitioned(&self, a: &str, b: &str, stop: &CancellationToken) -> bool {
        let mut changes = self.inner.changed.subscribe();
        loop {
            if self.between(a, b) != Some(ZoneFault::Partition) {
                return true;
            }
            tokio::select! {
                () = stop.cancelled() => return false,
                changed = changes.changed() => if changed.is_err() { return false },
            }
        }
    }
}

/// One end of a forwarded connection, the other's zone, and the faults between them.
#[derive(Debug, Clone)]
pub struct Path {
    pub faults: ZoneFaults,
    pub from: String,
    pub to: Option<String>,
}

impl Path {
    fn fault(&self) -> Option<ZoneFault> {
        self.faults.between(&self.from, self.to.as_deref()?)
    }

    /// Opens the connection to `backend` as the link lets it: after a round trip of delay
    /// (and a SYN retransmission when lost); during a partition, not before it ends. `None`
    /// when it cannot (the backend is gone, or the run stopped).
    pub async fn connect(
        &self,
        backend: SocketAddr,
        stop: &CancellationToken,
    ) -> Option<TcpStream> {
        if let Some(to) = &self.to
            && !self
                .faults
                .until_not_partitioned(&self.from, to, stop)
                .await
        {
            return None;
        }
        if let Some(fault @ ZoneFault::Degrade { .. }) = self.fault() {
            let setup = one_way_delay(fault) + one_way_delay(fault);
            let lost = if lost(fault) { SYN_RTO } else { Duration::ZERO };
            tokio::select! {
                () = stop.cancelled() => return None,
                () = tokio::time::sleep(setup + lost) => {}
            }
        }
        TcpStream::connect(backend).await.ok()
    }

    /// Carries `client`'s connection to `backend` through the path's faults, until either side
    /// closes or the run stops. The backend gone: the client sees its connection closed.
    pub async fn carry(&self, client: TcpStream, backend: SocketAddr, stop: &CancellationToken) {
        let _ = client.set_nodelay(true);
        let Some(upstream) = self.connect(backend, stop).await else {
            return;
        };
        let _ = upstream.set_nodelay(true);
        self.pump(client, upstream, stop).await;
    }

    /// Carries bytes both ways until either side closes or the run stops.
    pub async fn pump(&self, client: TcpStream, upstream: TcpStream, stop: &CancellationToken) {
        let (client_read, client_write) = client.into_split();
        let (upstream_read, upstream_write) = upstream.into_split();
        // Both ways to their ends (a half-closed side keeps the other flowing), or the stop.
        tokio::select! {
            () = stop.cancelled() => {}
            _ = async {
                tokio::join!(
                    self.one_way(client_read, upstream_write, stop),
                    self.one_way(upstream_read, client_write, stop),
                )
            } => {}
        }
    }

    async fn one_way(
        &self,
        mut from: tokio::net::tcp::OwnedReadHalf,
        mut to: tokio::net::tcp::OwnedWriteHalf,
        stop: &CancellationToken,
    ) {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            let n = match from.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            match self.fault() {
                None => {}
                Some(ZoneFault::Partition) => {
                    // `fault()` is only set with both zones known.
                    let to_zone = self.to.as_deref().unwrap_or_default();
                    if !self
                        .faults
                        .until_not_partitioned(&self.from, to_zone, stop)
                        .await
                    {
                        break;
                    }
                }
                Some(fault) => {
                    let lost = if lost(fault) { RTO_MIN } else { Duration::ZERO };
                    tokio::time::sleep(one_way_delay(fault) + lost).await;
                }
            }
            if to.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
        let _ = to.shutdown().await;
    }
}

/// One way's delay under `fault`: `delay` ± up to `jitter` (zero for other faults).
fn one_way_delay(fault: ZoneFault) -> Duration {
    match fault {
        ZoneFault::Degrade { delay, jitter, .. } if !jitter.is_zero() => {
            let spread = rand::rng().random_range(-1.0..=1.0) * jitter.as_secs_f64();
            Duration::from_secs_f64((delay.as_secs_f64() + spread).max(0.0))
        }
        ZoneFault::Degrade { delay, .. } => delay,
        _ => Duration::ZERO,
    }
}

/// Whether a packet under `fault` is lost.
fn lost(fault: ZoneFault) -> bool {
    match fault {
        ZoneFault::Degrade { loss_ppm, .. } if loss_ppm > 0 => {
            rand::rng().random_bool(fault.loss())
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_are_per_link_both_ways_and_clear() {
        let faults = ZoneFaults::default();
        assert_eq!(faults.between("a", "b"), None);
        faults.set(link("b", "a"), ZoneFault::Partition);
        assert_eq!(faults.between("a", "b"), Some(ZoneFault::Partition));
        assert_eq!(faults.between("b", "a"), Some(ZoneFault::Partition));
        assert_eq!(faults.between("a", "a"), None, "never within a zone");
        assert_eq!(faults.between("a", "c"), None);
        faults.set(link("a", "b"), ZoneFault::Clear);
        assert_eq!(faults.between("a", "b"), None);
        assert!(!faults.inner.any.load(Ordering::Acquire));
    }
}

#[cfg(test)]
pub(crate) mod socket_tests {
    //! The faults on real loopback sockets, through a kube-proxy forwarder of zone `a`.
    use std::time::Instant;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    use super::*;
    use crate::kube_proxy::{Backend, ZoneProxy};

    /// A backend that echoes every chunk.
    pub(crate) async fn echo_server() -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            for _ in 0..100 {
                let Ok((mut s, _)) = listener.accept().await else {
                    return;
                };
                tokio::spawn(async move {
                    let mut buf = [0u8; 1024];
                    for _ in 0..1000 {
                        match s.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => {
                                if s.write_all(&buf[..n]).await.is_err() {
                                    return;
                                }
                            }
                        }
                    }
                });
            }
        });
        addr
    }

    async fn proxy_to(zone: &str, faults: &ZoneFaults, stop: &CancellationToken) -> ZoneProxy {
        let proxy = ZoneProxy::start("a", 7, faults.clone(), stop.clone())
            .await
            .unwrap();
        proxy.set_backends(vec![Backend {
            pod: "pod-0".into(),
            addr: echo_server().await,
            zone: Some(zone.into()),
        }]);
        proxy
    }

    /// Sends `ping` and waits up to `within` for it to come back.
    pub(crate) async fn round_trip(s: &mut TcpStream, within: Duration) -> bool {
        s.write_all(b"ping").await.unwrap();
        let mut buf = [0u8; 4];
        matches!(
            tokio::time::timeout(within, s.read_exact(&mut buf)).await,
            Ok(Ok(_))
        )
    }

    #[tokio::test]
    async fn a_delay_between_zones_slows_each_way_and_the_setup() {
        let stop = CancellationToken::new();
        let faults = ZoneFaults::default();
        faults.set(
            link("a", "b"),
            ZoneFault::Degrade {
                delay: Duration::from_millis(40),
                jitter: Duration::ZERO,
                loss_ppm: 0,
            },
        );
        // Zone b is behind the slowed link: the connection's setup is a round trip (80 ms),
        // then the ping and the echo each wait 40 ms.
        let proxy = proxy_to("b", &faults, &stop).await;
        let started = Instant::now();
        let mut s = TcpStream::connect(proxy.addr).await.unwrap();
        assert!(round_trip(&mut s, Duration::from_secs(5)).await);
        assert!(
            started.elapsed() >= Duration::from_millis(160),
            "{:?}",
            started.elapsed()
        );
        // An established connection: the round trip alone.
        let again = Instant::now();
        assert!(round_trip(&mut s, Duration::from_secs(5)).await);
        assert!(
            again.elapsed() >= Duration::from_millis(80),
            "{:?}",
            again.elapsed()
        );
        // A partition of a → b leaves a backend in the caller's own zone answering.
        faults.set(link("a", "b"), ZoneFault::Partition);
        let local = proxy_to("a", &faults, &stop).await;
        let mut s = TcpStream::connect(local.addr).await.unwrap();
        assert!(round_trip(&mut s, Duration::from_secs(5)).await);
        stop.cancel();
    }

    #[tokio::test]
    async fn a_partition_stalls_new_and_established_connections_until_it_ends() {
        let stop = CancellationToken::new();
        let faults = ZoneFaults::default();
        let proxy = proxy_to("b", &faults, &stop).await;
        let mut established = TcpStream::connect(proxy.addr).await.unwrap();
        assert!(round_trip(&mut established, Duration::from_secs(5)).await);

        faults.set(link("a", "b"), ZoneFault::Partition);
        // Nothing is refused: the caller's connection to the forwarder is accepted, and no
        // answer comes — the caller times out, as with dropped SYNs.
        let mut fresh = TcpStream::connect(proxy.addr).await.unwrap();
        assert!(!round_trip(&mut fresh, Duration::from_millis(300)).await);
        assert!(!round_trip(&mut established, Duration::from_millis(300)).await);

        faults.set(link("a", "b"), ZoneFault::Clear);
        // What waited goes through once the link is back: each ping comes back.
        let mut buf = [0u8; 4];
        for s in [&mut fresh, &mut established] {
            let got = tokio::time::timeout(Duration::from_secs(5), s.read_exact(&mut buf)).await;
            assert!(matches!(got, Ok(Ok(_))), "{got:?}");
            assert_eq!(&buf, b"ping");
        }
        stop.cancel();
    }
}

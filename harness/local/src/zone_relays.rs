//! The network between zones on the hops the local target does not forward itself: the
//! generators' connections to the load balancer, the load balancer's to the pods and the
//! ingress replicas' to the pods (`harness_core::scenario::model::hops` says in which zone
//! each runs). Each hop that crosses zones gets a relay on loopback that carries its
//! connections through the link's faults ([`crate::zone_faults::Path`], as the kube-proxy
//! forwarders do); a hop within a zone is left direct.
//!
//! The load balancer and the ingress replicas learn the pods' addresses from the Service's
//! endpoint feed; [`ZoneRelays::follow`] gives each of them a feed seen from its zone, in
//! which a pod of another zone is at its relay. Relays are made only when the scenario has a
//! `zoneNetwork` action (without one, nothing changes on these paths), once per (zone, address)
//! as pods first appear, and live until the run stops: a lagging load balancer may still send
//! to a pod that left the endpoints.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use workload_contract::loadbalancer::{Endpoint, EndpointSet};

use crate::LocalError;
use crate::cluster_state::SharedState;
use crate::kube_proxy::next_connection;
use crate::zone_faults::{Path, ZoneFaults};

/// A hop: the caller's zone, the target's zone, the target's address.
type Hop = (String, String, SocketAddr);

/// The relays of a run, shared by everything that reaches across zones on loopback.
#[derive(Debug, Clone)]
pub struct ZoneRelays {
    faults: ZoneFaults,
    stop: CancellationToken,
    /// Hop → the relay's address.
    relays: Arc<Mutex<BTreeMap<Hop, SocketAddr>>>,
}

impl ZoneRelays {
    /// Relays through `faults` that stop with `stop`.
    pub fn new(faults: ZoneFaults, stop: CancellationToken) -> Self {
        ZoneRelays {
            faults,
            stop,
            relays: Arc::default(),
        }
    }

    /// The faults the relays carry connections through.
    pub fn faults(&self) -> &ZoneFaults {
        &self.faults
    }

    /// Where a caller in zone `from` connects to reach `addr` in zone `to`: `addr` itself
    /// within a zone, else the relay for that pair (started on first use).
    pub fn reach(&self, from: &str, to: &str, addr: SocketAddr) -> Result<SocketAddr, LocalError> {
        if from == to {
            return Ok(addr);
        }
        let key = (from.to_owned(), to.to_owned(), addr);
        let mut relays = self.relays.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(relay) = relays.get(&key) {
            return Ok(*relay);
        }
        let relay = self.start(from, to, addr)?;
        relays.insert(key, relay);
        Ok(relay)
    }

    /// How many relays have been started (tests).
    #[cfg(test)]
    fn count(&self) -> usize {
        self.relays.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// `set` as a caller in zone `from` sees it: each pod of another zone (`zone_of`) at its
    /// relay. A pod whose zone is unknown, or whose relay cannot be bound, stays at its own
    /// address (the error is returned with the set, for the caller to note).
    pub fn view(
        &self,
        from: &str,
        set: &EndpointSet,
        zone_of: impl Fn(&str) -> Option<String>,
    ) -> (EndpointSet, Vec<LocalError>) {
        let mut errors = Vec::new();
        let endpoints = set
            .endpoints
            .iter()
            .map(|e| {
                let addr = match zone_of(&e.pod) {
                    Some(to) => self.reach(from, &to, e.addr).unwrap_or_else(|err| {
                        errors.push(err);
                        e.addr
                    }),
                    None => e.addr,
                };
                Endpoint {
                    pod: e.pod.clone(),
                    addr,
                }
            })
            .collect();
        (EndpointSet { endpoints }, errors)
    }

    /// The run's endpoint feed as seen from zone `from` (its current value already mapped),
    /// kept up to date until the run stops. Pods' zones come from the model; a relay that
    /// cannot be bound is recorded as a note and the pod kept at its own address.
    pub fn follow(&self, from: &str, shared: &SharedState) -> watch::Receiver<EndpointSet> {
        let mut source = shared.lock().endpoints.subscribe();
        let map = {
            let (relays, shared, from) = (self.clone(), shared.clone(), from.to_owned());
            move |set: &EndpointSet| {
                let zones: BTreeMap<String, String> = {
                    let s = shared.lock();
                    set.endpoints
                        .iter()
                        .filter_map(|e| {
                            let pod = s.model.endpoints().pod(&e.pod)?;
                            Some((e.pod.clone(), pod.zone.clone()))
                        })
                        .collect()
                };
                let (view, errors) = relays.view(&from, set, |pod| zones.get(pod).cloned());
                if !errors.is_empty() {
                    let notes = errors
                        .into_iter()
                        .map(|e| harness_core::measure::EventKind::Note {
                            message: format!("zone relay from {from}: {e}"),
                        })
                        .collect();
                    shared.lock().record(notes);
                }
                view
            }
        };
        // Cloned first: the feed's read guard must not be held while `map` takes the shared
        // lock (a publisher holds that lock while it writes the feed).
        let current = source.borrow_and_update().clone();
        let first = map(&current);
        let (tx, rx) = watch::channel(first);
        let stop = self.stop.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    changed = source.changed() => if changed.is_err() { return },
                }
                let set = source.borrow_and_update().clone();
                if tx.send(map(&set)).is_err() {
                    return;
                }
            }
        });
        rx
    }

    /// Binds a relay for `from` → `addr` (in `to`) and serves it until the run stops.
    fn start(&self, from: &str, to: &str, addr: SocketAddr) -> Result<SocketAddr, LocalError> {
        let io = |context: String| move |source| LocalError::Io { context, source };
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.set_nonblocking(true).map(|()| l))
            .map_err(io(format!(
                "binding the relay from zone {from} to {addr} in {to}"
            )))?;
        let relay = std_listener
            .local_addr()
            .map_err(io("reading a relay's address".into()))?;
        let listener = TcpListener::from_std(std_listener)
            .map_err(io("registering a relay with the runtime".into()))?;
        let path = Path {
            faults: self.faults.clone(),
            from: from.to_owned(),
            to: Some(to.to_owned()),
        };
        tokio::spawn(serve(listener, addr, path, self.stop.clone()));
        Ok(relay)
    }
}

/// Accepts until `stop`, carrying each connection to `target` along `path`.
async fn serve(listener: TcpListener, target: SocketAddr, path: Path, stop: CancellationToken) {
    while let Some(client) = next_connection(&listener, &stop).await {
        let (path, stop) = (path.clone(), stop.clone());
        tokio::spawn(async move { path.carry(client, target, &stop).await });
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::time::{Duration, Instant};

    use harness_core::scenario::model::{ZoneFault, link};
    use proptest::prelude::*;
    use tokio::net::TcpStream;

    use super::*;
    use crate::zone_faults::socket_tests::{echo_server, round_trip};

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Seen from any zone, a pod of another zone is at a relay of its own (the same one
        /// every time it is asked), a pod of the caller's zone or of no known zone is at its
        /// own address, and the pods and their order are the feed's.
        #[test]
        fn a_view_moves_exactly_the_other_zones_pods_to_relays(
            pods in proptest::collection::vec((0u8..4, 1u16..60_000), 0..12),
            from in 0u8..3,
        ) {
            let rt = runtime();
            let _guard = rt.enter();
            let relays = ZoneRelays::new(ZoneFaults::default(), CancellationToken::new());
            let set = EndpointSet {
                endpoints: pods
                    .iter()
                    .enumerate()
                    .map(|(i, (_, port))| Endpoint {
                        pod: format!("pod-{i}"),
                        addr: SocketAddr::from(([127, 0, 0, 2], *port)),
                    })
                    .collect(),
            };
            // Zone 3 stands for a pod the model no longer knows.
            let zone_of = |pod: &str| {
                let i: usize = pod.trim_start_matches("pod-").parse().unwrap();
                (pods[i].0 < 3).then(|| format!("z{}", pods[i].0))
            };
            let from = format!("z{from}");
            let (view, errors) = relays.view(&from, &set, zone_of);
            prop_assert!(errors.is_empty());
            let (again, _) = relays.view(&from, &set, zone_of);
            prop_assert_eq!(&view, &again);
            prop_assert_eq!(view.endpoints.len(), set.endpoints.len());
            let mut relayed = BTreeSet::new();
            for (seen, fed) in view.endpoints.iter().zip(&set.endpoints) {
                prop_assert_eq!(&seen.pod, &fed.pod);
                match zone_of(&fed.pod) {
                    Some(zone) if zone != from => {
                        prop_assert!(seen.addr != fed.addr && seen.addr.ip().is_loopback());
                        relayed.insert(seen.addr);
                    }
                    _ => prop_assert_eq!(seen.addr, fed.addr),
                }
            }
            // One relay per (zone, address): pods sharing a port share nothing here, as the
            // address differs only by the port.
            let distinct: BTreeSet<_> = view
                .endpoints
                .iter()
                .filter(|e| zone_of(&e.pod).is_some_and(|z| z != from))
                .map(|e| {
                    let fed = set.endpoints.iter().find(|f| f.pod == e.pod).unwrap();
                    (zone_of(&e.pod), fed.addr)
                })
                .collect();
            prop_assert_eq!(relayed.len(), distinct.len());
            prop_assert_eq!(relays.count(), distinct.len());
        }
    }

    #[tokio::test]
    async fn a_relay_carries_the_links_delay_and_stalls_through_a_partition() {
        let stop = CancellationToken::new();
        let relays = ZoneRelays::new(ZoneFaults::default(), stop.clone());
        let pod = echo_server().await;
        // Within a zone: the pod's own address, never a relay.
        assert_eq!(relays.reach("a", "a", pod).unwrap(), pod);
        let relay = relays.reach("a", "b", pod).unwrap();
        assert_ne!(relay, pod);
        assert_eq!(
            relays.reach("a", "b", pod).unwrap(),
            relay,
            "one relay per pair"
        );

        // No fault: bytes pass unchanged.
        let mut s = TcpStream::connect(relay).await.unwrap();
        assert!(round_trip(&mut s, Duration::from_secs(5)).await);

        // 40 ms each way: a round trip on the open connection takes at least 80 ms.
        relays.faults().set(
            link("a", "b"),
            ZoneFault::Degrade {
                delay: Duration::from_millis(40),
                jitter: Duration::ZERO,
                loss_ppm: 0,
            },
        );
        let started = Instant::now();
        assert!(round_trip(&mut s, Duration::from_secs(5)).await);
        assert!(
            started.elapsed() >= Duration::from_millis(80),
            "{:?}",
            started.elapsed()
        );

        // A fault on another link does not touch this one.
        relays.faults().set(link("a", "b"), ZoneFault::Clear);
        relays.faults().set(link("a", "c"), ZoneFault::Partition);
        assert!(round_trip(&mut s, Duration::from_secs(5)).await);

        // Partitioned: nothing comes back, on the open connection or a new one, until it ends.
        relays.faults().set(link("b", "a"), ZoneFault::Partition);
        let mut fresh = TcpStream::connect(relay).await.unwrap();
        assert!(!round_trip(&mut s, Duration::from_millis(300)).await);
        assert!(!round_trip(&mut fresh, Duration::from_millis(300)).await);
        relays.faults().set(link("a", "b"), ZoneFault::Clear);
        let mut buf = [0u8; 4];
        for s in [&mut s, &mut fresh] {
            let got = tokio::time::timeout(
                Duration::from_secs(5),
                tokio::io::AsyncReadExt::read_exact(s, &mut buf),
            )
            .await;
            assert!(matches!(got, Ok(Ok(_))), "{got:?}");
        }
        stop.cancel();
    }
}

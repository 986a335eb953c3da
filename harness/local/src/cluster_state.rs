//! State shared by the local target's tasks (engine calls, probers, sampler): the modelled
//! cluster, the timeline of what happened, where each running pod listens, the per-zone
//! forwarders, which are re-pointed every time the model's reachability changes, and the
//! Service's ready endpoints as the load balancer is fed them.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use harness_core::control_plane::cluster::ClusterModel;
use harness_core::measure::{EventKind, TerminationStage};
use tokio::sync::watch;
use tokio::time::Instant;
use workload_contract::loadbalancer::{Endpoint, EndpointSet};
use workload_contract::sidecar::SidecarMetrics;

use crate::kube_proxy::{Backend, ZoneProxy};
use crate::zone_faults::ZoneFaults;

/// Everything the tasks share, behind one lock (changes are rare; no lock is held across I/O).
pub struct Shared {
    pub model: ClusterModel,
    pub events: Vec<(Instant, EventKind)>,
    /// Running pod → the address its endpoint points at (sidecar, or flagsvc without one).
    pub pod_addrs: BTreeMap<String, SocketAddr>,
    /// Every pod's address ever, kept after deletion: a lagging load balancer may still send
    /// there.
    pub known_addrs: BTreeMap<String, SocketAddr>,
    pub proxies: BTreeMap<String, ZoneProxy>,
    /// The network between zones, shared with every forwarder.
    pub zone_faults: ZoneFaults,
    /// The ready endpoints with their addresses, published on every change (the load
    /// balancer's feed).
    pub endpoints: watch::Sender<EndpointSet>,
    /// Pods whose processes exited during the run: when, and their sidecar's final counters
    /// (`None`: no sidecar, or it wrote none, e.g. killed at the end of its grace period).
    pub exits: BTreeMap<String, (Instant, Option<SidecarMetrics>)>,
}

/// Cloneable handle to [`Shared`].
#[derive(Clone)]
pub struct SharedState(Arc<Mutex<Shared>>);

impl SharedState {
    pub fn new(model: ClusterModel) -> Self {
        SharedState(Arc::new(Mutex::new(Shared {
            model,
            events: Vec::new(),
            pod_addrs: BTreeMap::new(),
            known_addrs: BTreeMap::new(),
            proxies: BTreeMap::new(),
            zone_faults: ZoneFaults::default(),
            endpoints: watch::Sender::new(EndpointSet::default()),
            exits: BTreeMap::new(),
        })))
    }

    pub fn lock(&self) -> MutexGuard<'_, Shared> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Shared {
    /// Records events now and brings the forwarders in line with the model. A pod that
    /// leaves the ready endpoints also gets the count of connections the forwarders still
    /// hold to it (they keep it as their backend).
    pub fn record(&mut self, events: Vec<EventKind>) {
        let now = Instant::now();
        let reachability_changed = events
            .iter()
            .any(|e| matches!(e, EventKind::Reachability { .. }));
        let connections: Vec<EventKind> = events
            .iter()
            .filter_map(|e| match e {
                EventKind::Endpoint { pod, ready: false }
                | EventKind::Termination {
                    pod,
                    stage: TerminationStage::Deleted,
                } => Some(EventKind::Connections {
                    pod: pod.clone(),
                    open: self.proxies.values().map(|p| p.open_connections(pod)).sum(),
                }),
                _ => None,
            })
            .collect();
        self.events.extend(events.into_iter().map(|e| (now, e)));
        self.events
            .extend(connections.into_iter().map(|e| (now, e)));
        if reachability_changed {
            self.sync_proxies();
        }
        self.publish_endpoints();
    }

    /// Publishes the ready, not terminating pods with an address, if that set changed. With
    /// the load balancer's readiness gate, the pods whose containers are ready: the
    /// controller registers those while the gate still holds their `Ready` back.
    pub fn publish_endpoints(&self) {
        let pods: Vec<String> = self.model.gate_feed().unwrap_or_else(|| {
            self.model
                .endpoints()
                .pods()
                .filter(|p| p.ready && !p.terminating)
                .map(|p| p.name.clone())
                .collect()
        });
        let endpoints = pods
            .into_iter()
            .filter_map(|pod| {
                self.known_addrs
                    .get(&pod)
                    .map(|addr| Endpoint { pod, addr: *addr })
            })
            .collect();
        let set = EndpointSet { endpoints };
        self.endpoints.send_if_modified(|current| {
            let changed = *current != set;
            if changed {
                *current = set;
            }
            changed
        });
    }

    /// Points each zone's forwarder at the running pods its kube-proxy would use.
    pub fn sync_proxies(&self) {
        for (zone, proxy) in &self.proxies {
            let backends = self
                .model
                .endpoints()
                .reachable_from(zone)
                .iter()
                .filter_map(|pod| {
                    self.pod_addrs.get(pod).map(|addr| Backend {
                        pod: pod.clone(),
                        addr: *addr,
                        zone: self.model.endpoints().pod(pod).map(|p| p.zone.clone()),
                    })
                })
                .collect();
            proxy.set_backends(backends);
        }
    }
}

//! One Service's endpoints as the control plane keeps them over a run: pods and nodes come and
//! go, the EndpointSlice controller reconciles (hints and their events, via `kube_model`), and
//! kube-proxy in each zone derives which pods new connections may go to. Every observable
//! change comes back as timeline events.
//!
//! When the controller reconciles follows kubernetes/kubernetes v1.34.0
//! `pkg/controller/endpointslice/endpointslice_controller.go`: a pod change (created, deleted,
//! readiness flip) requeues the Service; a node add/delete, readiness flip or zone-label
//! change updates the topology cache (`checkNodeTopologyDistribution`) and requeues the
//! Service only when its recorded hints are overloaded under the new ratios
//! (`GetOverloadedServices`). A Service whose hints were removed is therefore not requeued by
//! node changes: its hints come back at the next pod change.

use std::collections::BTreeMap;

use super::routing::RoutingTracker;
use crate::measure::EventKind;
use kube_model::reconcile::{ControllerOptions, ServiceTopology, reconcile_slice_hints};
use kube_model::{AddressType, Endpoint, EndpointSlice, Node, SliceInfo, TopologyCache};

/// A pod as the endpoint controller sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodRecord {
    pub name: String,
    pub node: String,
    pub zone: String,
    /// Ready condition (readiness probe passing, not terminating).
    pub ready: bool,
    /// Being deleted: out of the ready endpoints from the start of termination.
    pub terminating: bool,
}

/// The Service's endpoints, hints and per-zone reachability.
#[derive(Debug, Clone)]
pub struct ServiceEndpoints {
    service_key: String,
    topology: ServiceTopology,
    options: ControllerOptions,
    cache: TopologyCache,
    nodes: BTreeMap<String, Node>,
    pods: BTreeMap<String, PodRecord>,
    /// Hints after the last reconcile and what kube-proxy in each zone makes of them.
    routing: RoutingTracker,
    zones: Vec<String>,
}

impl ServiceEndpoints {
    /// Starts the controller with the cluster's nodes (the informer's initial list).
    pub fn new(
        service: &str,
        topology: ServiceTopology,
        nodes: Vec<Node>,
        zones: Vec<String>,
    ) -> Self {
        let mut cache = TopologyCache::new();
        cache.set_nodes(&nodes);
        Self {
            service_key: format!("default/{service}"),
            topology,
            options: ControllerOptions::default(),
            cache,
            nodes: nodes.into_iter().map(|n| (n.name.clone(), n)).collect(),
            pods: BTreeMap::new(),
            routing: RoutingTracker::new(zones.clone()),
            zones,
        }
    }

    pub fn nodes(&self) -> impl Iterator<Item = &Node> {
        self.nodes.values()
    }

    pub fn node(&self, name: &str) -> Option<&Node> {
        self.nodes.get(name)
    }

    pub fn pods(&self) -> impl Iterator<Item = &PodRecord> {
        self.pods.values()
    }

    pub fn pod(&self, name: &str) -> Option<&PodRecord> {
        self.pods.get(name)
    }

    pub fn hints_enabled(&self) -> bool {
        self.routing.hints_enabled()
    }

    /// Pod → forZones currently on the slice.
    pub fn hints(&self) -> &BTreeMap<String, Vec<String>> {
        self.routing.hints()
    }

    /// Pods kube-proxy in `zone` sends new connections to.
    pub fn reachable_from(&self, zone: &str) -> &[String] {
        self.routing.reachable_from(zone)
    }

    /// Zone CPU ratios the controller currently uses (None: no usable node information).
    pub fn zone_cpu_ratios(&self) -> Option<&BTreeMap<String, f64>> {
        self.cache.cpu_ratios()
    }

    /// A pod was created (or changed readiness / started terminating): reconcile.
    pub fn upsert_pod(&mut self, pod: PodRecord) -> Vec<EventKind> {
        if self.pods.get(&pod.name) == Some(&pod) {
            return Vec::new();
        }
        self.pods.insert(pod.name.clone(), pod);
        self.reconcile()
    }

    /// Sets a pod's readiness; reconciles only if it changed.
    pub fn set_pod_ready(&mut self, name: &str, ready: bool) -> Vec<EventKind> {
        match self.pods.get(name) {
            Some(p) if p.ready != ready => {
                let mut pod = p.clone();
                pod.ready = ready;
                self.upsert_pod(pod)
            }
            _ => Vec::new(),
        }
    }

    /// A pod is gone (deleted): reconcile.
    pub fn remove_pod(&mut self, name: &str) -> Vec<EventKind> {
        if self.pods.remove(name).is_none() {
            return Vec::new();
        }
        self.reconcile()
    }

    /// A node was added or changed (readiness, zone label, allocatable CPU).
    pub fn upsert_node(&mut self, node: Node) -> Vec<EventKind> {
        self.nodes.insert(node.name.clone(), node);
        self.node_changed()
    }

    /// A node's zone label changed. Its pods' endpoints take the new zone at the next
    /// reconcile (the controller reads the zone from the node then); the label change itself
    /// only updates the topology cache.
    pub fn relabel_node(&mut self, name: &str, zone: &str) -> Vec<EventKind> {
        let Some(mut node) = self.nodes.get(name).cloned() else {
            return Vec::new();
        };
        node.zone = Some(zone.to_owned());
        for pod in self.pods.values_mut().filter(|p| p.node == name) {
            pod.zone = zone.to_owned();
        }
        if !self.zones.iter().any(|z| z == zone) {
            self.zones.push(zone.to_owned());
            self.routing.add_zone(zone);
        }
        self.upsert_node(node)
    }

    /// A node was deleted.
    pub fn remove_node(&mut self, name: &str) -> Vec<EventKind> {
        self.nodes.remove(name);
        self.node_changed()
    }

    fn node_changed(&mut self) -> Vec<EventKind> {
        let nodes: Vec<Node> = self.nodes.values().cloned().collect();
        let mut events = Vec::new();
        if self.cache.set_nodes(&nodes)
            && self.cache.overloaded_services().contains(&self.service_key)
        {
            events.extend(self.reconcile());
        } else {
            // No reconcile, but kube-proxy on a relabelled or new node sees a new zone view.
            events.extend(self.update_reachability());
        }
        events
    }

    /// Runs the EndpointSlice controller's hint step over the current pods and records what
    /// changed: Kubernetes events, hints, reachability.
    pub fn reconcile(&mut self) -> Vec<EventKind> {
        let endpoints = self.endpoint_list();
        let slice = EndpointSlice::new("flagsvc-1", endpoints);
        let mut si = SliceInfo::existing(&self.service_key, AddressType::IPv4, vec![slice]);
        let k8s_events =
            reconcile_slice_hints(&mut self.cache, &self.topology, &mut si, self.options);
        let mut out: Vec<EventKind> = k8s_events
            .into_iter()
            .map(|e| EventKind::KubeEvent {
                kind: e.event_type,
                reason: e.reason,
                message: e.message,
                object: format!(
                    "service/{}",
                    self.service_key.trim_start_matches("default/")
                ),
            })
            .collect();
        out.extend(
            self.routing
                .update_hints(si.all_slices().flat_map(|sl| &sl.endpoints)),
        );
        out.extend(self.update_reachability());
        out
    }

    /// The slice's endpoints as the pods and the last hints make them (address = pod name).
    fn endpoint_list(&self) -> Vec<Endpoint> {
        self.pods
            .values()
            .map(|p| {
                let mut e = Endpoint::new(&p.name, Some(&p.zone), p.ready && !p.terminating)
                    .on_node(&p.node);
                e.conditions.serving = Some(p.ready);
                e.conditions.terminating = Some(p.terminating);
                e.with_hints(
                    self.routing
                        .hints()
                        .get(&p.name)
                        .map(|z| kube_model::Hints {
                            for_zones: z.clone(),
                            for_nodes: Vec::new(),
                        }),
                )
            })
            .collect()
    }

    /// Recomputes, for each zone, the pods kube-proxy on a node there would use.
    fn update_reachability(&mut self) -> Vec<EventKind> {
        let endpoints = self.endpoint_list();
        self.routing.update_reachability(&endpoints)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, zone: &str, cpu: u64) -> Node {
        Node::worker(name, zone, cpu)
    }

    fn pod(name: &str, node: &str, zone: &str) -> PodRecord {
        PodRecord {
            name: name.into(),
            node: node.into(),
            zone: zone.into(),
            ready: true,
            terminating: false,
        }
    }

    /// The incident: 4 pods in zone c, nodes 4+4 CPU in a and c.
    fn incident() -> ServiceEndpoints {
        let mut svc = ServiceEndpoints::new(
            "flagsvc",
            ServiceTopology::topology_auto(),
            vec![node("a-1", "a", 4000), node("c-1", "c", 4000)],
            vec!["a".into(), "c".into()],
        );
        for i in 1..=4 {
            svc.upsert_pod(pod(&format!("pod-{i}"), "c-1", "c"));
        }
        svc
    }

    fn reasons(events: &[EventKind]) -> Vec<String> {
        events
            .iter()
            .filter_map(|e| match e {
                EventKind::KubeEvent {
                    reason, message, ..
                } => Some(format!("{reason}: {message}")),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn even_cpu_gives_zone_a_clients_only_two_of_four_pods() {
        let svc = incident();
        assert!(svc.hints_enabled());
        assert_eq!(svc.reachable_from("a").len(), 2);
        assert_eq!(svc.reachable_from("c").len(), 2);
        let for_a = svc
            .hints()
            .values()
            .filter(|z| z == &&vec!["a".to_string()])
            .count();
        assert_eq!(for_a, 2);
    }

    #[test]
    fn node_change_past_the_band_disables_then_a_pod_change_re_enables() {
        let mut svc = incident();
        // a: 4 + 4 = 8 CPU vs c: 4 → 0.667 / 0.333: minimums 3 + 2 > 4 endpoints.
        let events = svc.upsert_node(node("a-2", "a", 4000));
        assert_eq!(
            reasons(&events),
            vec!["TopologyAwareHintsDisabled: Unable to allocate minimum required endpoints to each zone without exceeding overload threshold (4 endpoints, 2 zones), addressType: IPv4".to_string()]
        );
        assert!(!svc.hints_enabled());
        assert_eq!(
            svc.reachable_from("a").len(),
            4,
            "no hints: every pod from everywhere"
        );

        // Back to 0.5 / 0.5: the Service has no recorded hints, so it is not requeued.
        let events = svc.remove_node("a-2");
        assert!(reasons(&events).is_empty(), "{events:?}");
        assert!(!svc.hints_enabled());

        // Pod changes reconcile: with 3 ready endpoints each zone needs ceil(1.5 / 1.2) = 2,
        // 4 > 3, still off; back at 4 endpoints hints return.
        let events = svc.set_pod_ready("pod-1", false);
        assert!(!svc.hints_enabled(), "{events:?}");
        let events = svc.set_pod_ready("pod-1", true);
        assert!(svc.hints_enabled());
        assert!(
            reasons(&events)[0].starts_with("TopologyAwareHintsEnabled"),
            "{events:?}"
        );
    }

    #[test]
    fn a_new_ready_count_is_recorded_even_when_the_reachable_pods_stay() {
        let mut svc = incident();
        for i in 5..=6 {
            svc.upsert_pod(pod(&format!("pod-{i}"), "c-1", "c"));
        }
        // 6 endpoints at 0.5 / 0.5: 3 hinted for each zone.
        let for_a = svc.reachable_from("a").to_vec();
        assert_eq!(for_a.len(), 3);
        // A seventh keeps zone a's three (it goes to c), yet zone a's count must follow.
        svc.upsert_pod(PodRecord {
            ready: false,
            ..pod("pod-7", "c-1", "c")
        });
        let events = svc.set_pod_ready("pod-7", true);
        assert_eq!(svc.reachable_from("a"), for_a.as_slice());
        let counts: Vec<usize> = events
            .iter()
            .filter_map(|e| match e {
                EventKind::Reachability { ready_pods, .. } => Some(*ready_pods),
                _ => None,
            })
            .collect();
        assert_eq!(
            counts,
            vec![7, 7],
            "one per zone, with the new count: {events:?}"
        );
    }

    #[test]
    fn cpu_change_alone_does_not_recompute() {
        let mut svc = incident();
        let events = svc.upsert_node(node("a-1", "a", 12000));
        assert!(events.is_empty(), "{events:?}");
        assert!(svc.hints_enabled());
        assert_eq!(svc.zone_cpu_ratios().unwrap()["a"], 0.5);
    }

    #[test]
    fn routing_off_reaches_every_ready_pod() {
        let mut svc = ServiceEndpoints::new(
            "flagsvc",
            ServiceTopology::default(),
            vec![node("a-1", "a", 4000), node("c-1", "c", 4000)],
            vec!["a".into(), "c".into()],
        );
        for i in 1..=3 {
            svc.upsert_pod(pod(&format!("pod-{i}"), "c-1", "c"));
        }
        svc.set_pod_ready("pod-2", false);
        assert_eq!(
            svc.reachable_from("a"),
            ["pod-1".to_string(), "pod-3".to_string()]
        );
        assert!(!svc.hints_enabled());
    }
}

//! The in-cluster endpoint feed (`--watch-service`): a kube-runtime watcher on the namespace's
//! EndpointSlices labelled `kubernetes.io/service-name=NAME` keeps the full set of slices and,
//! after each event, turns them into the workload contract's [`EndpointSet`] — the same channel
//! `PUT /endpoints` feeds, so the controller's registration and deregistration lags apply
//! exactly as they do to PUTs.
//!
//! Which endpoints count ([`endpoint_set`]): the ones with `conditions.ready` true or unset
//! (the EndpointSlice API, discovery.k8s.io/v1 `EndpointConditions.ready`: "a nil value should
//! be interpreted as true"), one per pod (`targetRef.name`), at `addresses[0]:--target-port`.
//! With a readiness gate, also not-ready, non-terminating endpoints whose pod lists the gate
//! and is `ContainersReady` (see [`crate::readiness_gate`] for the upstream code this follows;
//! note the AWS Load Balancer Controller itself takes an unset `ready` as not ready).
//!
//! A dropped watch is resumed by the watcher and its default backoff; a re-list (`Init`,
//! `InitApply`…, `InitDone`) is buffered and replaces the slices only when complete, and the
//! set is only sent when it differs, so an unchanged re-list registers or deregisters nothing.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};

use futures::StreamExt;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Api, Client, ResourceExt};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use workload_contract::loadbalancer::{Endpoint, EndpointSet};

use crate::readiness_gate::PodIndex;

/// The label EndpointSlices name their Service with (discovery.k8s.io/v1 `LabelServiceName`).
pub const LABEL_SERVICE_NAME: &str = "kubernetes.io/service-name";

/// What `--watch-service` and its companion flags ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchSpec {
    pub service: String,
    pub namespace: String,
    /// The pod port targets are sent to.
    pub target_port: u16,
    /// The pod condition type of the readiness gate, if any.
    pub readiness_gate: Option<String>,
}

impl WatchSpec {
    /// The label selector of the Service's EndpointSlices.
    pub fn slice_selector(&self) -> String {
        format!("{LABEL_SERVICE_NAME}={}", self.service)
    }

    /// `namespace/service`, for messages.
    pub fn describe(&self) -> String {
        format!("{}/{}", self.namespace, self.service)
    }
}

/// The endpoints the target group should have, from every slice of the Service. `gated`: the
/// pods known to the readiness gate (`None` without one).
pub fn endpoint_set(
    slices: &BTreeMap<String, EndpointSlice>,
    target_port: u16,
    gated: Option<&PodIndex>,
) -> EndpointSet {
    let mut by_pod: BTreeMap<String, SocketAddr> = BTreeMap::new();
    for slice in slices.values() {
        for ep in slice.endpoints.iter().flatten() {
            let Some(target) = &ep.target_ref else {
                continue;
            };
            if target.kind.as_deref().is_some_and(|k| k != "Pod") {
                continue;
            }
            let (Some(pod), Some(address)) = (&target.name, ep.addresses.first()) else {
                continue;
            };
            let conditions = ep.conditions.as_ref();
            let ready = conditions.and_then(|c| c.ready).unwrap_or(true);
            let terminating = conditions.and_then(|c| c.terminating).unwrap_or(false);
            let take = ready
                || (!terminating
                    && gated
                        .and_then(|pods| pods.get(pod))
                        .is_some_and(|p| p.has_gate && p.containers_ready));
            if !take {
                continue;
            }
            match address.parse::<IpAddr>() {
                Ok(ip) => {
                    by_pod
                        .entry(pod.clone())
                        .or_insert(SocketAddr::new(ip, target_port));
                }
                Err(_) => tracing::warn!(
                    "EndpointSlice {}: endpoint of pod {pod} has address {address:?}, not an IP; skipped",
                    slice.name_any()
                ),
            }
        }
    }
    EndpointSet {
        endpoints: by_pod
            .into_iter()
            .map(|(pod, addr)| Endpoint { pod, addr })
            .collect(),
    }
}

/// The Service's slices as the watch has seen them.
#[derive(Debug, Default)]
pub struct SliceCache {
    slices: BTreeMap<String, EndpointSlice>,
    /// A re-list under way: the slices listed so far.
    relist: Option<BTreeMap<String, EndpointSlice>>,
}

impl SliceCache {
    /// Applies one watcher event; `true` when the slices may have changed.
    pub fn apply(&mut self, event: Event<EndpointSlice>) -> bool {
        match event {
            Event::Apply(slice) => {
                self.slices.insert(slice.name_any(), slice);
                true
            }
            Event::Delete(slice) => self.slices.remove(&slice.name_any()).is_some(),
            Event::Init => {
                self.relist = Some(BTreeMap::new());
                false
            }
            Event::InitApply(slice) => {
                self.relist
                    .get_or_insert_with(BTreeMap::new)
                    .insert(slice.name_any(), slice);
                false
            }
            Event::InitDone => {
                self.slices = self.relist.take().unwrap_or_default();
                true
            }
        }
    }

    pub fn slices(&self) -> &BTreeMap<String, EndpointSlice> {
        &self.slices
    }
}

/// Waits for a change of the pod index; `false` once it can no longer change.
async fn pods_changed(pods: &mut Option<watch::Receiver<PodIndex>>) -> bool {
    match pods {
        Some(rx) => rx.changed().await.is_ok(),
        None => std::future::pending().await,
    }
}

/// Watches the Service's EndpointSlices (and, with a readiness gate, follows `pods`) and sends
/// the endpoint set to `feed` whenever it changes, until `stop`.
pub async fn run(
    client: Client,
    spec: WatchSpec,
    feed: watch::Sender<EndpointSet>,
    mut pods: Option<watch::Receiver<PodIndex>>,
    stop: CancellationToken,
) {
    let api: Api<EndpointSlice> = Api::namespaced(client, &spec.namespace);
    let config = watcher::Config::default().labels(&spec.slice_selector());
    let mut stream = watcher::watcher(api, config).default_backoff().boxed();
    let mut cache = SliceCache::default();
    let mut pods_open = pods.is_some();
    let mut listed = false;
    loop {
        let recompute = tokio::select! {
            () = stop.cancelled() => return,
            open = pods_changed(&mut pods), if pods_open => {
                pods_open = open;
                open
            }
            item = stream.next() => match item {
                None => {
                    tracing::error!("the EndpointSlice watch of Service {} ended", spec.describe());
                    return;
                }
                Some(Err(e)) => {
                    tracing::warn!(
                        "the EndpointSlice watch of Service {} failed, resuming with backoff: {e}",
                        spec.describe()
                    );
                    false
                }
                Some(Ok(event)) => {
                    let done = matches!(event, Event::InitDone);
                    let changed = cache.apply(event);
                    if done && !listed {
                        listed = true;
                        tracing::info!(
                            "watching the EndpointSlices of Service {} ({} listed)",
                            spec.describe(),
                            cache.slices().len()
                        );
                    }
                    changed
                }
            },
        };
        // Nothing is sent before the first complete list: an empty set then would mean
        // "every endpoint left".
        if !recompute || !listed {
            continue;
        }
        let set = {
            let index = pods.as_ref().map(|rx| rx.borrow().clone());
            endpoint_set(cache.slices(), spec.target_port, index.as_ref())
        };
        feed.send_if_modified(|current| {
            if *current == set {
                return false;
            }
            tracing::info!(
                "Service {}: {} endpoints: {}",
                spec.describe(),
                set.endpoints.len(),
                set.endpoints
                    .iter()
                    .map(|e| format!("{}={}", e.pod, e.addr))
                    .collect::<Vec<_>>()
                    .join(" ")
            );
            *current = set;
            true
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::readiness_gate::PodInfo;
    use serde_json::json;

    fn slice(name: &str, endpoints: serde_json::Value) -> EndpointSlice {
        serde_json::from_value(json!({
            "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": { "name": name }, "addressType": "IPv4", "endpoints": endpoints
        }))
        .unwrap()
    }

    fn ep(pod: &str, ip: &str, ready: Option<bool>) -> serde_json::Value {
        let mut e = json!({ "addresses": [ip], "targetRef": { "kind": "Pod", "name": pod } });
        if let Some(ready) = ready {
            e["conditions"] = json!({ "ready": ready });
        }
        e
    }

    fn pods_of(set: &EndpointSet) -> Vec<String> {
        set.endpoints
            .iter()
            .map(|e| format!("{}={}", e.pod, e.addr))
            .collect()
    }

    #[test]
    fn ready_and_unset_count_not_ready_does_not() {
        let slices = BTreeMap::from([
            (
                "a".to_owned(),
                slice(
                    "a",
                    json!([
                        ep("pod-0", "10.0.0.1", Some(true)),
                        ep("pod-1", "10.0.0.2", None),
                        ep("pod-2", "10.0.0.3", Some(false)),
                    ]),
                ),
            ),
            // The same pod in a second slice (slice churn) counts once.
            (
                "b".to_owned(),
                slice("b", json!([ep("pod-1", "10.0.0.2", Some(true))])),
            ),
        ]);
        assert_eq!(
            pods_of(&endpoint_set(&slices, 8081, None)),
            ["pod-0=10.0.0.1:8081", "pod-1=10.0.0.2:8081"]
        );
    }

    #[test]
    fn a_gated_containers_ready_pod_is_registered_before_it_is_ready() {
        let mut terminating = ep("pod-3", "10.0.0.4", Some(false));
        terminating["conditions"]["terminating"] = json!(true);
        let slices = BTreeMap::from([(
            "a".to_owned(),
            slice(
                "a",
                json!([
                    ep("pod-0", "10.0.0.1", Some(false)),
                    ep("pod-1", "10.0.0.2", Some(false)),
                    ep("pod-2", "10.0.0.3", Some(false)),
                    terminating,
                ]),
            ),
        )]);
        let info = |has_gate, containers_ready| PodInfo {
            uid: Some("u".into()),
            has_gate,
            containers_ready,
            condition: None,
        };
        let pods = PodIndex::from([
            ("pod-0".to_owned(), info(true, true)),
            ("pod-1".to_owned(), info(true, false)),
            ("pod-2".to_owned(), info(false, true)),
            ("pod-3".to_owned(), info(true, true)),
        ]);
        assert_eq!(
            pods_of(&endpoint_set(&slices, 80, Some(&pods))),
            ["pod-0=10.0.0.1:80"]
        );
        assert!(endpoint_set(&slices, 80, None).endpoints.is_empty());
    }

    #[test]
    fn a_relist_replaces_the_slices_only_when_complete() {
        let mut cache = SliceCache::default();
        assert!(cache.apply(Event::Apply(slice("a", json!([])))));
        assert!(cache.apply(Event::Apply(slice("b", json!([])))));
        assert!(!cache.apply(Event::Init));
        assert!(!cache.apply(Event::InitApply(slice("b", json!([])))));
        assert_eq!(cache.slices().len(), 2, "unchanged until InitDone");
        assert!(cache.apply(Event::InitDone));
        assert_eq!(cache.slices().keys().collect::<Vec<_>>(), ["b"]);
        assert!(cache.apply(Event::Delete(slice("b", json!([])))));
        assert!(!cache.apply(Event::Delete(slice("b", json!([])))));
    }
}

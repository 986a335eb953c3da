//! The ingress observer: once a second (bounded by the run's end) every replica pod is polled
//! concurrently through the API server — its Pod (a new UID is a new pod: the StatefulSet
//! recreated it after a deletion, a restart), its controller's update counters
//! ([`super::updates`]; a `full` increment is a reload) and its HAProxy's server list
//! ([`super::stats_csv`]) — and each change becomes an [`EventKind::Ingress`] with the servers
//! the replica lists, in order, named by the run's pod names.
//!
//! Pod names: haproxy-ingress v0.16 names a server after its pod (`backend-server-naming:
//! pod`) only when it renders the server; a slot the runtime API refills keeps its old name
//! with the new pod's address (docs/content/en/docs/configuration/keys.md, "Backend server
//! naming": "old-named backend servers will dynamically receive new workloads"). So a server
//! is named by its address, through the Service's EndpointSlices (address → pod), and by its
//! own name only when the address is unknown.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use futures::future::join_all;
use harness_core::measure::{EventKind, IngressCause, IngressChange};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::intents::Intents;
use super::stats_csv::{StatsServer, backend_servers};
use super::updates::UpdateCounts;
use crate::api::KubeApi;
use crate::watch::Recorder;

/// How long one scrape may take before the replica counts as unreadable for this tick.
const SCRAPE_TIMEOUT: Duration = Duration::from_secs(2);

/// What one poll of a replica returned (`None`: not readable this time).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReplicaPoll {
    pub pod_uid: Option<String>,
    pub counts: Option<UpdateCounts>,
    pub servers: Option<Vec<StatsServer>>,
    /// Why the stats page answered but gave no server list (a wrong backend name, a format
    /// the parser does not know): worth a note on the timeline, unlike a replica that is
    /// simply away.
    pub stats_error: Option<String>,
}

/// Address → pod name, and the pod names known, for naming servers.
#[derive(Debug, Clone, Default)]
pub struct PodNames {
    by_ip: BTreeMap<String, String>,
    names: BTreeSet<String>,
}

impl PodNames {
    /// Remembers that `ip` is (or was) pod `name`. Addresses are kept after the pod leaves so
    /// a list still naming it reads right; a reused address takes the newer pod.
    pub fn learn(&mut self, ip: &str, name: &str) {
        self.by_ip.insert(ip.to_owned(), name.to_owned());
        self.names.insert(name.to_owned());
    }

    /// Learns every endpoint of the observer's EndpointSlices.
    pub fn learn_slices(&mut self, recorder: &Recorder) {
        let recorded = recorder.lock();
        for slice in recorded.observer.slices() {
            for endpoint in slice.endpoints.iter().flatten() {
                let name = endpoint.target_ref.as_ref().and_then(|r| r.name.as_deref());
                if let (Some(name), Some(ip)) = (name, endpoint.addresses.first()) {
                    self.learn(ip, name);
                }
            }
        }
    }

    /// Whether `server`'s address is one of a known pod (or it has none to look up).
    pub fn knows(&self, server: &StatsServer) -> bool {
        server.ip().is_none_or(|ip| self.by_ip.contains_key(ip))
    }

    /// The run's name of `server`.
    pub fn name_of(&self, server: &StatsServer) -> String {
        server
            .ip()
            .and_then(|ip| self.by_ip.get(ip))
            .cloned()
            .unwrap_or_else(|| server.name.clone())
    }
}

/// How many polls a change waits for the EndpointSlices to name an unknown address before it
/// is recorded with the server's own name.
pub const NAME_WAIT_POLLS: u32 = 3;

/// One replica as last seen.
#[derive(Debug, Clone, Default)]
pub struct ReplicaTrack {
    uid: Option<String>,
    counts: Option<UpdateCounts>,
    /// The listed servers by identity (address, else name), to tell a change of the list from
    /// a change of what the harness knows about its names.
    listed: Option<Vec<String>>,
    /// Polls the current change has waited for names.
    waited: u32,
}

fn identity(server: &StatsServer) -> String {
    server.addr.clone().unwrap_or_else(|| server.name.clone())
}

/// A change of one replica: what happened, why, and its list after it.
pub type Change = (IngressChange, IngressCause, Vec<String>);

impl ReplicaTrack {
    /// Folds in one poll of `replica`; the change it shows, if any. A poll without the pod
    /// or its server list changes nothing (a restarting pod is seen once it serves again).
    pub fn step(
        &mut self,
        replica: u32,
        poll: &ReplicaPoll,
        names: &PodNames,
        intents: &Intents,
    ) -> Option<Change> {
        let (Some(uid), Some(servers)) = (&poll.pod_uid, &poll.servers) else {
            return None;
        };
        let listed: Vec<&StatsServer> = servers.iter().filter(|s| s.is_listed()).collect();
        let keys: Vec<String> = listed.iter().map(|s| identity(s)).collect();
        // A pod the controller already renders may not be in the harness's EndpointSlices yet:
        // a new list waits a few polls for its names rather than record the slots'.
        let new_list = self.listed.as_ref() != Some(&keys);
        if new_list && !listed.iter().all(|s| names.knows(s)) && self.waited < NAME_WAIT_POLLS {
            self.waited += 1;
            return None;
        }
        self.waited = 0;
        let named: Vec<String> = listed.iter().map(|s| names.name_of(s)).collect();
        let counts = poll.counts.or(self.counts);
        let change = match (&self.uid, self.counts, counts) {
            (None, _, _) => Some((IngressChange::Start, IngressCause::Deploy)),
            (Some(before), _, _) if before != uid => {
                Some((IngressChange::Restart, intents.take_restart(replica)))
            }
            // The same pod with its counters reset: its container was restarted.
            (_, Some(then), Some(now)) if now.full < then.full => {
                Some((IngressChange::Restart, intents.take_restart(replica)))
            }
            (_, Some(then), Some(now)) if now.full > then.full => {
                Some((IngressChange::Reload, intents.take_reload(replica)))
            }
            (_, _, _) if self.listed.as_ref() != Some(&keys) => {
                Some((IngressChange::RuntimeApi, IngressCause::Endpoints))
            }
            _ => None,
        };
        self.uid = Some(uid.clone());
        self.counts = counts;
        self.listed = Some(keys);
        change.map(|(what, why)| (what, why, named))
    }
}

/// Where the observer reads from.
#[derive(Debug, Clone)]
pub struct ObserveSetup {
    pub namespace: String,
    /// Replica `i`'s pod name at index `i`.
    pub pods: Vec<String>,
    /// The HAProxy backend of the scenario's Service.
    pub backend: String,
    pub stats_port: u16,
    /// The CSV's path on the stats port (`/;csv`).
    pub stats_path: String,
    pub metrics_port: u16,
    pub period: Duration,
}

async fn scrape<T>(
    future: impl std::future::Future<Output = Result<T, crate::api::ApiError>>,
) -> Option<T> {
    tokio::time::timeout(SCRAPE_TIMEOUT, future)
        .await
        .ok()
        .and_then(Result::ok)
}

/// Polls one replica: its Pod, its controller's counters and its HAProxy's stats, together.
pub async fn poll_replica(api: &KubeApi, setup: &ObserveSetup, pod: &str) -> ReplicaPoll {
    let ns = &setup.namespace;
    let (pod_object, metrics, csv) = tokio::join!(
        scrape(api.get_pod(ns, pod)),
        scrape(api.pod_proxy_get(ns, pod, setup.metrics_port, "/metrics")),
        scrape(api.pod_proxy_get(ns, pod, setup.stats_port, &setup.stats_path)),
    );
    let pod_uid = pod_object
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .and_then(|p| p.metadata.uid);
    let parsed = csv.map(|text| backend_servers(&text, &setup.backend));
    let stats_error = match &parsed {
        Some(Err(e)) => Some(e.to_string()),
        _ => None,
    };
    ReplicaPoll {
        pod_uid,
        counts: metrics.as_deref().and_then(UpdateCounts::parse),
        servers: parsed.and_then(Result::ok),
        stats_error,
    }
}

/// Polls every replica each `period` until `stop` or `until`, recording each change.
pub async fn observe(
    api: KubeApi,
    setup: ObserveSetup,
    recorder: Recorder,
    intents: Intents,
    stop: CancellationToken,
    until: Instant,
) {
    let mut tracks = vec![ReplicaTrack::default(); setup.pods.len()];
    // The last stats error noted per replica: each distinct one is noted once.
    let mut noted: Vec<Option<String>> = vec![None; setup.pods.len()];
    let mut names = PodNames::default();
    let mut ticker = tokio::time::interval(setup.period);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let period = setup.period.max(Duration::from_millis(10));
    let ticks = (until
        .saturating_duration_since(Instant::now())
        .as_secs_f64()
        / period.as_secs_f64())
    .ceil() as u64
        + 1;
    for _ in 0..ticks {
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep_until(until) => return,
            _ = ticker.tick() => {}
        }
        let polls = join_all(setup.pods.iter().map(|pod| poll_replica(&api, &setup, pod))).await;
        names.learn_slices(&recorder);
        let mut events = stats_notes(&setup, &polls, &mut noted);
        events.extend(tracks.iter_mut().zip(&polls).enumerate().filter_map(
            |(i, (track, poll))| {
                let replica = u32::try_from(i).unwrap_or(u32::MAX);
                track
                    .step(replica, poll, &names, &intents)
                    .map(|(change, cause, servers)| EventKind::Ingress {
                        replica,
                        change,
                        cause,
                        servers,
                    })
            },
        ));
        if !events.is_empty() {
            recorder.record(events);
        }
    }
}

/// A note for each replica whose stats page gave an error it had not given before.
fn stats_notes(
    setup: &ObserveSetup,
    polls: &[ReplicaPoll],
    noted: &mut [Option<String>],
) -> Vec<EventKind> {
    let mut out = Vec::new();
    for ((pod, poll), last) in setup.pods.iter().zip(polls).zip(noted.iter_mut()) {
        if let Some(error) = &poll.stats_error
            && last.as_ref() != Some(error)
        {
            out.push(EventKind::Note {
                message: format!(
                    "ingress observer: {pod}'s HAProxy stats: {error}; its server list is not \
                     observed while this lasts"
                ),
            });
            *last = Some(error.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(name: &str, addr: &str, status: &str) -> StatsServer {
        StatsServer {
            name: name.into(),
            addr: Some(addr.into()),
            status: status.into(),
        }
    }

    fn poll(uid: &str, full: u64, servers: Vec<StatsServer>) -> ReplicaPoll {
        ReplicaPoll {
            pod_uid: Some(uid.into()),
            counts: Some(UpdateCounts { full, dynamic: 0 }),
            servers: Some(servers),
            stats_error: None,
        }
    }

    #[test]
    fn start_reload_runtime_update_and_restart_are_told_apart() {
        let mut names = PodNames::default();
        names.learn("10.0.0.1", "web-a");
        names.learn("10.0.0.2", "web-b");
        names.learn("10.0.0.3", "web-c");
        let intents = Intents::default();
        let mut track = ReplicaTrack::default();
        let a = server("web-a", "10.0.0.1:8080", "UP");
        let b = server("web-b", "10.0.0.2:8080", "UP");
        let empty = server("srv003", "127.0.0.1:1023", "MAINT");
        // A slot the runtime API refilled keeps its old name: named by its address.
        let c_in_slot = server("srv003", "10.0.0.3:8080", "UP");

        let first = poll("u1", 1, vec![a.clone(), b.clone(), empty.clone()]);
        let start = track.step(0, &first, &names, &intents).unwrap();
        assert_eq!(start.0, IngressChange::Start);
        assert_eq!(start.2, ["web-a", "web-b"]);
        assert_eq!(track.step(0, &first, &names, &intents), None);

        intents.expect_reloads(2, IngressCause::Rewrite);
        let reload = track
            .step(
                0,
                &poll("u1", 2, vec![a.clone(), b.clone()]),
                &names,
                &intents,
            )
            .unwrap();
        assert_eq!(
            (reload.0, reload.1),
            (IngressChange::Reload, IngressCause::Rewrite)
        );
        // The next reload nobody asked for: the controller's, for the endpoints.
        let again = track
            .step(
                0,
                &poll("u1", 3, vec![b.clone(), a.clone()]),
                &names,
                &intents,
            )
            .unwrap();
        assert_eq!(
            (again.0, again.1),
            (IngressChange::Reload, IngressCause::Endpoints)
        );
        assert_eq!(again.2, ["web-b", "web-a"]);

        let slot = track
            .step(
                0,
                &poll("u1", 3, vec![b.clone(), a.clone(), c_in_slot]),
                &names,
                &intents,
            )
            .unwrap();
        assert_eq!(slot.0, IngressChange::RuntimeApi);
        assert_eq!(slot.2, ["web-b", "web-a", "web-c"]);

        // Deleted: not readable while it is away, then a new pod.
        intents.expect_restart(0, IngressCause::ReloadFailed);
        let gone = ReplicaPoll::default();
        assert_eq!(track.step(0, &gone, &names, &intents), None);
        let restart = track
            .step(0, &poll("u2", 1, vec![a, b]), &names, &intents)
            .unwrap();
        assert_eq!(
            (restart.0, restart.1),
            (IngressChange::Restart, IngressCause::ReloadFailed)
        );
        assert_eq!(restart.2, ["web-a", "web-b"]);
        // A restart takes a reload noted for the replica with it (the new pod has the new
        // configuration), and a restart nobody asked for is the StatefulSet's.
        intents.expect_reloads(1, IngressCause::Rewrite);
        assert_eq!(intents.take_restart(0), IngressCause::Deploy);
        assert_eq!(intents.take_reload(0), IngressCause::Endpoints);
    }

    #[test]
    fn a_counter_reset_in_the_same_pod_is_a_restart() {
        let names = PodNames::default();
        let intents = Intents::default();
        let mut track = ReplicaTrack::default();
        let s = vec![server("x", "10.0.0.9:80", "UP")];
        // An address no EndpointSlice names: the first list waits for its name a few polls,
        // then keeps the server's own name.
        for _ in 0..NAME_WAIT_POLLS {
            assert_eq!(
                track.step(1, &poll("u", 5, s.clone()), &names, &intents),
                None
            );
        }
        let start = track
            .step(1, &poll("u", 5, s.clone()), &names, &intents)
            .unwrap();
        assert_eq!(
            (start.0, start.2),
            (IngressChange::Start, vec!["x".to_owned()])
        );
        // The same list does not wait again.
        let change = track.step(1, &poll("u", 1, s), &names, &intents).unwrap();
        assert_eq!(
            (change.0, change.1),
            (IngressChange::Restart, IngressCause::Deploy)
        );
        assert_eq!(change.2, ["x"]);
    }

    #[test]
    fn a_stats_error_is_noted_once_per_replica_until_it_changes() {
        let setup = ObserveSetup {
            namespace: "ns".into(),
            pods: vec!["haproxy-ingress-0".into(), "haproxy-ingress-1".into()],
            backend: "ns_svc_8080".into(),
            stats_port: 1936,
            stats_path: "/;csv".into(),
            metrics_port: 10254,
            period: Duration::from_secs(1),
        };
        let failing = ReplicaPoll {
            stats_error: Some("no backend".into()),
            ..ReplicaPoll::default()
        };
        let mut noted = vec![None; 2];
        let polls = [failing.clone(), ReplicaPoll::default()];
        let first = stats_notes(&setup, &polls, &mut noted);
        assert_eq!(first.len(), 1);
        assert!(
            matches!(&first[0], EventKind::Note { message } if message.contains("haproxy-ingress-0's HAProxy stats: no backend")),
            "{first:?}"
        );
        assert!(stats_notes(&setup, &polls, &mut noted).is_empty());
        let other = ReplicaPoll {
            stats_error: Some("no header".into()),
            ..ReplicaPoll::default()
        };
        assert_eq!(stats_notes(&setup, &[other, failing], &mut noted).len(), 2);
    }
}

//! The watchers of a run (kube-runtime `watcher`, re-listing with backoff when a watch drops):
//! the Service's EndpointSlices, the service pods, the namespace's Events, every Node and the
//! service's Deployment (for rollouts). Each
//! change goes to one [`Recorder`], which runs it through the [`Observer`] (timeline events),
//! timestamps the events, and after each EndpointSlice change runs the model check
//! ([`AgreementLog`]). A dropped watch is recorded on the timeline as a note naming the
//! resource and the error; kube-runtime then re-lists and resumes.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::StreamExt;
use harness_core::measure::EventKind;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Event, Node, Pod};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::Client;
use kube::api::Api;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event as WatchEvent};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::agreement::AgreementLog;
use crate::manifests::ROLE_LABEL;
use crate::observer::{Change, Observer};

/// What the watchers recorded.
#[derive(Debug)]
pub struct Recorded {
    pub observer: Observer,
    /// Timeline events with the instant they were seen.
    pub events: Vec<(Instant, EventKind)>,
    pub agreement: Option<AgreementLog>,
    /// The instant model checks count from.
    pub origin: Instant,
    /// Watch errors already noted (one note per distinct message and resource).
    noted: Vec<String>,
}

impl Recorded {
    /// The pods that exited during the run (their `Exited` termination), when on the run's
    /// clock and the final counters their sidecar reported.
    pub fn exits(
        &self,
        clock: Option<&harness_core::clock::RunClock>,
        origin: Instant,
    ) -> std::collections::BTreeMap<String, harness_core::target_kit::PodExit> {
        self.events
            .iter()
            .filter_map(|(at, e)| match e {
                EventKind::Termination {
                    pod,
                    stage: harness_core::measure::TerminationStage::Exited,
                } => Some((
                    pod.clone(),
                    harness_core::target_kit::PodExit {
                        t_s: harness_core::target_kit::run_time(clock, origin, *at),
                        totals: self.observer.sidecar_totals(pod),
                    },
                )),
                _ => None,
            })
            .collect()
    }
}

/// Shared handle on [`Recorded`].
#[derive(Debug, Clone)]
pub struct Recorder(Arc<Mutex<Recorded>>);

impl Recorder {
    pub fn new(observer: Observer) -> Self {
        Recorder(Arc::new(Mutex::new(Recorded {
            observer,
            events: Vec::new(),
            agreement: None,
            origin: Instant::now(),
            noted: Vec::new(),
        })))
    }

    pub fn lock(&self) -> MutexGuard<'_, Recorded> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records events caused by the harness itself (actions, notes).
    pub fn record(&self, events: Vec<EventKind>) {
        let now = Instant::now();
        self.lock()
            .events
            .extend(events.into_iter().map(|e| (now, e)));
    }

    /// Records the start of a rollout the harness made (and its completion, should the
    /// Deployment already seen show it).
    pub fn start_rollout(&self, pending: crate::observer::PendingRollout) {
        let now = Instant::now();
        let mut s = self.lock();
        let events = s.observer.start_rollout(pending);
        s.events.extend(events.into_iter().map(|e| (now, e)));
    }

    /// Runs one watched change through the observer and, for EndpointSlices, the model check.
    pub fn apply(&self, change: Change) {
        let now = Instant::now();
        let mut guard = self.lock();
        let s = &mut *guard;
        let slice_changed = matches!(change, Change::Slice(_) | Change::SliceDeleted(_));
        let before = s.observer.hints_enabled();
        let events = s.observer.apply(change);
        s.events.extend(events.into_iter().map(|e| (now, e)));
        if !slice_changed {
            return;
        }
        let t_s = (now - s.origin).as_secs_f64();
        if let Some(log) = &mut s.agreement
            && let Err(e) = log.check(t_s, s.observer.nodes(), s.observer.slices(), before)
        {
            s.events.push((
                now,
                EventKind::Note {
                    message: format!("model check skipped: {e}"),
                },
            ));
        }
    }

    /// Notes a watch error once per distinct message.
    pub fn watch_error(&self, what: &str, error: &str) {
        let key = format!("{what}: {error}");
        let mut s = self.lock();
        if s.noted.contains(&key) {
            return;
        }
        s.noted.push(key);
        s.events.push((
            Instant::now(),
            EventKind::Note {
                message: format!(
                    "the watch of {what} dropped ({error}); re-listing and resuming, changes in between are seen late"
                ),
            },
        ));
    }
}

/// Turns watch events of one kind of object into observer changes.
type ToChange<K> = fn(WatchEvent<K>) -> Option<Change>;

fn slice_change(e: WatchEvent<EndpointSlice>) -> Option<Change> {
    match e {
        WatchEvent::Apply(s) | WatchEvent::InitApply(s) => Some(Change::Slice(Box::new(s))),
        WatchEvent::Delete(s) => Some(Change::SliceDeleted(s.metadata.name.unwrap_or_default())),
        WatchEvent::Init | WatchEvent::InitDone => None,
    }
}

fn pod_change(e: WatchEvent<Pod>) -> Option<Change> {
    match e {
        WatchEvent::Apply(p) | WatchEvent::InitApply(p) => Some(Change::Pod(Box::new(p))),
        WatchEvent::Delete(p) => Some(Change::PodDeleted(p.metadata.name.unwrap_or_default())),
        WatchEvent::Init | WatchEvent::InitDone => None,
    }
}

fn node_change(e: WatchEvent<Node>) -> Option<Change> {
    match e {
        WatchEvent::Apply(n) | WatchEvent::InitApply(n) => Some(Change::Node(Box::new(n))),
        WatchEvent::Delete(n) => Some(Change::NodeDeleted(n.metadata.name.unwrap_or_default())),
        WatchEvent::InitDone => Some(Change::NodesListed),
        WatchEvent::Init => None,
    }
}

fn event_change(e: WatchEvent<Event>) -> Option<Change> {
    match e {
        WatchEvent::Apply(ev) | WatchEvent::InitApply(ev) => Some(Change::Event(Box::new(ev))),
        WatchEvent::Delete(_) | WatchEvent::Init | WatchEvent::InitDone => None,
    }
}

fn deployment_change(e: WatchEvent<Deployment>) -> Option<Change> {
    match e {
        WatchEvent::Apply(d) | WatchEvent::InitApply(d) => Some(Change::Deployment(Box::new(d))),
        WatchEvent::Delete(_) | WatchEvent::Init | WatchEvent::InitDone => None,
    }
}

async fn run_watch<K>(
    api: Api<K>,
    config: watcher::Config,
    what: String,
    to_change: ToChange<K>,
    recorder: Recorder,
    stop: CancellationToken,
) where
    K: kube::Resource<DynamicType = ()>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug
        + Send
        + 'static,
{
    let mut stream = watcher::watcher(api, config).default_backoff().boxed();
    loop {
        let item = tokio::select! {
            () = stop.cancelled() => return,
            item = stream.next() => item,
        };
        match item {
            None => {
                recorder.watch_error(&what, "the stream ended");
                return;
            }
            Some(Ok(event)) => {
                if let Some(change) = to_change(event) {
                    recorder.apply(change);
                }
            }
            Some(Err(e)) => recorder.watch_error(&what, &e.to_string()),
        }
    }
}

/// The label selector of the Service's EndpointSlices.
pub fn slice_selector(service: &str) -> String {
    format!("{}={service}", kube_model::openapi::LABEL_SERVICE_NAME)
}

/// The label selector of the service's pods.
pub fn service_pod_selector() -> String {
    format!("{ROLE_LABEL}=service")
}

/// Starts the watchers — the Deployment's only when `rollouts` (the timeline has a `rollout`);
/// they run until `stop`.
pub fn spawn_watchers(
    client: &Client,
    namespace: &str,
    service: &str,
    rollouts: bool,
    recorder: &Recorder,
    stop: &CancellationToken,
) -> Vec<JoinHandle<()>> {
    let nodes: Api<Node> = Api::all(client.clone());
    let slices: Api<EndpointSlice> = Api::namespaced(client.clone(), namespace);
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let events: Api<Event> = Api::namespaced(client.clone(), namespace);
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), namespace);
    let mut tasks = vec![
        tokio::spawn(run_watch(
            nodes,
            watcher::Config::default(),
            "Nodes".to_owned(),
            node_change,
            recorder.clone(),
            stop.clone(),
        )),
        tokio::spawn(run_watch(
            slices,
            watcher::Config::default().labels(&slice_selector(service)),
            format!("EndpointSlices of Service {namespace}/{service}"),
            slice_change,
            recorder.clone(),
            stop.clone(),
        )),
        tokio::spawn(run_watch(
            pods,
            watcher::Config::default().labels(&service_pod_selector()),
            format!("Pods of {namespace}"),
            pod_change,
            recorder.clone(),
            stop.clone(),
        )),
        tokio::spawn(run_watch(
            events,
            watcher::Config::default(),
            format!("Events of {namespace}"),
            event_change,
            recorder.clone(),
            stop.clone(),
        )),
    ];
    if rollouts {
        tasks.push(tokio::spawn(run_watch(
            deployments,
            watcher::Config::default().fields(&format!("metadata.name={service}")),
            format!("Deployment {namespace}/{service}"),
            deployment_change,
            recorder.clone(),
            stop.clone(),
        )));
    }
    tasks
}

/// How long to wait for the watchers to end after `stop`.
pub const WATCH_STOP: Duration = Duration::from_secs(2);

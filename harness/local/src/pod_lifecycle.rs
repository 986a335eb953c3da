//! The pods of a local run: starting them the way the kubelet does — the pod's start-up
//! latency first (`service.startup.latency`: scheduling, the kubelet's sync, sandbox and
//! container start), then the processes configured by the pod's revision, then the readiness
//! prober (`crate::prober`, its runs timed by `kube_model::probe`) and sampling — and
//! terminating them the way the kubelet does — the plan comes from the ported model
//! (`kube_model::workloads::termination`) in Kubernetes time: preStop (sleep, or an exec hook
//! that fails on an image without a shell), SIGTERM, SIGKILL at the end of the grace period —
//! after which the pod leaves the EndpointSlice. Every wait is slept at the run's time scale. A
//! pod deleted before its containers started leaves at once. Also the run's model clock
//! ([`PodManager::model_time`]). Shared by engine actions and the controller loop.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use harness_core::clock::TimeScale;
use harness_core::control_plane::cluster::{PodOp, PodRevision};
use harness_core::engine::TargetError;
use harness_core::measure::{EventKind, TerminationStage};
use harness_core::scenario::model::{PreStop, Scenario, Termination, exec_runtime};
use kube_model::node_lifecycle;
use kube_model::workloads::termination::{self, TerminationSpec, termination_plan};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::LocalError;
use crate::bins::WorkloadBins;
use crate::cluster_state::SharedState;
use crate::pods::{PodPlace, PodProcesses};
use crate::prober::{ProbeStart, run_prober};
use crate::sampler::Targets;
use crate::scrape::Scraper;

/// Where a pod ran, for the report.
#[derive(Debug, Clone)]
pub struct PodMeta {
    pub node: String,
    pub zone: String,
}

/// Starts and stops pods; cheap to clone.
#[derive(Clone)]
pub struct PodManager {
    inner: Arc<Inner>,
}

/// Where a pod is in its life, as the manager runs it.
enum PodState {
    /// Created; its containers start when the start-up latency has passed (cancel: deleted
    /// before that).
    Starting(CancellationToken),
    /// Its processes run.
    Running(Box<PodProcesses>),
    /// Its processes could not be started (the failure is kept for the engine).
    Failed,
}

struct Inner {
    bins: WorkloadBins,
    scraper: Scraper,
    scenario: Arc<Scenario>,
    out_dir: std::path::PathBuf,
    shared: SharedState,
    scale: TimeScale,
    /// Model time zero.
    epoch: Instant,
    pods: Mutex<BTreeMap<String, PodState>>,
    /// Pods whose processes could not be started, and why.
    start_failures: Mutex<Vec<(String, LocalError)>>,
    probers: Mutex<BTreeMap<String, CancellationToken>>,
    /// Draws the probe workers' start-up jitter after a kubelet restart (seeded by the run).
    jitter: Mutex<SmallRng>,
    meta: Mutex<BTreeMap<String, PodMeta>>,
    targets: Targets,
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What of the run the pod manager needs: where pods write their logs, the time scale, and
/// the seed of the kubelets' probe jitter.
#[derive(Debug, Clone)]
pub struct PodRunContext {
    pub out_dir: std::path::PathBuf,
    pub scale: TimeScale,
    pub seed: u64,
}

impl PodManager {
    pub fn new(
        bins: WorkloadBins,
        scraper: Scraper,
        scenario: Arc<Scenario>,
        shared: SharedState,
        targets: Targets,
        run: PodRunContext,
    ) -> Self {
        let PodRunContext {
            out_dir,
            scale,
            seed,
        } = run;
        Self {
            inner: Arc::new(Inner {
                bins,
                scraper,
                scenario,
                out_dir,
                shared,
                scale,
                epoch: Instant::now(),
                pods: Mutex::new(BTreeMap::new()),
                start_failures: Mutex::new(Vec::new()),
                probers: Mutex::new(BTreeMap::new()),
                jitter: Mutex::new(SmallRng::seed_from_u64(seed ^ 0x006b_7562_656c_6574)),
                meta: Mutex::new(BTreeMap::new()),
                targets,
                tasks: Mutex::new(Vec::new()),
            }),
        }
    }

    /// Wall time since the manager was created.
    pub fn elapsed(&self) -> Duration {
        self.inner.epoch.elapsed()
    }

    /// Model time now: Kubernetes time since the manager was created (wall time ÷ the scale),
    /// what the cluster model and the autoscaler compute in.
    pub fn model_time(&self) -> Duration {
        self.inner.scale.kubernetes(self.elapsed())
    }

    /// The run's time scale.
    pub fn scale(&self) -> TimeScale {
        self.inner.scale
    }

    pub fn meta(&self) -> BTreeMap<String, PodMeta> {
        lock(&self.inner.meta).clone()
    }

    /// Whether `pod`'s containers have started (its phase is `Running`, not `Pending`).
    pub fn containers_started(&self, pod: &str) -> bool {
        matches!(lock(&self.inner.pods).get(pod), Some(PodState::Running(_)))
    }

    /// The first pod whose processes could not be started, as the engine's error.
    pub fn start_failure(&self) -> Option<TargetError> {
        let mut failures = lock(&self.inner.start_failures);
        (!failures.is_empty()).then(|| {
            let (pod, e) = failures.remove(0);
            TargetError::new(format!("starting {pod}"), e)
        })
    }

    /// Carries out pod operations decided by the model. Pods start in the background (they
    /// wait for their start-up latency); terminations run in the background too.
    pub async fn execute(&self, ops: Vec<PodOp>) -> Result<(), TargetError> {
        for op in ops {
            match op {
                PodOp::Start {
                    pod,
                    node,
                    zone,
                    revision,
                } => self.start(pod, node, zone, revision),
                PodOp::Stop { pod, termination } => self.terminate(pod, &termination),
                PodOp::Kubelet {
                    running: false,
                    pods,
                    ..
                } => self.stop_probers(&pods),
                PodOp::Kubelet {
                    running: true,
                    pods,
                    ..
                } => self.restart_probers(&pods),
            }
        }
        self.start_failure().map_or(Ok(()), Err)
    }

    /// The kubelet's start of a new pod: after the start-up latency its containers start,
    /// then the readiness prober runs.
    fn start(&self, pod: String, node: String, zone: String, revision: PodRevision) {
        let i = &self.inner;
        let cancel = CancellationToken::new();
        lock(&i.meta).insert(pod.clone(), PodMeta { node, zone });
        lock(&i.pods).insert(pod.clone(), PodState::Starting(cancel.clone()));
        let manager = self.clone();
        let task = tokio::spawn(async move {
            let latency = manager
                .inner
                .scale
                .wall(manager.inner.scenario.service.startup.latency);
            tokio::select! {
                () = cancel.cancelled() => {
                    manager.gone(&pod);
                    return;
                }
                () = tokio::time::sleep(latency) => {}
            }
            manager.start_containers(pod, &revision).await;
        });
        lock(&i.tasks).push(task);
    }

    async fn start_containers(&self, pod: String, revision: &PodRevision) {
        let i = &self.inner;
        let Some(PodMeta { node, zone }) = lock(&i.meta).get(&pod).cloned() else {
            return;
        };
        let started = PodProcesses::start(
            &i.bins,
            &i.scenario.service,
            &revision.app,
            i.scale,
            PodPlace {
                pod: &pod,
                node: &node,
                zone: &zone,
            },
            &i.out_dir,
        )
        .await;
        // Deleted while its processes were starting: the deletion found it `Starting`.
        let deleted = !matches!(lock(&i.pods).get(&pod), Some(PodState::Starting(_)));
        if deleted {
            if let Ok(mut processes) = started {
                processes.stop(Duration::ZERO).await;
            }
            self.gone(&pod);
            return;
        }
        let processes = match started {
            Ok(processes) => processes,
            Err(e) => {
                note(
                    &i.shared,
                    format!(
                        "{pod} did not start: {}",
                        harness_core::text::error_chain(&e)
                    ),
                );
                lock(&i.start_failures).push((pod.clone(), e));
                self.settle_start(&pod, PodState::Failed);
                return;
            }
        };
        // Registered before the pod counts as running, so that a deletion from then on finds
        // everything to take down.
        let stop = self.spawn_prober(&pod, processes.addr, ProbeStart::ContainerStart);
        lock(&i.targets).insert(pod.clone(), processes.admin);
        {
            let mut s = i.shared.lock();
            s.pod_addrs.insert(pod.clone(), processes.addr);
            s.known_addrs.insert(pod.clone(), processes.addr);
            s.sync_proxies();
        }
        if let Some(mut processes) = self.settle_start(&pod, PodState::Running(Box::new(processes)))
        {
            // Deleted in the meantime: take it down again.
            stop.cancel();
            lock(&i.probers).remove(&pod);
            lock(&i.targets).remove(&pod);
            {
                let mut s = i.shared.lock();
                s.pod_addrs.remove(&pod);
                s.sync_proxies();
            }
            processes.stop(Duration::ZERO).await;
            self.gone(&pod);
        }
    }

    /// Starts the kubelet's readiness probe worker of `pod` at `addr`.
    fn spawn_prober(&self, pod: &str, addr: SocketAddr, start: ProbeStart) -> CancellationToken {
        let i = &self.inner;
        let stop = CancellationToken::new();
        let prober = tokio::spawn(run_prober(
            pod.to_owned(),
            addr,
            i.scenario.service.readiness_probe,
            i.scale,
            i.scraper.clone(),
            i.shared.clone(),
            stop.clone(),
            start,
        ));
        lock(&i.tasks).push(prober);
        if let Some(old) = lock(&i.probers).insert(pod.to_owned(), stop.clone()) {
            old.cancel();
        }
        stop
    }

    /// The pods' kubelet went silent: their probe workers stop (the processes keep running).
    fn stop_probers(&self, pods: &[String]) {
        let mut probers = lock(&self.inner.probers);
        for pod in pods {
            if let Some(stop) = probers.remove(pod) {
                stop.cancel();
            }
        }
    }

    /// The pods' kubelet is back: each running pod gets a fresh probe worker whose first run
    /// comes a random part of the probe period later.
    fn restart_probers(&self, pods: &[String]) {
        let period = self.inner.scenario.service.readiness_probe.period;
        for pod in pods {
            let addr = match lock(&self.inner.pods).get(pod) {
                Some(PodState::Running(processes)) => processes.addr,
                _ => continue,
            };
            let draw: f64 = lock(&self.inner.jitter).random();
            let jitter = node_lifecycle::first_probe_after_restart(period, draw);
            self.spawn_prober(pod, addr, ProbeStart::KubeletRestart { jitter });
        }
    }

    /// Moves a starting pod to `state`; when the pod was deleted meanwhile, hands running
    /// processes back to be stopped.
    fn settle_start(&self, pod: &str, state: PodState) -> Option<PodProcesses> {
        let mut pods = lock(&self.inner.pods);
        if matches!(pods.get(pod), Some(PodState::Starting(_))) {
            pods.insert(pod.to_owned(), state);
            None
        } else {
            match state {
                PodState::Running(processes) => Some(*processes),
                _ => None,
            }
        }
    }

    /// A pod that never ran (deleted before its containers started, or failed to start) is
    /// gone: it leaves the EndpointSlice.
    fn gone(&self, pod: &str) {
        let mut s = self.inner.shared.lock();
        let events = s.model.pod_gone(pod);
        s.record(events);
    }

    /// Runs the kubelet's termination of a deleted pod in the background.
    fn terminate(&self, pod: String, termination: &Termination) {
        let i = &self.inner;
        // First, so that a start finishing meanwhile sees the deletion (or is seen by it).
        let state = lock(&i.pods).remove(&pod);
        let mut processes = match state {
            Some(PodState::Running(processes)) => *processes,
            // Its start task sees the cancellation and reports the pod gone.
            Some(PodState::Starting(cancel)) => {
                cancel.cancel();
                return;
            }
            Some(PodState::Failed) => {
                self.gone(&pod);
                return;
            }
            None => return,
        };
        if let Some(stop) = lock(&i.probers).remove(&pod) {
            stop.cancel();
        }
        // The sampler keeps scraping the sidecar while it drains; at its exit the sidecar
        // writes its final counters.
        {
            let mut s = i.shared.lock();
            s.pod_addrs.remove(&pod);
            s.sync_proxies();
        }
        // The plan in Kubernetes' own (whole-second) time; its waits are slept at the scale.
        let plan = termination_plan(&kubelet_spec(termination), Duration::ZERO);
        let scale = i.scale;
        let shared = i.shared.clone();
        let targets = i.targets.clone();
        {
            let mut s = shared.lock();
            let events = plan
                .events
                .iter()
                .filter(|e| e.at.is_zero())
                .map(|e| EventKind::KubeEvent {
                    kind: e.event_type,
                    reason: e.reason.to_string(),
                    message: e.message.clone(),
                    object: format!("pod/{pod}"),
                })
                .collect();
            s.record(events);
        }
        let sigterm_after = scale.wall(plan.sigterm_at);
        let stop_grace = scale.wall(plan.stop_grace);
        let task = tokio::spawn(async move {
            tokio::time::sleep(sigterm_after).await;
            shared.lock().record(vec![EventKind::Termination {
                pod: pod.clone(),
                stage: TerminationStage::Sigterm,
            }]);
            let in_time = processes.stop(stop_grace).await;
            lock(&targets).remove(&pod);
            let totals = processes.final_totals();
            let mut s = shared.lock();
            s.exits.insert(pod.clone(), (Instant::now(), totals));
            if !in_time {
                s.record(vec![EventKind::Termination {
                    pod: pod.clone(),
                    stage: TerminationStage::Sigkill,
                }]);
            }
            let events = s.model.pod_gone(&pod);
            s.record(events);
        });
        lock(&i.tasks).push(task);
    }

    /// Stops every pod at once (teardown) and waits for all background tasks, bounded.
    pub async fn shutdown(&self, grace: Duration) {
        let i = &self.inner;
        for stop in lock(&i.probers).values() {
            stop.cancel();
        }
        let pods: Vec<PodProcesses> = std::mem::take(&mut *lock(&i.pods))
            .into_values()
            .filter_map(|state| match state {
                PodState::Running(processes) => Some(*processes),
                PodState::Starting(cancel) => {
                    cancel.cancel();
                    None
                }
                PodState::Failed => None,
            })
            .collect();
        let mut stops: Vec<JoinHandle<()>> = pods
            .into_iter()
            .map(|mut p| {
                tokio::spawn(async move {
                    p.stop(grace).await;
                })
            })
            .collect();
        stops.extend(std::mem::take(&mut *lock(&i.tasks)));
        for handle in stops {
            // Bounded: every stop ends with SIGKILL after its grace period.
            let limit = grace + Duration::from_secs(5);
            if tokio::time::timeout(limit, handle).await.is_err() {
                tracing::warn!("a pod task did not finish within {limit:?}");
            }
        }
    }
}

fn note(shared: &SharedState, message: String) {
    shared.lock().record(vec![EventKind::Note { message }]);
}

/// The kubelet's view of a pod's termination: the API's whole seconds.
fn kubelet_spec(t: &Termination) -> TerminationSpec {
    let whole_seconds = |d: Duration| d.as_secs_f64().round() as u64;
    let pre_stop = match &t.pre_stop {
        PreStop::None => termination::PreStop::None,
        PreStop::Sleep(d) => termination::PreStop::Sleep {
            seconds: whole_seconds(*d),
        },
        PreStop::Exec(command) => termination::PreStop::Exec {
            command: command.clone(),
            runs_for: exec_runtime(command),
        },
    };
    let mut spec =
        TerminationSpec::new(Duration::from_secs(whole_seconds(t.grace_period)), pre_stop);
    spec.image_has_shell = t.image_has_shell;
    spec.container_name = "flagsvc".into();
    spec
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubelet_sees_unscaled_whole_seconds() {
        // The scenario is in Kubernetes time whatever the run's scale: no unscaling, one
        // rounding to the API's whole seconds.
        let t = Termination {
            grace_period: Duration::from_millis(60_400),
            pre_stop: PreStop::Sleep(Duration::from_millis(29_600)),
            image_has_shell: true,
        };
        let spec = kubelet_spec(&t);
        assert_eq!(spec.grace_period, Duration::from_secs(60));
        assert_eq!(spec.pre_stop, termination::PreStop::Sleep { seconds: 30 });
    }
}

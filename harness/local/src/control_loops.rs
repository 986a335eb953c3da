//! The control loops of a local run, ticking every 50 ms of wall time: the taint eviction
//! controller deletes the pods of a node NotReady for longer than their toleration, the
//! Deployment controller drives a rollout in progress one step at a time, and the
//! HorizontalPodAutoscaler syncs at its period. Both models compute in Kubernetes time (the manager's model time) with
//! the scenario's own settings; request rates are per wall second, what the workloads see.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use harness_core::control_plane::endpoints::PodRecord;
use harness_core::measure::{EventKind, PodSample};
use harness_core::scenario::model::{self, Autoscaler, PolicyKind, Reporter, Scenario};
use harness_core::text::error_chain;
use kube_model::hpa::{
    self, Behavior, ControllerOptions, HpaSpec, HpaState, MetricSpec, MetricTarget, Observation,
    PodMetric, PodPhase, PolicyType, ScalingPolicy, ScalingRules, SelectPolicy,
};
use tokio_util::sync::CancellationToken;

use crate::cluster_state::SharedState;
use crate::pod_lifecycle::PodManager;
use crate::scrape::Scraper;
use harness_core::target_kit::Samples;

const TICK: Duration = Duration::from_millis(50);

/// What the loops need.
pub struct Controllers {
    pub manager: PodManager,
    pub shared: SharedState,
    pub scenario: Arc<Scenario>,
    pub samples: Samples,
    pub scraper: Scraper,
    /// Each started load generator's metrics address (source-side demand).
    pub loadgen_metrics: crate::load::LoadgenMetrics,
}

/// Runs until `stop` is cancelled.
pub async fn run_controllers(c: Controllers, stop: CancellationToken) {
    let mut ticker = tokio::time::interval(TICK);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut hpa = c.scenario.service.autoscaler.clone().map(HpaLoop::new);
    let mut last_source: Option<(Duration, f64)> = None;
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = ticker.tick() => {}
        }
        let now = c.manager.model_time();
        let ops = {
            let mut s = c.shared.lock();
            s.model.set_time(now);
            // The taint eviction controller: pods outlasting their toleration of a NotReady
            // node are deleted and replaced.
            let mut ops = match s.model.advance() {
                Ok(applied) => {
                    s.record(applied.events);
                    applied.pod_ops
                }
                Err(e) => {
                    s.record(vec![EventKind::Note {
                        message: format!(
                            "a replacement of an evicted pod cannot be scheduled: {e}"
                        ),
                    }]);
                    Vec::new()
                }
            };
            ops.extend(match s.model.rollout_step() {
                Ok(applied) => {
                    s.record(applied.events);
                    applied.pod_ops
                }
                Err(e) => {
                    s.record(vec![EventKind::Note {
                        message: format!("rollout cannot schedule a pod: {e}"),
                    }]);
                    Vec::new()
                }
            });
            ops
        };
        if let Err(e) = c.manager.execute(ops).await {
            note(
                &c.shared,
                format!("rollout step failed: {}", error_chain(&e)),
            );
        }
        if let Some(h) = hpa.as_mut()
            && now >= h.next_sync
        {
            h.next_sync = now + h.spec.sync_period;
            let source = source_rate(&c, c.manager.elapsed(), &mut last_source).await;
            let ops = h.sync(&c, now, source);
            if let Err(e) = c.manager.execute(ops).await {
                note(
                    &c.shared,
                    format!("autoscaler scaling failed: {}", error_chain(&e)),
                );
            }
        }
    }
}

fn note(shared: &SharedState, message: String) {
    shared.lock().record(vec![EventKind::Note { message }]);
}

/// Total requests per (wall) second the generators attempted since the last call at `now`
/// (wall time).
async fn source_rate(
    c: &Controllers,
    now: Duration,
    last: &mut Option<(Duration, f64)>,
) -> Option<f64> {
    // A generator that has not started yet (startAt) answers nothing and adds nothing.
    let mut total = 0.0;
    for addr in crate::load::metrics_addrs(&c.loadgen_metrics) {
        total += c
            .scraper
            .counter(addr, workload_contract::loadgen::ATTEMPTED_TOTAL)
            .await
            .unwrap_or(0.0);
    }
    let rate = last.map(|(t, v)| (total - v) / (now - t).as_secs_f64().max(1e-3));
    *last = Some((now, total));
    rate
}

struct HpaLoop {
    spec: Autoscaler,
    state: HpaState,
    model: HpaSpec,
    options: ControllerOptions,
    next_sync: Duration,
}

impl HpaLoop {
    fn new(spec: Autoscaler) -> Self {
        let metric = match spec.reporter {
            Reporter::Destination => {
                MetricSpec::pods("requests_per_second", spec.target_average_value)
            }
            Reporter::Source => MetricSpec::external(
                "requests_per_second",
                MetricTarget::AverageValue(spec.target_average_value),
            ),
        };
        let whole_secs = |d: Duration| d.as_secs_f64().round() as i32;
        let rules = |r: &model::ScalingRules| ScalingRules {
            stabilization_window_seconds: Some(whole_secs(r.stabilization_window)),
            select_policy: Some(match r.select_policy {
                model::SelectPolicy::Max => SelectPolicy::Max,
                model::SelectPolicy::Min => SelectPolicy::Min,
                model::SelectPolicy::Disabled => SelectPolicy::Disabled,
            }),
            policies: Some(
                r.policies
                    .iter()
                    .map(|p| ScalingPolicy {
                        policy_type: match p.kind {
                            PolicyKind::Pods => PolicyType::Pods,
                            PolicyKind::Percent => PolicyType::Percent,
                        },
                        value: p.value as i32,
                        period_seconds: whole_secs(p.period).max(1),
                    })
                    .collect(),
            ),
            tolerance: None,
        };
        let behavior = Behavior {
            scale_up: Some(rules(&spec.behavior.scale_up)),
            scale_down: Some(rules(&spec.behavior.scale_down)),
        };
        let model = HpaSpec::new(spec.min_replicas as i32, spec.max_replicas as i32, metric)
            .with_behavior(behavior);
        let options = ControllerOptions {
            tolerance: spec.tolerance,
            ..ControllerOptions::default()
        };
        Self {
            spec,
            state: HpaState::default(),
            model,
            options,
            next_sync: Duration::ZERO,
        }
    }

    /// One sync at model time `now`: measure both sides, decide with the configured one, scale
    /// the Deployment.
    fn sync(
        &mut self,
        c: &Controllers,
        now: Duration,
        source_rps: Option<f64>,
    ) -> Vec<harness_core::control_plane::cluster::PodOp> {
        // The sidecars' samples are on the wall clock, one a second.
        let window = c
            .manager
            .scale()
            .wall(self.spec.sync_period)
            .max(Duration::from_secs(1));
        let per_pod = destination_rates(&c.samples, window);
        let mut s = c.shared.lock();
        let (pods, counted) = destination_metric(s.model.endpoints().pods(), &per_pod, |pod| {
            c.manager.containers_started(pod)
        });
        let current = s.model.desired_replicas() as i32;
        // `+ 0.0`: an empty sum of f64 is -0.0, which would read "-0.000/s".
        let destination_rps: f64 = counted.values().sum::<f64>() + 0.0;
        let observation = match self.spec.reporter {
            Reporter::Destination => Observation::pods(current, pods),
            Reporter::Source => match source_rps {
                Some(total) => Observation::total(current, total, pods),
                None => return Vec::new(),
            },
        };
        let decision = hpa::reconcile(
            &self.options,
            &self.model,
            &mut self.state,
            now,
            &observation,
        );
        let desired = decision.desired_replicas.max(0) as u32;
        let mut events = vec![EventKind::Autoscaler {
            current: current as u32,
            desired,
            source_rps: source_rps.unwrap_or(0.0),
            destination_rps,
            destination_by_pod: counted,
        }];
        let mut ops = Vec::new();
        if desired != current as u32 {
            match s.model.scale_to(desired) {
                Ok(applied) => {
                    events.extend(applied.events);
                    ops = applied.pod_ops;
                }
                Err(e) => events.push(EventKind::Note {
                    message: format!("autoscaler cannot schedule pods: {e}"),
                }),
            }
        }
        s.record(events);
        ops
    }
}

/// The pods the HPA's selector matches, as the replica calculator sees them, and the
/// destination-side metric of those it counts (pod → processed requests per second).
///
/// As `replica_calculator.go`'s `groupPods` (kubernetes v1.34, ported in
/// `kube_model::hpa::pods`): a pod being deleted is ignored (the ReplicaSet no longer counts
/// it either, so it is not listed at all), a pod whose containers have not started is
/// `Pending` (unready: its sample is dropped), a running pod without a sample is missing, and
/// every other pod's sample counts whatever its `Ready` condition. So the metric is the sum
/// over pods that exist now — never a deleted pod's last rate.
pub(crate) fn destination_metric<'p>(
    pods: impl Iterator<Item = &'p PodRecord>,
    per_pod: &BTreeMap<String, f64>,
    started: impl Fn(&str) -> bool,
) -> (Vec<PodMetric>, BTreeMap<String, f64>) {
    let mut metrics = Vec::new();
    for p in pods.filter(|p| !p.terminating) {
        let mut metric = PodMetric::new(&p.name).with_ready(p.ready);
        if !started(&p.name) {
            metric.phase = PodPhase::Pending;
        } else if let Some(v) = per_pod.get(&p.name) {
            metric = metric.with_value(*v);
        }
        metrics.push(metric);
    }
    let groups = hpa::pods::group_pods(&metrics);
    let counted = metrics
        .iter()
        .filter(|m| {
            !groups.ignored.contains(&m.name)
                && !groups.unready.contains(&m.name)
                && !groups.missing.contains(&m.name)
        })
        .filter_map(|m| per_pod.get(&m.name).map(|v| (m.name.clone(), *v)))
        .collect();
    (metrics, counted)
}

/// Requests each pod's sidecar admitted per second over (about) the last `window`.
fn destination_rates(samples: &Samples, window: Duration) -> BTreeMap<String, f64> {
    let all = samples.lock().unwrap_or_else(|e| e.into_inner());
    all.iter()
        .filter_map(|(pod, s)| rate_over(s, window.as_secs_f64()).map(|r| (pod.clone(), r)))
        .collect()
}

fn rate_over(samples: &[PodSample], window_s: f64) -> Option<f64> {
    let last = samples.last()?;
    let first = samples
        .iter()
        .rev()
        .find(|s| last.t_s - s.t_s >= window_s - 0.5)?;
    let dt = last.t_s - first.t_s;
    (dt > 0.0).then(|| last.admitted.saturating_sub(first.admitted) as f64 / dt)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, ready: bool, terminating: bool) -> PodRecord {
        PodRecord {
            name: name.into(),
            node: "n".into(),
            zone: "z".into(),
            ready,
            terminating,
        }
    }

    /// A user's autoscaler whose scale-up met a rollout: the sidecars' samples still held the
    /// last rates of pods the rollout had deleted, and the event summed them in (≈ 690 rps
    /// while callers never sent more than 400).
    #[test]
    fn the_destination_metric_sums_only_the_pods_the_hpa_counts() {
        let pods = [
            pod("pod-0", true, false),
            // Failed its readiness probe, still running: a non-CPU metric counts it.
            pod("pod-1", false, false),
            // Being deleted by the rollout: ignored.
            pod("pod-2", true, true),
            // Created, containers not started: Pending.
            pod("pod-5", false, false),
            // Running, no sample yet: missing.
            pod("pod-6", false, false),
        ];
        let rates: BTreeMap<String, f64> = [
            ("pod-0", 100.0),
            ("pod-1", 80.0),
            ("pod-2", 150.0),
            // Deleted and gone from the model; its samples remain.
            ("pod-3", 160.0),
            ("pod-5", 5.0),
        ]
        .into_iter()
        .map(|(p, v)| (p.to_string(), v))
        .collect();
        let (metrics, counted) = destination_metric(pods.iter(), &rates, |p| p != "pod-5");
        assert_eq!(
            counted.keys().map(String::as_str).collect::<Vec<_>>(),
            ["pod-0", "pod-1"]
        );
        assert_eq!(counted.values().sum::<f64>(), 180.0);
        assert_eq!(metrics.len(), 4, "the deleted pods are not listed");
        let pending = metrics.iter().find(|m| m.name == "pod-5").unwrap();
        assert_eq!(pending.phase, PodPhase::Pending);
        assert_eq!(pending.value_milli, None);
        let missing = metrics.iter().find(|m| m.name == "pod-6").unwrap();
        assert_eq!(missing.value_milli, None);
    }
}

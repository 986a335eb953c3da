//! What a target hands back after a run, independent of the target: each generator's report
//! (the loadgen report type of `workload_contract`, documented in workloads/loadgen/REPORT.md),
//! per-pod samples of the sidecars' destination-side metrics, and the timeline of control-plane
//! events.

use std::collections::{BTreeMap, BTreeSet};

use kube_model::EventType;
use serde::{Deserialize, Serialize};
use workload_contract::loadgen;
use workload_contract::loadgen::report::TimelineRow;

/// All data of one run; times are seconds from the load start.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunData {
    /// Wall-clock time of the load start (Unix ms); every `t_s` counts from it.
    pub load_started_unix_ms: u64,
    /// Seconds of load actually run.
    pub duration_s: f64,
    pub generators: Vec<GeneratorRun>,
    pub pods: Vec<PodRun>,
    pub events: Vec<RecordedEvent>,
    /// Requests the load balancer sent to each pod, in short time buckets (empty without one).
    #[serde(default)]
    pub lb: Vec<LbBucket>,
    /// When each pod joined or left the load balancer's routable targets, in time order
    /// (empty without one).
    #[serde(default)]
    pub lb_routable: Vec<LbRoutable>,
    /// The load balancer's own accounting of each pod over the whole run (empty without one).
    #[serde(default)]
    pub lb_accounts: BTreeMap<String, LbAccount>,
    /// Pods that exited during the run without reporting their sidecar's final counters
    /// (killed at the end of their grace period): their last sample may miss what arrived
    /// after it.
    #[serde(default)]
    pub counters_cut: BTreeSet<String>,
}

/// What the load balancer counted for one pod over the whole run:
/// `sent = responses + clientClosed + inFlight`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LbAccount {
    /// Requests it sent (tried to send) to the pod.
    pub sent: u64,
    /// Responses its clients got for them, relayed from the pod or its own 502/504.
    pub responses: u64,
    /// Of those, the ones it generated itself (the pod did not answer them).
    pub own_errors: u64,
    /// Requests whose client went away before a response head.
    pub client_closed: u64,
    /// Still without a finished response when the counts were read.
    pub in_flight: u64,
}

/// A pod became routable at the load balancer (its target healthy) or stopped being so.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LbRoutable {
    pub pod: String,
    pub t_s: f64,
    pub routable: bool,
}

/// Requests a load balancer sent to one pod during `[t_s, t_s + width_s)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LbBucket {
    pub pod: String,
    pub t_s: f64,
    pub width_s: f64,
    pub requests: u64,
    /// Of those, the ones that failed (502/503/504 from the load balancer or a 5xx answer).
    pub failed: u64,
}

/// One load generator: where it ran and its report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GeneratorRun {
    pub name: String,
    pub zone: String,
    /// The generator's loadgen report, as it wrote it.
    pub report: loadgen::Report,
}

/// One pod and its sidecar's metrics sampled over time.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PodRun {
    pub name: String,
    pub node: String,
    pub zone: String,
    pub max_concurrency: u64,
    pub samples: Vec<PodSample>,
}

/// A scrape of one sidecar (counters are cumulative since the pod started). Written to
/// `timeline.jsonl` in camelCase like `summary.json` (`tS`, `inFlight`); the snake_case names
/// of timelines written before (`t_s`, `in_flight`) are read too.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSample {
    #[serde(rename = "tS", alias = "t_s")]
    pub t_s: f64,
    /// In the Service's endpoints (ready) at this moment.
    pub ready: bool,
    #[serde(alias = "in_flight")]
    pub in_flight: u64,
    #[serde(alias = "queue_depth")]
    pub queue_depth: u64,
    /// Requests that reached the sidecar (arrivals), cumulative.
    #[serde(default)]
    pub received: u64,
    pub admitted: u64,
    #[serde(alias = "rejected_queue_full")]
    pub rejected_queue_full: u64,
    #[serde(alias = "rejected_queue_timeout")]
    pub rejected_queue_timeout: u64,
}

impl PodSample {
    /// A sample from one scrape of the pod's sidecar (`None`: no sidecar or no answer, so
    /// every counter reads 0).
    pub fn scraped(
        t_s: f64,
        ready: bool,
        metrics: Option<workload_contract::sidecar::SidecarMetrics>,
    ) -> Self {
        let m = metrics.unwrap_or_default();
        Self {
            t_s,
            ready,
            in_flight: m.in_flight,
            queue_depth: m.queue_depth,
            received: m.received,
            admitted: m.admitted,
            rejected_queue_full: m.rejected_queue_full,
            rejected_queue_timeout: m.rejected_queue_timeout,
        }
    }
}

/// Something the control plane (or the harness) did or saw, recorded at `t_s` (`tS` in
/// `timeline.jsonl`; `t_s` of older timelines is read too).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedEvent {
    #[serde(rename = "tS", alias = "t_s")]
    pub t_s: f64,
    #[serde(flatten)]
    pub kind: EventKind,
}

/// The fields are camelCase in `timeline.jsonl` (`forZones`, `readyPods`); the snake_case
/// names of older timelines are read too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "event",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum EventKind {
    /// A timeline action was applied.
    Action {
        name: Option<String>,
        description: String,
    },
    /// A Kubernetes Event as the controller would record it.
    KubeEvent {
        #[serde(rename = "type")]
        kind: EventType,
        reason: String,
        message: String,
        object: String,
    },
    /// The EndpointSlice's hints changed: whether enabled, and pod → forZones.
    Hints {
        enabled: bool,
        #[serde(alias = "for_zones")]
        for_zones: BTreeMap<String, Vec<String>>,
    },
    /// Which pods kube-proxy in `zone` would send new connections to.
    Reachability {
        zone: String,
        pods: Vec<String>,
        #[serde(alias = "ready_pods")]
        ready_pods: usize,
    },
    /// A pod entered or left the Service's ready endpoints.
    Endpoint { pod: String, ready: bool },
    /// When a pod left the ready endpoints: the connections kube-proxy (the local target's
    /// forwarders) still held open to it, which keep their backend.
    Connections { pod: String, open: u64 },
    /// A pod was created (scheduled) or deleted.
    Pod {
        pod: String,
        node: String,
        zone: String,
        created: bool,
    },
    /// A step of a pod's termination.
    Termination {
        pod: String,
        stage: TerminationStage,
    },
    /// A Deployment rollout started or completed.
    Rollout { revision: u32, stage: RolloutStage },
    /// One HPA sync: replicas before, the decision, and both sides' request rates. The
    /// destination side is the sum over the pods the HPA counts (`destinationByPod`, each
    /// pod's processed requests per second; recorded where the target knows them).
    Autoscaler {
        current: u32,
        desired: u32,
        #[serde(alias = "source_rps")]
        source_rps: f64,
        #[serde(alias = "destination_rps")]
        destination_rps: f64,
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        destination_by_pod: BTreeMap<String, f64>,
    },
    /// An ingress replica's HAProxy took a configuration: how (started, reloaded, restarted,
    /// or runtime-API slot updates), why, and the servers it lists in order (pod names; for
    /// slots, the filled slots in slot order).
    Ingress {
        replica: u32,
        change: IngressChange,
        cause: IngressCause,
        servers: Vec<String>,
    },
    /// Free text from the harness (warnings, notes).
    Note { message: String },
}

/// How an ingress replica's HAProxy took its new configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum IngressChange {
    /// The first start of the replica.
    Start,
    /// A hitless master-worker reload: a fresh worker takes new connections.
    Reload,
    /// Stop and start (a failed reload, or `restartIngress`): connections drop.
    Restart,
    /// Runtime-API updates of pre-allocated server slots (v0.16); no new process.
    RuntimeApi,
}

/// What made the controller reconfigure a replica.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum IngressCause {
    /// The deployment started the replica.
    Deploy,
    /// The Service's ready endpoints changed.
    Endpoints,
    /// An unrelated configuration rewrite (`ingress.churn.rewriteInterval`).
    Rewrite,
    /// A timeline action (`reloadIngress`, `restartIngress`).
    Action,
    /// A reload failed (`ingress.churn.reloadFailureRate`), so the controller restarted it.
    ReloadFailed,
}

/// A step of a pod's termination, in the order they happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TerminationStage {
    /// Deleted: it left the ready endpoints, termination begins.
    Deleted,
    /// SIGTERM was sent (after the preStop hook).
    Sigterm,
    /// SIGKILL was sent: the grace period ran out.
    Sigkill,
    /// Its processes are gone; it left the EndpointSlice.
    Exited,
}

/// The two moments of a Deployment rollout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RolloutStage {
    Started,
    Complete,
}

impl RunData {
    /// Seconds in the run, rounded up: the length of per-second series.
    pub fn seconds(&self) -> usize {
        self.duration_s.ceil().max(0.0) as usize
    }

    /// Each generator's timeline rows with their second index on the run's clock. Rows from
    /// before the load start (a generator's warm-up) are left out.
    pub fn load_seconds(&self) -> impl Iterator<Item = (&GeneratorRun, usize, &TimelineRow)> {
        self.generators.iter().flat_map(move |g| {
            let offset_ms = g.report.started_at_unix_ms as i64 - self.load_started_unix_ms as i64;
            let offset = (offset_ms as f64 / 1000.0).round() as i64;
            g.report.timeline.iter().filter_map(move |row| {
                let second = offset + row.t as i64;
                usize::try_from(second).ok().map(|s| (g, s, row))
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The typed stages and event types write the same JSON the strings did (timeline.jsonl).
    #[test]
    fn typed_events_keep_their_json() {
        let cases = [
            (
                EventKind::Termination {
                    pod: "pod-1".into(),
                    stage: TerminationStage::Sigkill,
                },
                r#"{"tS":1.5,"event":"termination","pod":"pod-1","stage":"sigkill"}"#,
            ),
            (
                EventKind::Rollout {
                    revision: 2,
                    stage: RolloutStage::Complete,
                },
                r#"{"tS":1.5,"event":"rollout","revision":2,"stage":"complete"}"#,
            ),
            (
                EventKind::KubeEvent {
                    kind: EventType::Warning,
                    reason: "FailedPreStopHook".into(),
                    message: "m".into(),
                    object: "pod/pod-1".into(),
                },
                r#"{"tS":1.5,"event":"kubeEvent","type":"Warning","reason":"FailedPreStopHook","message":"m","object":"pod/pod-1"}"#,
            ),
        ];
        for (kind, json) in cases {
            let event = RecordedEvent { t_s: 1.5, kind };
            assert_eq!(serde_json::to_string(&event).unwrap(), json);
            assert_eq!(serde_json::from_str::<RecordedEvent>(json).unwrap(), event);
        }
    }

    /// One convention with summary.json (camelCase, `tS`), and timelines written before it
    /// (snake_case, `t_s`) still read.
    #[test]
    fn fields_are_camel_case_and_old_snake_case_timelines_still_read() {
        let event = RecordedEvent {
            t_s: 2.0,
            kind: EventKind::Reachability {
                zone: "a".into(),
                pods: vec!["pod-0".into()],
                ready_pods: 3,
            },
        };
        let json = r#"{"tS":2.0,"event":"reachability","zone":"a","pods":["pod-0"],"readyPods":3}"#;
        assert_eq!(serde_json::to_string(&event).unwrap(), json);
        let old =
            r#"{"t_s":2.0,"event":"reachability","zone":"a","pods":["pod-0"],"ready_pods":3}"#;
        assert_eq!(serde_json::from_str::<RecordedEvent>(old).unwrap(), event);
        let old_hpa = r#"{"t_s":1.0,"event":"autoscaler","current":4,"desired":6,"source_rps":200.0,"destination_rps":12.0}"#;
        assert!(matches!(
            serde_json::from_str::<RecordedEvent>(old_hpa).unwrap().kind,
            EventKind::Autoscaler {
                source_rps: 200.0,
                destination_rps: 12.0,
                ..
            }
        ));
        let old_sample = r#"{"t_s":0.5,"ready":true,"in_flight":1,"queue_depth":2,"received":4,"admitted":3,"rejected_queue_full":0,"rejected_queue_timeout":1}"#;
        let sample: PodSample = serde_json::from_str(old_sample).unwrap();
        assert_eq!(
            (
                sample.t_s,
                sample.in_flight,
                sample.queue_depth,
                sample.rejected_queue_timeout
            ),
            (0.5, 1, 2, 1)
        );
        let new = serde_json::to_value(&sample).unwrap();
        assert_eq!(new["tS"], 0.5);
        assert_eq!(new["inFlight"], 1);
        assert_eq!(new["rejectedQueueTimeout"], 1);
    }
}

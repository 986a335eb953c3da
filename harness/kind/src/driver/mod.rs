//! [`KindTarget`]: the engine's `Target` on a kind cluster (or, with
//! `--allow-existing-cluster`, any cluster). Deploy checks the tools, creates or reuses the
//! cluster, loads the images, takes the spare nodes out, applies the Namespace, Service and
//! Deployment (and the load balancer's objects, [`lb`]) by server-side apply and waits for the
//! pods; the watchers ([`crate::watch`]) write the timeline from then on. Load creates the
//! generator pods; actions go to kubelets (`docker exec`), Nodes, the scale subresource, pods
//! and the Deployment's pod template ([`rollout`]), `tc` netem in the node containers
//! ([`zone_network`]); collect reads the generators' reports from their logs, the sidecar
//! samples scraped through the pod proxy and the load balancer's accounting; teardown removes
//! the network faults, deletes the namespace, and the cluster when this run created it.

mod actions;
mod collect;
mod deploy;
mod error;
pub mod ingress;
mod lb;
mod options;
mod pipeline;
mod rollout;
mod sampler;
pub mod zone_network;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use harness_core::clock::{RunClock, TimeScale};
use harness_core::engine::{Capability, Observation, RunContext, Target, TargetError};
use harness_core::measure::{EventKind, RunData};
use harness_core::report::{KubernetesInfo, ModelAgreement};
use harness_core::scenario::model::{Action, Scenario, TimelineEvent};
use harness_core::target_kit::{self, LivePod, LiveRates, Sampler};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::api::KubeApi;
use crate::cluster::ClusterPlan;
use crate::images::Manifest as ImageManifest;
use crate::lifecycle::Cluster;
use crate::manifests::{LOADGEN_METRICS_PORT, durations};
use crate::watch::Recorder;
pub use deploy::client_for;
pub use error::KindError;
pub use options::{
    ClusterMode, ContextError, CreateOptions, KindOptions, choose_mode, is_harness_cluster,
};
use workload_contract::loadgen::LoadgenCounters;

/// The kind target.
pub struct KindTarget {
    options: KindOptions,
    /// A client to use instead of one from the kubeconfig (tests: a scripted API server).
    client: Option<kube::Client>,
    run: Option<Running>,
    /// The last run's model check, kept after teardown for the summary.
    agreement: Option<ModelAgreement>,
    /// The pinned releases and their cache, when not the built-in table and the user's cache.
    third_party: Option<pipeline::ThirdParty>,
    /// How a cluster this target creates is made (node image, name suffix).
    create: CreateOptions,
    /// The Kubernetes the last run's Nodes reported, kept after teardown for the summary.
    kubernetes: Option<KubernetesInfo>,
}

/// Everything a deployed run holds. Fields are set as deploy goes, so teardown undoes exactly
/// what was created even when deploy stopped half-way.
struct Running {
    scenario: Arc<Scenario>,
    ctx: RunContext,
    plan: ClusterPlan,
    images: Option<ImageManifest>,
    /// The cluster's handle (`None` for an existing cluster).
    cluster: Option<Cluster>,
    /// This run created the cluster (so teardown deletes it).
    created_cluster: bool,
    api: Option<KubeApi>,
    /// The run's namespace, once applied (teardown deletes it).
    namespace: Option<String>,
    recorder: Recorder,
    /// Stops watchers and late generators.
    stop: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
    /// The sidecars' samples; the ingress observer stops with it.
    sampler: Sampler,
    /// Generator pods created: generator name → pod name.
    generators: Arc<Mutex<Vec<(String, String)>>>,
    clock: Option<RunClock>,
    deployed_at: tokio::time::Instant,
    live_rates: LiveRates,
    /// The Deployment's revision (1 as deployed, +1 per `rollout`) and the scenario as that
    /// revision runs it.
    revision: (u32, Scenario),
    /// The load balancer's pod, once ready.
    lb_pod: Option<String>,
    /// The ingress controller, once its pods are ready.
    ingress: Option<ingress::IngressRuntime>,
    /// The ingress controller's cluster-scoped objects (teardown deletes them: the namespace's
    /// deletion does not), set before they are applied.
    cluster_objects: Vec<crate::pinned::apply::ObjectRef>,
    /// The `zoneNetwork` faults in place in the node containers (teardown removes them).
    zone_net: Option<zone_network::ZoneNetwork>,
}

impl KindTarget {
    pub fn new(options: KindOptions) -> Self {
        KindTarget {
            options,
            client: None,
            run: None,
            agreement: None,
            third_party: None,
            create: CreateOptions::default(),
            kubernetes: None,
        }
    }

    /// Creates clusters with `create`'s node image and name suffix (`--node-image`, matrix
    /// cells) instead of the pin and `harness-<scenario>`.
    pub fn with_create(mut self, create: CreateOptions) -> Self {
        self.create = create;
        self
    }

    /// The Kubernetes the last run's Nodes reported (`kubernetes` of summary.json).
    pub fn kubernetes(&self) -> Option<&KubernetesInfo> {
        self.kubernetes.as_ref()
    }

    /// Uses the pin `table` (read from `file`) and caches downloads under `cache_dir`, instead
    /// of the built-in table and the user's cache (tests; a freshly locked pin file).
    pub fn with_third_party(
        mut self,
        table: crate::pinned::PinTable,
        file: &str,
        cache_dir: std::path::PathBuf,
    ) -> Self {
        self.third_party = Some(pipeline::ThirdParty {
            table,
            file: file.to_owned(),
            cache_dir,
        });
        self
    }

    /// A target that talks to the API through `client` rather than the kubeconfig's context
    /// (tests).
    pub fn with_client(options: KindOptions, client: kube::Client) -> Self {
        KindTarget {
            client: Some(client),
            ..KindTarget::new(options)
        }
    }

    /// The model check of the last run (`modelAgreement` of summary.json).
    pub fn model_agreement(&self) -> Option<&ModelAgreement> {
        self.agreement.as_ref()
    }

    fn running(&mut self) -> Result<&mut Running, TargetError> {
        self.run
            .as_mut()
            .ok_or_else(|| TargetError::new("using the deployment", KindError::NotDeployed))
    }

    /// Whether node actions are allowed in this run's cluster.
    fn may_touch_nodes(&self) -> bool {
        !matches!(self.options.mode, ClusterMode::Existing { .. }) || self.options.may_touch_nodes
    }
}

impl Running {
    fn api(&self) -> Result<&KubeApi, TargetError> {
        self.api
            .as_ref()
            .ok_or_else(|| TargetError::new("using the API", KindError::NotDeployed))
    }

    fn namespace(&self) -> Result<&str, TargetError> {
        self.namespace
            .as_deref()
            .ok_or_else(|| TargetError::new("using the namespace", KindError::NotDeployed))
    }

    /// Seconds on the run's clock (from deploy until the load starts).
    fn t_s(&self, at: tokio::time::Instant) -> f64 {
        target_kit::run_time(self.clock.as_ref(), self.deployed_at, at)
    }

    /// Requests sent per second and the failed share of those completed since the previous
    /// observation, from the generators' metrics through the pod proxy (as the local target
    /// computes them from the same counters).
    async fn live_rates(&mut self) -> (Option<f64>, Option<f64>) {
        let (Some(api), Some(ns)) = (self.api.clone(), self.namespace.clone()) else {
            return (None, None);
        };
        let pods: Vec<String> = self
            .generators
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(_, pod)| pod.clone())
            .collect();
        let mut now = LoadgenCounters::default();
        for pod in pods {
            let scrape = api.pod_proxy_get(&ns, &pod, LOADGEN_METRICS_PORT, "/metrics");
            if let Ok(Ok(text)) = tokio::time::timeout(Duration::from_secs(1), scrape).await {
                now = now + LoadgenCounters::parse(&text);
            }
        }
        self.live_rates.update(tokio::time::Instant::now(), now)
    }

    /// The kubelet versions of the Nodes the watcher holds, and the node image when this run
    /// created the cluster.
    fn kubernetes(&self) -> KubernetesInfo {
        let image = self
            .created_cluster
            .then_some(self.plan.node_image.as_str());
        crate::node_image::observed(self.recorder.lock().observer.nodes(), image)
    }

    fn agreement(&self) -> Option<ModelAgreement> {
        let recorded = self.recorder.lock();
        let log = recorded.agreement.as_ref()?;
        // Checks count from the recorder's origin; move them onto the run's clock.
        let offset = -self.t_s(recorded.origin);
        Some(log.summary(offset))
    }
}

/// What the kind target refuses at `time_scale` (beyond its capabilities): whole-second fields
/// that do not scale ([`durations::check`]); a node turning NotReady, whose timing is the
/// node lifecycle controller's `node-monitor-grace-period` against the kubelet's lease
/// renewals — a cluster setting not scaled here; an autoscaler at another scale; an ingress
/// controller version kind cannot run (`manifests::ingress::kind_support`) and the ingress
/// churn and actions kind cannot carry out ([`ingress::refuse`]); what `zoneNetwork` cannot be
/// on kind ([`zone_network::refusals`]).
pub fn refusals(scenario: &Scenario, time_scale: TimeScale) -> Vec<String> {
    let mut out: Vec<String> = durations::check(scenario, time_scale)
        .into_iter()
        .map(|e| e.to_string())
        .collect();
    let stops_a_node = scenario
        .timeline
        .iter()
        .any(|e| matches!(e.action, Action::SetNodeReady { ready: false, .. }));
    if stops_a_node && !time_scale.is_real() {
        out.push(format!(
            "setNodeReady: false at time scale {time_scale}: the node turns NotReady after the \
             controller manager's node-monitor-grace-period against the kubelet's 10 s lease \
             renewals, cluster settings the kind target does not scale; run with --time-scale 1"
        ));
    }
    if scenario.service.autoscaler.is_some() && !time_scale.is_real() {
        out.push(format!(
            "service.autoscaler at time scale {time_scale}: the HPA controller's sync period and \
             tolerance are controller-manager flags written into the kind config when the cluster \
             is created, at the scenario's own values; run with --time-scale 1"
        ));
    }
    if let Some(spec) = &scenario.ingress
        && let Err(reason) = crate::manifests::ingress::kind_support(&spec.controller)
    {
        out.push(reason);
    }
    out.extend(ingress::refuse::refusals(scenario, time_scale));
    out.extend(zone_network::refusals(scenario));
    out
}

impl Target for KindTarget {
    fn name(&self) -> &'static str {
        "kind"
    }

    fn capabilities(&self) -> BTreeSet<Capability> {
        let mut can = BTreeSet::from([
            Capability::Sidecar,
            Capability::Sse,
            Capability::ReadinessOnSaturation,
            Capability::TopologyModeAuto,
            Capability::TrafficDistribution,
            Capability::Scale,
            Capability::KillPod,
            Capability::Rollout,
            Capability::LoadBalancer,
            Capability::TimeScale,
            // Refused in an existing cluster by `refusals`, which names the flag.
            Capability::ZoneNetwork,
        ]);
        if matches!(self.options.mode, ClusterMode::Existing { .. }) {
            // Another cluster's nodes are no containers to `docker exec` into: only their Node
            // objects can change, and only when allowed.
            if self.options.may_touch_nodes {
                can.insert(Capability::RelabelNode);
            }
        } else {
            // The autoscaler's pipeline (CRDs, cluster roles, an APIService) is cluster-wide:
            // installed only into clusters the harness creates or reuses. So are the ingress
            // controller's ClusterRole, ClusterRoleBinding and IngressClass (one set per run).
            can.insert(Capability::Autoscaler);
            can.insert(Capability::Ingress);
            can.extend([
                Capability::NodeReadiness,
                Capability::AddNode,
                Capability::RemoveNode,
                Capability::RelabelNode,
                Capability::SetAllocatableCpu,
            ]);
        }
        can
    }

    fn refusals(&self, scenario: &Scenario, time_scale: TimeScale) -> Vec<String> {
        let mut out = refusals(scenario, time_scale);
        if matches!(self.options.mode, ClusterMode::Existing { .. }) {
            out.extend(zone_network::existing_cluster_refusal(scenario));
        }
        out
    }

    /// In a cluster the harness did not create: its API server's version against the floor
    /// and the scenario, before anything is created ([`crate::preflight`]).
    async fn preflight(
        &mut self,
        scenario: &Scenario,
        ctx: &RunContext,
    ) -> Result<Vec<String>, TargetError> {
        let ClusterMode::Existing { context } = &self.options.mode else {
            return Ok(Vec::new());
        };
        let (client, server) = match &self.client {
            Some(client) => (
                client.clone(),
                crate::preflight::Server {
                    url: String::new(),
                    context: context.clone(),
                },
            ),
            None => deploy::client_for(context, self.options.kubeconfig.as_deref())
                .await
                .map_err(|e| TargetError::new("reading the kubeconfig", e))?,
        };
        let version = crate::preflight::server_version(&client, &server)
            .await
            .map_err(|e| TargetError::new("asking the cluster's API server its version", e))?;
        let whose = format!("the cluster of context `{context}`");
        let mut refused = crate::preflight::version_refusals(scenario, version, &whose);
        if self.options.check_access {
            let namespace = crate::manifests::namespace_name(&ctx.run_id);
            let denied =
                crate::access::check(&client, &namespace, &crate::access::required(scenario))
                    .await
                    .map_err(|e| TargetError::new("checking this user's permissions", e))?;
            refused.extend(
                denied
                    .into_iter()
                    .map(|d| format!("--check-access: {whose} denies {d} (namespace {namespace})")),
            );
        }
        Ok(refused)
    }

    async fn deploy(&mut self, scenario: &Scenario, ctx: &RunContext) -> Result<(), TargetError> {
        deploy::deploy(self, scenario, ctx).await
    }

    async fn start_load(&mut self, clock: &RunClock) -> Result<(), TargetError> {
        collect::start_load(self.running()?, clock).await
    }

    async fn act(&mut self, event: &TimelineEvent) -> Result<(), TargetError> {
        let may_touch = self.may_touch_nodes();
        let run = self.running()?;
        run.recorder.record(vec![EventKind::Action {
            name: event.name.clone(),
            description: event.to_string(),
        }]);
        actions::act(run, event, may_touch)
            .await
            .map_err(|e| TargetError::new(format!("applying `{event}`"), e))
    }

    async fn observe(&mut self) -> Result<Observation, TargetError> {
        let run = self.running()?;
        let (achieved_rps, error_rate) = run.live_rates().await;
        let recorded = run.recorder.lock();
        let ready = recorded.observer.ready_pods();
        let pods = recorded
            .observer
            .running_pods()
            .into_iter()
            .filter(|p| !p.deleting)
            .map(|p| LivePod {
                name: p.name.clone(),
                zone: p.zone.clone().unwrap_or_default(),
                ready: ready.contains(&p.name),
            });
        let pods = target_kit::pod_observations(
            pods,
            run.sampler.samples(),
            target_kit::max_concurrency(&run.scenario),
        );
        Ok(Observation {
            pods,
            hints_enabled: recorded.observer.hints_enabled(),
            achieved_rps,
            error_rate,
        })
    }

    async fn collect(&mut self, interrupted: bool) -> Result<RunData, TargetError> {
        let run = self.running()?;
        let data = collect::collect(run, interrupted).await;
        self.agreement = self.run.as_ref().and_then(Running::agreement);
        self.kubernetes = self.run.as_ref().map(Running::kubernetes);
        data
    }

    async fn teardown(&mut self) -> Result<(), TargetError> {
        let Some(run) = self.run.take() else {
            return Ok(());
        };
        if self.agreement.is_none() {
            self.agreement = run.agreement();
        }
        if self.kubernetes.is_none() {
            self.kubernetes = Some(run.kubernetes());
        }
        deploy::teardown(run).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness_core::scenario::load_scenario_str;

    const NODE_STOP: &str = r#"
apiVersion: harness/v1alpha1
kind: Scenario
metadata: { name: t }
cluster:
  zones: [{ name: z, nodes: [{ name: n, allocatableCpu: "4" }, { name: m, allocatableCpu: "4" }] }]
service:
  name: s
  replicas: 2
  serviceTime: { fixed: 5ms }
  readinessProbe: { period: 10s }
load:
  duration: 1m
  generators: [{ name: g, zone: z, rate: 10 }]
timeline:
  - { at: 10s, setNodeReady: { node: n, ready: false } }
"#;

    #[test]
    fn a_node_stop_is_refused_at_a_scaled_time_only() {
        let s = load_scenario_str(NODE_STOP, "t.yaml", None).unwrap();
        assert!(refusals(&s, TimeScale::REAL).is_empty());
        let refused = refusals(&s, TimeScale::new(0.1).unwrap());
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert!(
            refused[0].starts_with("setNodeReady: false at time scale 0.1")
                && refused[0].contains("--time-scale 1"),
            "{refused:?}"
        );
    }

    /// The service's lines of [`NODE_STOP`] with an autoscaler instead of the probe.
    const AUTOSCALER: &str = "  autoscaler:
    minReplicas: 2
    maxReplicas: 4
    metric: { reporter: source, targetAverageValue: 10 }
    syncPeriod: 1500ms
";

    #[test]
    fn an_autoscaler_period_that_is_not_whole_is_refused_not_rounded() {
        // The node stop is not refused at time scale 1; the sync period of 1.5 s is.
        let yaml = NODE_STOP.replace("  readinessProbe: { period: 10s }\n", AUTOSCALER);
        let s = load_scenario_str(&yaml, "t.yaml", None).unwrap();
        let refused = refusals(&s, TimeScale::REAL);
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert!(
            refused[0]
                .starts_with("service.autoscaler.syncPeriod: 1500ms at time scale 1 is 1.5 s"),
            "{refused:?}"
        );
    }
}

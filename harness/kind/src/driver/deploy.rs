//! Deploy and teardown on kind: tools, cluster, images, spare nodes, the run's objects (the
//! load balancer's too), the watchers, and the wait for the Deployment's pods and the load
//! balancer's; and undoing all of it. At a time scale other than 1 the real timings used are a
//! note on the timeline.

use std::sync::Arc;
use std::time::Duration;

use harness_core::engine::{RunContext, TargetError};
use harness_core::measure::EventKind;
use harness_core::scenario::model::Scenario;
use harness_core::target_kit::{LiveRates, Sampler};
use kube::config::{KubeConfigOptions, Kubeconfig};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::ingress::deploy as ingress_deploy;
use super::{ClusterMode, KindError, KindTarget, Running};
use crate::agreement::AgreementLog;
use crate::api::KubeApi;
use crate::cluster::{ClusterPlan, Purpose, names};
use crate::images::Manifest as ImageManifest;
use crate::lifecycle::Cluster;
use crate::manifests::{self, RenderInput};
use crate::observer::Observer;
use crate::watch::{Recorder, WATCH_STOP, spawn_watchers};
use crate::{config, tools};

/// Slack for the pods to become ready, beyond the scenario's own probe timing: image unpacking,
/// scheduling and container start on a kind node.
const READY_SLACK: Duration = Duration::from_secs(120);

fn fail(operation: &str) -> impl FnOnce(KindError) -> TargetError + '_ {
    move |e| TargetError::new(operation, e)
}

/// Runs a blocking `kind`/`docker` step off the async threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, KindError> + Send + 'static,
) -> Result<T, KindError> {
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| {
        Err(KindError::Io {
            context: "a kind/docker step".into(),
            source: std::io::Error::other(e.to_string()),
        })
    })
}

fn read_images(path: &std::path::Path) -> Result<ImageManifest, KindError> {
    let text = std::fs::read_to_string(path).map_err(|e| KindError::Images {
        path: path.to_owned(),
        reason: e.to_string(),
    })?;
    let manifest: ImageManifest = serde_json::from_str(&text).map_err(|e| KindError::Images {
        path: path.to_owned(),
        reason: e.to_string(),
    })?;
    if manifest.schema != ImageManifest::SCHEMA {
        return Err(KindError::Images {
            path: path.to_owned(),
            reason: format!(
                "schema `{}` is not `{}`",
                manifest.schema,
                ImageManifest::SCHEMA
            ),
        });
    }
    Ok(manifest)
}

/// A client for `context` of the kubeconfig (`path`, or kube-rs' default lookup), and the
/// server it talks to.
pub async fn client_for(
    context: &str,
    path: Option<&std::path::Path>,
) -> Result<(kube::Client, crate::preflight::Server), KindError> {
    let err = |reason: String| KindError::Kubeconfig {
        context: context.to_owned(),
        reason,
    };
    let kubeconfig = match path {
        Some(p) => Kubeconfig::read_from(p),
        None => Kubeconfig::read(),
    }
    .map_err(|e| err(e.to_string()))?;
    let options = KubeConfigOptions {
        context: Some(context.to_owned()),
        ..Default::default()
    };
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .map_err(|e| err(e.to_string()))?;
    let server = crate::preflight::Server {
        url: config.cluster_url.to_string(),
        context: context.to_owned(),
    };
    let client = kube::Client::try_from(config).map_err(|e| err(e.to_string()))?;
    Ok((client, server))
}

pub(super) async fn deploy(
    target: &mut KindTarget,
    scenario: &Scenario,
    ctx: &RunContext,
) -> Result<(), TargetError> {
    std::fs::create_dir_all(&ctx.out_dir)
        .map_err(|source| KindError::Io {
            context: format!("creating {}", ctx.out_dir.display()),
            source,
        })
        .map_err(fail("preparing the output directory"))?;
    let options = target.options.clone();
    let plan = ClusterPlan::new(scenario, options.host_cpus)
        .map_err(KindError::from)
        .map_err(fail("planning the kind cluster"))?;
    let run = target.run.insert(Running {
        scenario: Arc::new(scenario.clone()),
        ctx: ctx.clone(),
        plan,
        images: None,
        cluster: None,
        created_cluster: false,
        api: None,
        namespace: None,
        recorder: Recorder::new(Observer::new(scenario.cluster.zones.clone())),
        stop: CancellationToken::new(),
        tasks: Vec::new(),
        sampler: Sampler::default(),
        generators: Default::default(),
        clock: None,
        deployed_at: Instant::now(),
        live_rates: LiveRates::default(),
        revision: (1, scenario.clone()),
        lb_pod: None,
        ingress: None,
        cluster_objects: Vec::new(),
        zone_net: None,
    });

    // Before anything is created: the pinned releases, the tools, the images, the cluster's
    // name.
    super::pipeline::check_pins(scenario, target.third_party.as_ref())?;
    let ingress_image = super::pipeline::ingress_image(scenario, target.third_party.as_ref())?;
    let context = match &options.mode {
        ClusterMode::Existing { context } => context.clone(),
        mode => {
            let tools = options.tools.clone();
            blocking(move || tools::check(&tools).map_err(KindError::from))
                .await
                .map_err(fail("checking kind and docker"))?;
            let name = match mode {
                ClusterMode::Reuse(name) => {
                    run.plan = run
                        .plan
                        .renamed(name)
                        .map_err(KindError::from)
                        .map_err(fail("planning the kind cluster"))?;
                    name.clone()
                }
                _ => {
                    run.plan = target
                        .create
                        .apply(&run.plan)
                        .map_err(KindError::from)
                        .map_err(fail("planning the kind cluster"))?;
                    run.plan.cluster_name.clone()
                }
            };
            run.cluster = Some(
                Cluster::new(&name, options.kubeconfig.clone(), options.tools.clone())
                    .map_err(KindError::from)
                    .map_err(fail("choosing the cluster"))?,
            );
            names::context_name(&name)
        }
    };
    let images = read_images(&options.images).map_err(fail("reading the image list"))?;
    run.images = Some(images.clone());

    if let Some(cluster) = run.cluster.clone() {
        let creating = options.mode == ClusterMode::Create;
        let check = cluster.clone();
        let exists = blocking(move || check.exists().map_err(KindError::from))
            .await
            .map_err(fail("listing kind clusters"))?;
        match (creating, exists) {
            (true, true) => {
                return Err(TargetError::new(
                    "creating the kind cluster",
                    KindError::ClusterExists(cluster.name().to_owned()),
                ));
            }
            (false, false) => {
                return Err(TargetError::new(
                    "reusing the kind cluster",
                    KindError::ClusterMissing(cluster.name().to_owned()),
                ));
            }
            _ => {}
        }
        if creating {
            let path = ctx.out_dir.join("kind-config.yaml");
            let text = config::render(&run.plan, "harness run --target kind");
            std::fs::write(&path, text)
                .map_err(|source| KindError::Io {
                    context: format!("writing {}", path.display()),
                    source,
                })
                .map_err(fail("writing the kind config"))?;
            // Marked before the command: a half-created cluster is deleted too.
            run.created_cluster = true;
            let (create, image) = (cluster.clone(), run.plan.node_image.clone());
            blocking(move || create.create(&path, &image).map_err(KindError::from))
                .await
                .map_err(fail("creating the kind cluster"))?;
        }
        let load = cluster.clone();
        let names: Vec<String> = images.images.iter().map(|i| i.image.clone()).collect();
        blocking(move || load.load_images(&names).map_err(KindError::from))
            .await
            .map_err(fail("loading the images into the kind nodes"))?;
    }

    let client = match &target.client {
        Some(client) => client.clone(),
        None => {
            client_for(&context, options.kubeconfig.as_deref())
                .await
                .map_err(fail("connecting to the cluster"))?
                .0
        }
    };
    let run = target
        .run
        .as_mut()
        .ok_or_else(|| TargetError::new("deploying", KindError::NotDeployed))?;
    let api = KubeApi::new(client.clone());
    run.api = Some(api.clone());

    // Spares wait outside the cluster: kubelet stopped, Node deleted, until `addNode`.
    if let Some(cluster) = run.cluster.clone() {
        for node in run
            .plan
            .nodes
            .iter()
            .filter(|n| n.purpose == Purpose::Spare)
        {
            let (stop, name) = (cluster.clone(), node.kind_name.clone());
            blocking(move || stop.stop_kubelet(&name).map_err(KindError::from))
                .await
                .map_err(fail("taking the spare nodes out"))?;
            api.delete_node(&node.kind_name)
                .await
                .map_err(KindError::from)
                .map_err(fail("taking the spare nodes out"))?;
        }
    }

    // The metrics pipeline before the service (its HPA needs KEDA's CRDs and metrics API).
    super::pipeline::install(run, scenario, &client, target.third_party.as_ref()).await?;

    let manifests = manifests::render(
        scenario,
        &RenderInput {
            run_id: &ctx.run_id,
            images: &images,
            service_host: manifests::service_dns_name(scenario, &ctx.run_id),
            lb_host: manifests::lb_dns_name(&ctx.run_id),
            ingress_host: manifests::ingress_dns_name(&ctx.run_id),
            time_scale: ctx.time_scale,
            seed: ctx.seed,
        },
    )
    .map_err(KindError::from)
    .map_err(fail("rendering the run's objects"))?;
    let ns = manifests::namespace_name(&ctx.run_id);
    // Marked before the call: teardown deletes a namespace whose apply failed half-way.
    run.namespace = Some(ns.clone());
    api.apply_namespace(&manifests.namespace)
        .await
        .map_err(KindError::from)
        .map_err(fail("creating the run's namespace"))?;
    // The model check reads the Service as rendered (its routing is the harness's), so it is
    // in place before the controller's first slice can arrive.
    match AgreementLog::new(&manifests.service) {
        Ok(log) => run.recorder.lock().agreement = Some(log),
        Err(e) => run.recorder.record(vec![EventKind::Note {
            message: format!("no model check: {e}"),
        }]),
    }
    if !ctx.time_scale.is_real() {
        run.recorder.record(vec![EventKind::Note {
            message: manifests::durations::timings(scenario, ctx.time_scale).to_string(),
        }]);
    }
    let rollouts = scenario
        .timeline
        .iter()
        .any(|e| matches!(e.action, harness_core::scenario::model::Action::Rollout(_)));
    run.tasks = spawn_watchers(
        &client,
        &ns,
        &scenario.service.name,
        rollouts,
        &run.recorder,
        &run.stop,
    );
    api.apply_namespaced(&manifests.service)
        .await
        .map_err(KindError::from)
        .map_err(fail("applying the Service"))?;
    if let Some(lb) = &manifests.load_balancer {
        super::lb::apply(&api, lb)
            .await
            .map_err(fail("applying the load balancer"))?;
    }
    let ingress_plan = ingress_image.as_ref().and_then(|image| {
        manifests::ingress::IngressPlan::new(scenario, &ctx.run_id, image.clone(), ctx.time_scale)
    });
    if let Some(plan) = &ingress_plan {
        // Marked before the calls: teardown deletes what a half-done apply created.
        run.cluster_objects = ingress_deploy::cluster_scoped(plan);
        ingress_deploy::apply_objects(&client, plan)
            .await
            .map_err(fail("applying the ingress controller"))?;
    }
    api.apply_namespaced(&manifests.deployment)
        .await
        .map_err(KindError::from)
        .map_err(fail("applying the Deployment"))?;
    let probe = scenario.service.readiness_probe;
    let scale = ctx.time_scale;
    // With a readiness gate a pod is Ready only once the load balancer registered it.
    let registration = scenario
        .load_balancer
        .as_ref()
        .filter(|lb| lb.readiness_gate)
        .map(|lb| {
            lb.registration_lag
                + lb.health_check
                    .as_ref()
                    .map(|hc| hc.interval * hc.healthy_threshold)
                    .unwrap_or_default()
        })
        .unwrap_or_default();
    let limit = READY_SLACK
        + scenario.service.startup.latency
        + scale.wall(probe.timing().ready_after(probe.success_threshold) + probe.period * 2)
        + scale.wall(registration);
    if manifests.load_balancer.is_some() {
        let pod = super::lb::wait_pod(&api, &ns)
            .await
            .map_err(fail("waiting for the load balancer"))?;
        run.lb_pod = Some(pod);
    }
    wait_ready(&api, &ns, scenario, limit)
        .await
        .map_err(fail("waiting for the pods to become ready"))?;
    if let (Some(plan), Some(image)) = (&ingress_plan, &ingress_image) {
        ingress_deploy::wait_ready(
            &api,
            &ns,
            plan.ingress.replicas,
            ingress_deploy::INGRESS_READY_LIMIT,
        )
        .await
        .map_err(fail("waiting for the ingress controller's pods"))?;
        if let Some(runtime) = ingress_deploy::runtime(&run.scenario, ctx, image) {
            // Polled until collect (the sampler's stop), bounded by the run's planned length.
            let load = scenario.load.warmup + scenario.load.duration;
            let until = Instant::now()
                + ctx.time_scale.wall(load).max(load)
                + ingress_deploy::OBSERVE_SLACK;
            run.tasks.push(runtime.spawn_observer(
                &api,
                &run.recorder,
                run.sampler.stop_token(),
                until,
            ));
            run.ingress = Some(runtime);
        }
    }
    super::pipeline::start(run, scenario, ctx, &client).await
}

/// Polls the Deployment until all its replicas are ready (bounded by `limit`).
async fn wait_ready(
    api: &KubeApi,
    ns: &str,
    scenario: &Scenario,
    limit: Duration,
) -> Result<(), KindError> {
    let deadline = Instant::now() + limit;
    let want = scenario.service.replicas;
    loop {
        let deployment = api.get_deployment(ns, &scenario.service.name).await?;
        let ready = deployment
            .status
            .as_ref()
            .and_then(|s| s.ready_replicas)
            .unwrap_or(0);
        let ready = u32::try_from(ready).unwrap_or(0);
        if ready >= want {
            return Ok(());
        }
        if Instant::now() >= deadline {
            let pods = api
                .list_pods(ns, &crate::watch::service_pod_selector())
                .await
                .unwrap_or_default()
                .iter()
                .filter(|p| !pod_ready(p))
                .map(describe_pod)
                .collect();
            return Err(KindError::NotReady {
                ready,
                total: want,
                waited: limit,
                pods,
            });
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

fn pod_ready(pod: &k8s_openapi::api::core::v1::Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// `pod-x: Pending (Unschedulable: 0/5 nodes are available...)`.
pub(super) fn describe_pod(pod: &k8s_openapi::api::core::v1::Pod) -> String {
    let name = pod.metadata.name.as_deref().unwrap_or("?");
    let status = pod.status.clone().unwrap_or_default();
    let phase = status.phase.unwrap_or_else(|| "Unknown".into());
    let why = status
        .conditions
        .unwrap_or_default()
        .into_iter()
        .find(|c| c.status != "True" && c.message.is_some())
        .map(|c| {
            format!(
                " ({}: {})",
                c.reason.unwrap_or(c.type_),
                c.message.unwrap_or_default()
            )
        })
        .or_else(|| {
            status
                .container_statuses
                .unwrap_or_default()
                .into_iter()
                .find_map(|c| c.state.and_then(|s| s.waiting))
                .map(|w| {
                    format!(
                        " ({}: {})",
                        w.reason.unwrap_or_default(),
                        w.message.unwrap_or_default()
                    )
                })
        })
        .unwrap_or_default();
    format!("{name}: {phase}{why}")
}

/// Stops the tasks, removes the `zoneNetwork` faults from the node containers, deletes the
/// namespace, and deletes the cluster when this run created it.
pub(super) async fn teardown(mut run: Running) -> Result<(), TargetError> {
    run.stop.cancel();
    run.sampler.finish(WATCH_STOP).await;
    for task in run.tasks.drain(..) {
        let _ = tokio::time::timeout(WATCH_STOP, task).await;
    }
    let mut failures = Vec::new();
    // First, while the nodes are there: a reused cluster (--cluster) must not keep them.
    if let Err(e) = super::zone_network::cleanup(&mut run).await {
        failures.push(e);
    }
    if let Some(api) = &run.api
        && !run.cluster_objects.is_empty()
        && let Err(e) =
            ingress_deploy::delete_cluster_scoped(api.client(), &run.cluster_objects).await
    {
        failures.push(e);
    }
    if let (Some(api), Some(ns)) = (&run.api, &run.namespace)
        && let Err(e) = api.delete_namespace(ns).await
    {
        failures.push(KindError::from(e));
    }
    if run.created_cluster
        && let Some(cluster) = run.cluster.clone()
        && let Err(e) = blocking(move || cluster.delete().map_err(KindError::from)).await
    {
        failures.push(e);
    }
    match failures.into_iter().next() {
        Some(e) => Err(TargetError::new("cleaning up", e)),
        None => Ok(()),
    }
}

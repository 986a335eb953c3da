//! The Kubernetes objects of one run on the kind target, typed (k8s-openapi) and rendered from
//! the scenario: the run's Namespace, the service's Deployment and Service, the load balancer's
//! objects when the scenario has one ([`loadbalancer`]), and one Pod per load generator. Pure:
//! the images, the run id, the time scale and the addresses generators send to are inputs. The
//! workloads' command lines are [`harness_core::workload_args`], the same the local target
//! starts its processes with; only the addresses differ (fixed container ports here). The
//! scenario's durations go through the run's time scale; whole-second fields that do not scale
//! are refused ([`time`], [`durations`]).
//!
//! Everything carries the run's labels ([`RUN_ID_LABEL`]), every pod meets the Pod Security
//! Standard "restricted" ([`security`]), and images are the content-tagged ones of
//! `target/harness-images.json` with `imagePullPolicy: Never` (they are loaded with
//! `kind load docker-image`, never pulled).

pub mod autoscaler;
mod deployment;
pub mod durations;
mod generators;
pub mod ingress;
pub mod loadbalancer;
mod pod;
mod readiness_gate;
pub mod security;
mod service;
pub mod time;

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr};

use harness_core::clock::TimeScale;
use harness_core::scenario::model::Scenario;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, Pod, Service};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::images::Manifest as ImageManifest;
pub use deployment::{RESTARTED_AT, revised, rollout_patch};
pub use generators::{generator_pod, generator_pod_name};
pub use loadbalancer::LbObjects;
pub use service::traffic_distribution_value;

/// Every object of a run carries the run id under this label: cleanup selects by it.
pub const RUN_ID_LABEL: &str = "harness/run-id";
/// The scenario's name.
pub const SCENARIO_LABEL: &str = "harness/scenario";
/// `service` or `generator`.
pub const ROLE_LABEL: &str = "harness/role";
/// The generator's name on its pod.
pub const GENERATOR_LABEL: &str = "harness/generator";
/// The service's pods are selected by this label (the service name).
pub const APP_LABEL: &str = "app.kubernetes.io/name";
/// Pod Security Admission: the namespace enforces the "restricted" standard.
pub const POD_SECURITY_ENFORCE: &str = "pod-security.kubernetes.io/enforce";
/// The field manager of every server-side apply.
pub const FIELD_MANAGER: &str = "harness";

/// flagsvc listens here in the pod (the sidecar, when there is one, is its only client).
pub const FLAGSVC_PORT: u16 = 8080;
/// The sidecar's traffic port (the Service's target port when there is a sidecar).
pub const SIDECAR_PORT: u16 = 8081;
/// The sidecar's admin port: `/metrics`, scraped through the API server's pod proxy.
pub const SIDECAR_ADMIN_PORT: u16 = 9090;
/// loadgen's metrics port.
pub const LOADGEN_METRICS_PORT: u16 = 9091;
/// The Service's port.
pub const SERVICE_PORT: u16 = 80;

/// What the objects are rendered from besides the scenario.
#[derive(Debug, Clone)]
pub struct RenderInput<'a> {
    /// The run id (a label value: `[a-z0-9-]`, at most 63 characters).
    pub run_id: &'a str,
    /// The images to run.
    pub images: &'a ImageManifest,
    /// Where generators send: the Service's ClusterIP once it is known, or its DNS name for a
    /// dry run (`flagsvc.NAMESPACE.svc.cluster.local`).
    pub service_host: String,
    /// Where generators `via: loadBalancer` send: the load balancer's Service ClusterIP once it
    /// is known, or its DNS name for a dry run (`loadbalancer.NAMESPACE.svc.cluster.local`).
    pub lb_host: String,
    /// Where generators `via: ingress` send: the ingress controller's Service (its ClusterIP at
    /// run time, [`ingress_dns_name`] in plans).
    pub ingress_host: String,
    /// The run's time scale: the scenario's durations are scaled into the objects.
    pub time_scale: TimeScale,
    /// The run's seed (each generator gets `seed + 1000 + index`, as on the local target).
    pub seed: u64,
}

/// Why the objects cannot be rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ManifestError {
    #[error(
        "no image for workload `{0}` in the image list (target/harness-images.json); run `make images` (or `harness images`) first"
    )]
    NoImage(String),
    #[error(
        "run id `{0}` cannot be a label value or namespace name: use lower-case letters, digits and `-`, at most {max} characters",
        max = MAX_RUN_ID
    )]
    BadRunId(String),
    #[error(
        "generator `{generator}`: `{name}` is not a valid pod name (lower-case letters, digits and `-`, at most 63 characters); rename the generator"
    )]
    BadGeneratorName { generator: String, name: String },
    #[error(transparent)]
    Time(#[from] Box<time::UnscalableSeconds>),
}

/// Longest run id: the namespace `harness-<run id>` stays within 63 characters.
pub const MAX_RUN_ID: usize = 63 - "harness-".len();

/// Every object of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifests {
    pub namespace: Namespace,
    pub deployment: Deployment,
    pub service: Service,
    /// The load balancer's objects, when the scenario has one.
    pub load_balancer: Option<LbObjects>,
    /// One per scenario generator, in scenario order.
    pub generators: Vec<Pod>,
}

/// The run's namespace name.
pub fn namespace_name(run_id: &str) -> String {
    format!("harness-{run_id}")
}

/// The DNS name of the scenario's Service in the run's namespace.
pub fn service_dns_name(scenario: &Scenario, run_id: &str) -> String {
    format!(
        "{}.{}.svc.cluster.local",
        scenario.service.name,
        namespace_name(run_id)
    )
}

/// The DNS name of the ingress controller's Service in the run's namespace.
pub fn ingress_dns_name(run_id: &str) -> String {
    format!(
        "{}.{}.svc.cluster.local",
        ingress::CONTROLLER,
        namespace_name(run_id)
    )
}

/// The DNS name of the load balancer's Service in the run's namespace.
pub fn lb_dns_name(run_id: &str) -> String {
    format!(
        "{}.{}.svc.cluster.local",
        loadbalancer::LB_NAME,
        namespace_name(run_id)
    )
}

/// A label selector string selecting everything of run `run_id`.
pub fn run_selector(run_id: &str) -> String {
    format!("{RUN_ID_LABEL}={run_id}")
}

/// `0.0.0.0:port`: a container listens on every pod address.
pub(crate) fn any_addr(port: u16) -> SocketAddr {
    SocketAddr::from((Ipv4Addr::UNSPECIFIED, port))
}

/// `127.0.0.1:port`: a container of the same pod.
pub(crate) fn local_addr(port: u16) -> SocketAddr {
    SocketAddr::from((Ipv4Addr::LOCALHOST, port))
}

fn check_run_id(run_id: &str) -> Result<(), ManifestError> {
    let ok = !run_id.is_empty()
        && run_id.len() <= MAX_RUN_ID
        && run_id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !run_id.starts_with('-')
        && !run_id.ends_with('-');
    if ok {
        Ok(())
    } else {
        Err(ManifestError::BadRunId(run_id.to_owned()))
    }
}

/// The labels every object of the run carries.
pub fn run_labels(scenario: &Scenario, run_id: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (RUN_ID_LABEL.to_owned(), run_id.to_owned()),
        (SCENARIO_LABEL.to_owned(), scenario.name.clone()),
    ])
}

pub(crate) fn image_of(images: &ImageManifest, workload: &str) -> Result<String, ManifestError> {
    images
        .image(workload)
        .map(|i| i.image.clone())
        .ok_or_else(|| ManifestError::NoImage(workload.to_owned()))
}

/// The run's Namespace: labelled with the run id, enforcing Pod Security "restricted".
pub fn namespace(scenario: &Scenario, run_id: &str) -> Namespace {
    let mut labels = run_labels(scenario, run_id);
    labels.insert(POD_SECURITY_ENFORCE.to_owned(), "restricted".to_owned());
    Namespace {
        metadata: ObjectMeta {
            name: Some(namespace_name(run_id)),
            labels: Some(labels),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// Renders every object of the run.
pub fn render(scenario: &Scenario, input: &RenderInput<'_>) -> Result<Manifests, ManifestError> {
    check_run_id(input.run_id)?;
    let generators = scenario
        .load
        .generators
        .iter()
        .enumerate()
        .map(|(i, g)| generator_pod(scenario, input, i, g))
        .collect::<Result<_, _>>()?;
    Ok(Manifests {
        namespace: namespace(scenario, input.run_id),
        deployment: deployment::deployment(scenario, input)?,
        service: service::service(scenario, input.run_id),
        load_balancer: loadbalancer::objects(scenario, input)?,
        generators,
    })
}

/// One object as a YAML document (with its `apiVersion` and `kind`).
fn yaml<T: serde::Serialize>(object: &T) -> String {
    // The objects are plain data: serialization cannot fail.
    serde_saphyr::to_string(object).unwrap_or_default()
}

impl Manifests {
    /// The objects in apply order (Namespace, Service, the load balancer's ServiceAccount,
    /// Role, RoleBinding, Service and Deployment, the service's Deployment, generators) as YAML
    /// documents, each with a `# NN-kind-name` comment naming it.
    pub fn documents(&self) -> Vec<(String, String)> {
        let mut docs = vec![
            (
                format!("namespace-{}", name_of(&self.namespace.metadata)),
                yaml(&self.namespace),
            ),
            (
                format!("service-{}", name_of(&self.service.metadata)),
                yaml(&self.service),
            ),
        ];
        if let Some(lb) = &self.load_balancer {
            let name = name_of(&lb.deployment.metadata);
            docs.extend([
                (format!("serviceaccount-{name}"), yaml(&lb.service_account)),
                (format!("role-{name}"), yaml(&lb.role)),
                (format!("rolebinding-{name}"), yaml(&lb.role_binding)),
                (format!("service-{name}"), yaml(&lb.service)),
                (format!("deployment-{name}"), yaml(&lb.deployment)),
            ]);
        }
        docs.push((
            format!("deployment-{}", name_of(&self.deployment.metadata)),
            yaml(&self.deployment),
        ));
        for pod in &self.generators {
            docs.push((format!("pod-{}", name_of(&pod.metadata)), yaml(pod)));
        }
        docs.into_iter()
            .enumerate()
            .map(|(i, (name, text))| (format!("{:02}-{name}", i + 1), text))
            .collect()
    }

    /// Every object in apply order as one multi-document YAML stream.
    pub fn to_yaml(&self) -> String {
        yaml_stream(self.documents())
    }
}

/// Named YAML documents as one stream, each after `---` and a `# name` comment.
fn yaml_stream(documents: impl IntoIterator<Item = (String, String)>) -> String {
    let mut out = String::new();
    for (name, text) in documents {
        out.push_str("---\n# ");
        out.push_str(&name);
        out.push('\n');
        out.push_str(&text);
        if !text.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// Objects (JSON values with `apiVersion` and `kind`, in apply order) as one YAML stream, each
/// named `# NN-kind-name` as in `manifests.yaml`: the autoscaler's and the ingress
/// controller's objects in `harness plan`'s output and the goldens.
pub fn values_to_yaml(objects: &[serde_json::Value]) -> String {
    yaml_stream(
        objects
            .iter()
            .enumerate()
            .map(|(i, o)| (format!("{:02}-{}", i + 1, document_name(o)), yaml(o))),
    )
}

/// `kind-name` in lower case (`scaledobject-flagsvc`).
pub fn document_name(object: &serde_json::Value) -> String {
    format!(
        "{}-{}",
        object["kind"]
            .as_str()
            .unwrap_or("object")
            .to_ascii_lowercase(),
        object["metadata"]["name"].as_str().unwrap_or("unnamed")
    )
}

fn name_of(meta: &ObjectMeta) -> &str {
    meta.name.as_deref().unwrap_or("unnamed")
}

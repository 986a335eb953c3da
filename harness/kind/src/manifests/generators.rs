//! One Pod per scenario generator: loadgen with the local target's arguments
//! ([`harness_core::workload_args::loadgen_args`], its length at the run's time scale), sending
//! to the Service (its ClusterIP, so through the real kube-proxy of the node it runs on) or,
//! `via: loadBalancer`, to the load balancer's Service (`via: ingress`: the ingress controller's
//! Service, whose ClusterIP kube-proxy spreads over the controller's replicas), pinned to its zone by required node
//! affinity on `topology.kubernetes.io/zone`, never restarted. Its report goes to standard
//! output (no `--output-file`: a finished pod's files cannot be read through the API, its log
//! can), and the harness reads it from the pod's log when the pod has finished.

use harness_core::scenario::model::{Generator, Scenario, Via};
use harness_core::workload_args::loadgen_args;
use k8s_openapi::api::core::v1::{Pod, PodSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::pod::{self, base_container, identity_env, node_affinity, port};
use super::{
    GENERATOR_LABEL, LOADGEN_METRICS_PORT, ManifestError, ROLE_LABEL, RenderInput, SERVICE_PORT,
    any_addr, image_of, namespace_name, run_labels,
};
use crate::labels::ZONE_LABEL;

/// The pod name of a generator: `gen-<name>`.
pub fn generator_pod_name(generator: &Generator) -> Result<String, ManifestError> {
    let name = format!("gen-{}", generator.name);
    let ok = name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.ends_with('-');
    if ok {
        Ok(name)
    } else {
        Err(ManifestError::BadGeneratorName {
            generator: generator.name.clone(),
            name,
        })
    }
}

/// loadgen's arguments without `--output-file PATH`, so the JSON report goes to stdout.
fn to_stdout(args: Vec<String>) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut skip = false;
    for arg in args {
        if skip {
            skip = false;
            continue;
        }
        if arg == "--output-file" {
            skip = true;
            continue;
        }
        out.push(arg);
    }
    out
}

/// The Pod of generator `index` of the scenario.
pub fn generator_pod(
    scenario: &Scenario,
    input: &RenderInput<'_>,
    index: usize,
    generator: &Generator,
) -> Result<Pod, ManifestError> {
    let name = generator_pod_name(generator)?;
    let target = match generator.via {
        Via::LoadBalancer => format!("{}:{SERVICE_PORT}", input.lb_host),
        Via::Ingress => format!("{}:{}", input.ingress_host, super::ingress::SERVICE_PORT),
        Via::KubeProxy => format!("{}:{SERVICE_PORT}", input.service_host),
    };
    let args = loadgen_args(
        generator,
        &scenario.load,
        input.time_scale,
        &target,
        Some(any_addr(LOADGEN_METRICS_PORT)),
        "/tmp/report.json".into(),
        input.seed.wrapping_add(1000 + index as u64),
    );
    let mut container = base_container(
        "loadgen",
        image_of(input.images, "loadgen")?,
        to_stdout(args.to_args()),
    );
    container.env = Some(identity_env(Some(&generator.zone)));
    if scenario.service.autoscaler.is_some() {
        // Prometheus scrapes the source side through this named port (a PodMonitor selects
        // declared ports only).
        container.ports = Some(vec![port(
            super::autoscaler::GENERATOR_METRICS_PORT_NAME,
            LOADGEN_METRICS_PORT,
        )]);
    }
    let mut labels = run_labels(scenario, input.run_id);
    labels.insert(ROLE_LABEL.to_owned(), "generator".to_owned());
    labels.insert(GENERATOR_LABEL.to_owned(), generator.name.clone());
    Ok(Pod {
        metadata: ObjectMeta {
            name: Some(name),
            namespace: Some(namespace_name(input.run_id)),
            labels: Some(labels),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers: vec![container],
            restart_policy: Some("Never".to_owned()),
            affinity: node_affinity(vec![(ZONE_LABEL, vec![generator.zone.clone()])]),
            ..pod::spec()
        }),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_goes_to_stdout() {
        let args: Vec<String> = [
            "run",
            "--output",
            "json",
            "--output-file",
            "/tmp/r",
            "--seed",
            "1",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(to_stdout(args), ["run", "--output", "json", "--seed", "1"]);
    }
}

//! Checks across sections: SSE streams need a service that offers SSE, generators that go
//! through the load balancer or the ingress need one.

use super::super::diagnostic::Problems;
use super::super::model::{Load, Service, Via};
use super::super::path::FieldPath;

pub(super) fn check_sse(service: &Service, load: &Load, problems: &mut Problems<'_>) {
    if service.sse.is_some() {
        return;
    }
    let generators = FieldPath::root().key("load").key("generators");
    for (i, generator) in load.generators.iter().enumerate() {
        if generator.sse_streams > 0 {
            problems.at(
                &generators.index(i).key("sseStreams"),
                format!(
                    "generator `{}` opens {} SSE streams but the service offers none; set `service.sse` or use sseStreams: 0",
                    generator.name, generator.sse_streams
                ),
            );
        }
    }
}

/// `has_load_balancer`: the document has a `loadBalancer` section (readable or not).
pub(super) fn check_via(load: &Load, has_load_balancer: bool, problems: &mut Problems<'_>) {
    if has_load_balancer {
        return;
    }
    let generators = FieldPath::root().key("load").key("generators");
    for (i, generator) in load.generators.iter().enumerate() {
        if generator.via == Via::LoadBalancer {
            problems.at(
                &generators.index(i).key("via"),
                format!(
                    "generator `{}` sends via the load balancer, but there is no top-level `loadBalancer`; add one or use `via: kubeProxy`",
                    generator.name
                ),
            );
        }
    }
}

/// `has_ingress`: the document has an `ingress` section (readable or not).
pub(super) fn check_via_ingress(load: &Load, has_ingress: bool, problems: &mut Problems<'_>) {
    if has_ingress {
        return;
    }
    let generators = FieldPath::root().key("load").key("generators");
    for (i, generator) in load.generators.iter().enumerate() {
        if generator.via == Via::Ingress {
            problems.at(
                &generators.index(i).key("via"),
                format!(
                    "generator `{}` sends via the ingress, but there is no top-level `ingress`; add one (e.g. `ingress: {{ version: v0.16, replicas: 2 }}`) or use `via: kubeProxy`",
                    generator.name
                ),
            );
        }
    }
}

//! `harness hints` object loading: the same reader the CLI uses (its source file is compiled in
//! here) decodes the input as Nodes, EndpointSlices and a Service — single objects, Lists,
//! `<Kind>List`s, several documents — and converts what it decodes with `kube_model::openapi`;
//! what converts goes through the EndpointSlice controller's model and kube-proxy's filter.
//! Every refusal names the file (and, where the parser knows it, line and column); nothing
//! panics or hangs.

#![no_main]

#[allow(dead_code)]
#[path = "../../harness/cli/src/commands/hints/load.rs"]
mod load;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::discovery::v1 as discovery;
use kube_model::openapi;
use kube_model::{
    AddressType, ControllerOptions, HintsInput, ProxyNode, ProxyOptions, compute_hints,
    usable_endpoints,
};
use libfuzzer_sys::fuzz_target;

const FILE: &str = "fuzz.yaml";

fn located(e: &anyhow::Error) {
    let text = format!("{e:#}");
    assert!(
        text.starts_with(FILE),
        "an error that does not name the file: {text}"
    );
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let source = load::Source {
        name: FILE.to_owned(),
        text: text.to_owned(),
    };
    let _ = source.kinds();
    let _ = source.locate(1, "cpu", "1");

    let nodes: Vec<kube_model::Node> = match source.objects::<core::Node>() {
        Ok(objects) => objects
            .iter()
            .filter_map(|n| openapi::node(&n.value).ok())
            .collect(),
        Err(e) => {
            located(&e);
            Vec::new()
        }
    };
    let slices: Vec<openapi::OwnedSlice> = match source.objects::<discovery::EndpointSlice>() {
        Ok(objects) => objects
            .iter()
            .enumerate()
            .filter_map(|(i, s)| openapi::slice(&s.value, i).ok())
            .collect(),
        Err(e) => {
            located(&e);
            Vec::new()
        }
    };
    let service = match source.objects::<core::Service>() {
        Ok(objects) => objects
            .first()
            .and_then(|s| openapi::service(&s.value).ok()),
        Err(e) => {
            located(&e);
            None
        }
    };

    let (topology, policy) = openapi::service_routing(service.as_ref());
    for address_type in [AddressType::IPv4, AddressType::IPv6] {
        let group = slices
            .iter()
            .filter(|s| s.address_type == address_type)
            .map(|s| s.slice.clone())
            .collect();
        let outcome = compute_hints(HintsInput {
            nodes: &nodes,
            service_key: "fuzz/svc",
            service: &topology,
            address_type,
            slices: group,
            previously_populated: false,
            options: ControllerOptions::default(),
        });
        let endpoints: Vec<_> = outcome.endpoints().cloned().collect();
        for node in &nodes {
            let client = ProxyNode {
                name: &node.name,
                zone: node.zone.as_deref(),
            };
            let _ = usable_endpoints(&endpoints, client, policy, ProxyOptions::default());
        }
    }
});

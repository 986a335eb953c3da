//! `modelAgreement`: every run on kind checks the local target's model. After each change of
//! the Service's EndpointSlices (the real EndpointSlice controller's output), the Nodes and
//! slices the watchers hold are fed to kube-model (`kube_model::openapi` conversion, then
//! `kube_model::reconcile::compute_hints`, the port of v1.34
//! `staging/src/k8s.io/endpointslice/reconciler.go` and `topologycache/topologycache.go`), with
//! the controller's memory of hints for the Service taken from the slices before the change.
//! The check agrees when the model's reconcile leaves the same hints on (or off) with the same
//! number of ready endpoints hinted for each zone.

use std::collections::BTreeMap;

use harness_core::report::{AgreementCheck, ModelAgreement};
use k8s_openapi::api::core::v1::{Node, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube_model::openapi::{self, ConvertError};
use kube_model::reconcile::{ControllerOptions, HintsInput, ServiceTopology, compute_hints};
use kube_model::{AddressType, Endpoint};

use crate::observer::endpoints_of;

/// Collects the checks of one run.
#[derive(Debug, Clone)]
pub struct AgreementLog {
    service_key: String,
    topology: ServiceTopology,
    changes: Vec<AgreementCheck>,
}

fn per_zone<'a>(endpoints: impl Iterator<Item = &'a Endpoint>) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for zone in endpoints
        .filter(|e| e.controller_ready())
        .flat_map(Endpoint::for_zones)
    {
        *counts.entry(zone.clone()).or_insert(0) += 1;
    }
    counts
}

impl AgreementLog {
    /// For the Service as applied (its annotations and `trafficDistribution` pick the mode).
    pub fn new(service: &Service) -> Result<Self, ConvertError> {
        let info = openapi::service(service)?;
        Ok(AgreementLog {
            service_key: format!("{}/{}", info.namespace, info.name),
            topology: info.topology,
            changes: Vec::new(),
        })
    }

    /// Checks the slices as they are now against the model. `previously_populated`: the slices
    /// carried hints before this change (the controller then remembers hints for the Service).
    pub fn check<'a>(
        &mut self,
        t_s: f64,
        nodes: impl Iterator<Item = &'a Node>,
        slices: impl Iterator<Item = &'a EndpointSlice>,
        previously_populated: bool,
    ) -> Result<&AgreementCheck, ConvertError> {
        let nodes = nodes.map(openapi::node).collect::<Result<Vec<_>, _>>()?;
        let slices: Vec<&EndpointSlice> = slices.collect();
        let mut model_slices = Vec::new();
        for (i, s) in slices.iter().enumerate() {
            let mut owned = openapi::slice(s, i)?.slice;
            // Named by pod, as the observer names them.
            owned.endpoints = endpoints_of(s);
            model_slices.push(owned);
        }
        let real: Vec<Endpoint> = model_slices
            .iter()
            .flat_map(|s| s.endpoints.clone())
            .collect();
        let outcome = compute_hints(HintsInput {
            nodes: &nodes,
            service_key: &self.service_key,
            service: &self.topology,
            address_type: AddressType::IPv4,
            slices: model_slices,
            previously_populated,
            options: ControllerOptions::default(),
        });
        let real_per_zone = per_zone(real.iter());
        let model_per_zone = per_zone(outcome.endpoints());
        let real_hints = real.iter().any(|e| !e.for_zones().is_empty());
        let model_hints = outcome.endpoints().any(|e| !e.for_zones().is_empty());
        self.changes.push(AgreementCheck {
            t_s,
            agreed: real_hints == model_hints && real_per_zone == model_per_zone,
            real_hints,
            model_hints,
            real_per_zone,
            model_per_zone,
            model_events: outcome.events.iter().map(|e| e.reason.clone()).collect(),
            zone_cpu_ratios: outcome.zone_cpu_ratios.clone(),
        });
        Ok(self.changes.last().expect("just pushed"))
    }

    /// The checks so far, with times moved by `offset_s` (deploy-relative → load-relative).
    pub fn summary(&self, offset_s: f64) -> ModelAgreement {
        let changes: Vec<AgreementCheck> = self
            .changes
            .iter()
            .cloned()
            .map(|mut c| {
                c.t_s -= offset_s;
                c
            })
            .collect();
        ModelAgreement {
            checks: changes.len() as u32,
            agreed: changes.iter().filter(|c| c.agreed).count() as u32,
            changes,
        }
    }
}

//! Checks and builds the top-level `ingress`: options only the versions that have them
//! (`sortEndpointsBy` from v0.11, `slotsIncrement` is v0.16's), a positive rewrite interval and
//! a reload-failure rate in [0, 1]; `balanceAlgorithm` (every version) overrides the version's
//! default balance.

use super::super::diagnostic::Problems;
use super::super::format::{
    BalanceAlgorithmSpec, IngressSpec, IngressVersion, SortEndpointsBySpec,
};
use super::super::model::Ingress;
use super::super::path::FieldPath;
use super::positive_duration;
use crate::ingress::{Balance, ControllerSettings, ControllerVersion, SortEndpointsBy};

pub(super) fn build(spec: &IngressSpec, problems: &mut Problems<'_>) -> Ingress {
    let root = FieldPath::root().key("ingress");
    let version = match spec.version {
        IngressVersion::V0_6 => ControllerVersion::V0_6,
        IngressVersion::V0_7 => ControllerVersion::V0_7,
        IngressVersion::V0_8 => ControllerVersion::V0_8,
        IngressVersion::V0_11 => ControllerVersion::V0_11,
        IngressVersion::V0_16 => ControllerVersion::V0_16,
    };
    let sort_endpoints_by = spec.sort_endpoints_by.map(|s| match s {
        SortEndpointsBySpec::Endpoint => SortEndpointsBy::Endpoint,
        SortEndpointsBySpec::Ip => SortEndpointsBy::Ip,
        SortEndpointsBySpec::Name => SortEndpointsBy::Name,
        SortEndpointsBySpec::Random => SortEndpointsBy::Random,
    });
    if sort_endpoints_by.is_some() && version < ControllerVersion::V0_11 {
        problems.at(
            &root.key("sortEndpointsBy"),
            format!(
                "`--sort-endpoints-by` exists from v0.11 (haproxy-ingress PR #678), but `version` is {version}; use `version: v0.11` or later, or `sortBackends` (v0.7 and later)"
            ),
        );
    }
    let (mut rewrite_interval, mut reload_failure_rate) = (None, 0.0);
    if let Some(churn) = &spec.churn {
        let churn_path = root.key("churn");
        rewrite_interval = churn
            .rewrite_interval
            .as_ref()
            .and_then(|text| positive_duration(problems, &churn_path.key("rewriteInterval"), text));
        let rate = churn.reload_failure_rate;
        if !(0.0..=1.0).contains(&rate) || rate.is_nan() {
            problems.at(
                &churn_path.key("reloadFailureRate"),
                format!("must be a share from 0 to 1, found {rate}"),
            );
        } else {
            reload_failure_rate = rate;
        }
    }
    Ingress {
        controller: ControllerSettings {
            version,
            sort_backends: spec.sort_backends,
            sort_endpoints_by,
            slots_increment: spec.slots_increment.max(1),
            balance_algorithm: spec.balance_algorithm.map(|b| match b {
                BalanceAlgorithmSpec::RoundRobin => Balance::RoundRobin,
                BalanceAlgorithmSpec::RandomTwo => Balance::RandomTwo,
            }),
        },
        replicas: spec.replicas.max(1),
        rewrite_interval,
        reload_failure_rate,
    }
}

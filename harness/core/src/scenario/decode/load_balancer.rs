//! Checks and builds the top-level `loadBalancer`: its lags and delay, and a health check with
//! a positive interval, and its zone among those with a worker node.

use super::super::diagnostic::Problems;
use super::super::format::LoadBalancerSpec;
use super::super::model::{Cluster, HealthCheck, LoadBalancer, hops};
use super::super::path::FieldPath;
use super::{duration, listing, positive_duration};

/// `cluster`: the cluster's zones, when they could be read (the `zone` is checked against
/// them).
pub(super) fn build(
    spec: &LoadBalancerSpec,
    cluster: Option<&Cluster>,
    problems: &mut Problems<'_>,
) -> LoadBalancer {
    let root = FieldPath::root().key("loadBalancer");
    if let (Some(zone), Some(cluster)) = (&spec.zone, cluster) {
        let workers = hops::worker_zones(cluster);
        let problem = if !cluster.zones.contains(&zone.0) {
            Some("is not a cluster zone")
        } else if !workers.contains(&zone.0.as_str()) {
            Some("has no worker node to run the load balancer")
        } else {
            None
        };
        if let Some(problem) = problem {
            let workers: Vec<String> = workers.iter().map(|z| (*z).to_owned()).collect();
            problems.at(
                &root.key("zone"),
                format!(
                    "zone `{}` {problem}; zones with a worker node are: {}",
                    zone.0,
                    listing(&workers, "(none)")
                ),
            );
        }
    }
    let mut lag = |key: &str, text| duration(problems, &root.key(key), text).unwrap_or_default();
    let registration_lag = lag("registrationLag", &spec.registration_lag);
    let deregistration_lag = lag("deregistrationLag", &spec.deregistration_lag);
    let deregistration_delay = lag("deregistrationDelay", &spec.deregistration_delay);
    let health_check = spec.health_check.as_ref().map(|check| HealthCheck {
        interval: positive_duration(
            problems,
            &root.key("healthCheck").key("interval"),
            &check.interval,
        )
        .unwrap_or_default(),
        healthy_threshold: check.healthy_threshold,
        unhealthy_threshold: check.unhealthy_threshold,
        path: check.path.0.clone(),
    });
    LoadBalancer {
        registration_lag,
        deregistration_lag,
        deregistration_delay,
        health_check,
        readiness_gate: spec.readiness_gate,
        zone: spec.zone.as_ref().map(|z| z.0.clone()),
    }
}

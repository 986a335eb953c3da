//! Pure models of a Deployment rollout behind a load balancer (incident §4, "Rolling-update 502s
//! behind a load balancer"):
//!
//! - the Deployment controller's rolling update ([`rollout`], built on [`intstr`],
//!   [`deployment_util`], [`rolling`] and the ReplicaSet controller's choice of pods to delete,
//!   [`pod_ranking`]), ported from Kubernetes v1.34;
//! - a pod's termination as the kubelet and the EndpointSlice controller carry it out: endpoint
//!   removal, preStop hook, SIGTERM, SIGKILL and the kubelet's events ([`termination`]), ported
//!   from Kubernetes v1.34;
//! - a load balancer that targets pod IPs directly with registration and deregistration lag,
//!   draining and fail-open health checks ([`load_balancer`]), after the AWS ALB documentation.
//!
//! The incident is the gap between the last two: without a preStop hook SIGTERM comes at the
//! moment the endpoint is removed, but the load balancer keeps routing to the pod until its
//! controller deregisters the target. No I/O: callers feed pods, times and events in and get
//! actions, plans and routing decisions out.

pub mod deployment_util;
pub mod intstr;
pub mod load_balancer;
pub mod pod_ranking;
pub mod rolling;
pub mod rollout;
pub mod termination;

#[cfg(test)]
mod lb_scenario_tests;
#[cfg(test)]
mod scenario_tests;

pub use intstr::{IntOrPercent, IntOrPercentError};
pub use load_balancer::{HealthCheckSpec, LoadBalancer, LoadBalancerSpec, TargetState};
pub use rollout::{
    PodView, Revision, RolloutAction, RolloutSpec, RolloutStatus, is_complete, reconcile, status,
};
pub use termination::{
    KubeletEvent, PreStop, PreStopOutcome, TerminationPlan, TerminationSpec, termination_plan,
};

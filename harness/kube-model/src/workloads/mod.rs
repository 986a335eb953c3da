//! Pure models of a Deployment rollout (incident §4, "Rolling-update 502s behind a load
//! balancer"):
//!
//! - the Deployment controller's rolling update ([`rollout`], built on [`intstr`],
//!   [`deployment_util`], [`rolling`] and the ReplicaSet controller's choice of pods to delete,
//!   [`pod_ranking`]), ported from Kubernetes v1.34;
//! - a pod's termination as the kubelet and the EndpointSlice controller carry it out: endpoint
//!   removal, preStop hook, SIGTERM, SIGKILL and the kubelet's events ([`termination`]), ported
//!   from Kubernetes v1.34.
//!
//! The load balancer of the incident is not Kubernetes: its target group (registration and
//! deregistration lag, draining) lives with it in `workloads/loadbalancer`. The incident is the
//! gap between the two: without a preStop hook SIGTERM comes at the moment the endpoint is
//! removed, but the load balancer keeps routing to the pod until its controller deregisters
//! the target. No I/O: callers feed pods, times and events in and get actions and plans out.

pub mod deployment_util;
pub mod intstr;
pub mod pod_ranking;
pub mod rolling;
pub mod rollout;
pub mod termination;

#[cfg(test)]
mod scenario_tests;

pub use intstr::{IntOrPercent, IntOrPercentError};
pub use rollout::{
    PodView, Revision, RolloutAction, RolloutSpec, RolloutStatus, is_complete, reconcile, status,
};
pub use termination::{
    KubeletEvent, PreStop, PreStopOutcome, TerminationPlan, TerminationSpec, termination_plan,
};

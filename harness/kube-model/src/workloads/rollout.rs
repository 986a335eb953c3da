// Ported from kubernetes/kubernetes v1.34 (release-1.34 line): rolloutRolling of
// pkg/controller/deployment/rolling.go @95f08499d652, calculateStatus of sync.go, the
// ReplicaSet status counts (FilterActivePods, IsPodReady/IsPodAvailable of
// pkg/api/v1/pod/util.go) and getPodsToDelete of pkg/controller/replicaset/replica_set.go.
//! A Deployment rolling update as a state machine over pods: the caller holds the pods, calls
//! [`reconcile`] with the current time, applies the returned actions (creates new pods, marks
//! deleted ones terminating), advances time and calls again.
//!
//! Each pass is upstream's `rolloutRolling`: grow the new ReplicaSet if the surge budget allows
//! ([`RolloutAction::CreateNew`]); if that changed nothing, shrink the old ReplicaSet
//! ([`RolloutAction::DeleteOld`]) — unavailable old pods first, then available ones only while
//! more than `replicas - maxUnavailable` pods stay available. New pods therefore have to become
//! available before old ones go.
//!
//! Model simplifications: one old ReplicaSet; a ReplicaSet's `spec.replicas` is taken to equal
//! its active pods (the caller applies every action before the next pass, so the ReplicaSet
//! controller is always caught up); terminating pods count nowhere but in
//! [`RolloutStatus::terminating_replicas`] — the v1.34 controller does not wait for them, so
//! while old pods terminate the cluster runs more than `replicas + maxSurge` pods; changing
//! `replicas` mid-rollout (upstream's proportional scaling) and pausing are not modelled.

use std::time::Duration;

use super::deployment_util::{
    DeploymentSpecView, DeploymentStatusView, ReplicaSetView, Strategy, deployment_complete,
    max_surge, max_unavailable,
};
use super::intstr::IntOrPercent;
use super::pod_ranking::{RankedPod, RankingOptions, pods_to_delete};
use super::rolling::{NewRsScale, reconcile_new_replica_set, reconcile_old_replica_sets};

/// The Deployment fields a rolling update reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RolloutSpec {
    /// `spec.replicas`.
    pub replicas: i32,
    /// `spec.strategy.rollingUpdate.maxSurge` (API default 25%).
    pub max_surge: IntOrPercent,
    /// `spec.strategy.rollingUpdate.maxUnavailable` (API default 25%).
    pub max_unavailable: IntOrPercent,
    /// `spec.minReadySeconds`: a ready pod counts as available only after this long.
    pub min_ready_seconds: Duration,
}

impl RolloutSpec {
    fn deployment(&self) -> DeploymentSpecView {
        DeploymentSpecView {
            replicas: self.replicas,
            strategy: Strategy::rolling(self.max_surge, self.max_unavailable),
        }
    }

    /// The resolved surge (pods above `replicas` the rollout may run).
    pub fn resolved_max_surge(&self) -> i32 {
        max_surge(&self.deployment())
    }

    /// The resolved unavailability budget.
    pub fn resolved_max_unavailable(&self) -> i32 {
        max_unavailable(&self.deployment())
    }
}

/// Which ReplicaSet a pod belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revision {
    Old,
    New,
}

/// A pod as the rollout sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodView {
    pub name: String,
    pub revision: Revision,
    /// Creation time (the last tie-breaker when choosing pods to delete).
    pub created_at: Duration,
    /// When the `Ready` condition last turned true; `None` while not ready.
    pub ready_since: Option<Duration>,
    /// Has a deletion timestamp.
    pub terminating: bool,
}

impl PodView {
    /// `IsPodAvailable`: ready, and ready for longer than `minReadySeconds` (strictly: upstream
    /// requires `readySince + minReadySeconds` to be before `now`); with 0 ready is enough.
    pub fn is_available(&self, min_ready: Duration, now: Duration) -> bool {
        match self.ready_since {
            None => false,
            Some(since) => min_ready.is_zero() || since + min_ready < now,
        }
    }

    fn active(&self) -> bool {
        !self.terminating
    }
}

/// What the controllers do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RolloutAction {
    /// The new ReplicaSet grows: create this many new pods.
    CreateNew(u32),
    /// The old ReplicaSet shrinks: delete these pods (best candidates first).
    DeleteOld(Vec<String>),
    /// The new ReplicaSet is larger than `replicas`: delete these new pods.
    DeleteNew(Vec<String>),
}

/// `calculateStatus`, counted over active pods (terminating ones apart).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RolloutStatus {
    pub replicas: i32,
    pub updated_replicas: i32,
    pub ready_replicas: i32,
    pub available_replicas: i32,
    /// `replicas - available`, never negative.
    pub unavailable_replicas: i32,
    pub terminating_replicas: i32,
}

fn replica_set(name: &str, pods: &[&PodView], spec: &RolloutSpec, now: Duration) -> ReplicaSetView {
    let available = pods
        .iter()
        .filter(|p| p.is_available(spec.min_ready_seconds, now))
        .count();
    ReplicaSetView::new(name, pods.len() as i32, available as i32)
}

fn active_of(pods: &[PodView], revision: Revision) -> Vec<&PodView> {
    pods.iter()
        .filter(|p| p.revision == revision && p.active())
        .collect()
}

/// The ReplicaSet controller's choice of `count` pods to delete from `pods`. All pods are taken
/// as scheduled and Running with no restarts and one per node, so readiness, ready time and
/// creation time decide.
fn choose_victims(pods: &[&PodView], count: usize, now: Duration) -> Vec<String> {
    let ranked: Vec<RankedPod> = pods
        .iter()
        .map(|p| RankedPod::running(&p.name, p.ready_since, p.created_at, 0))
        .collect();
    pods_to_delete(&ranked, count, now, RankingOptions::default())
        .into_iter()
        .map(|p| p.name)
        .collect()
}

/// One pass of the Deployment controller (plus the ReplicaSet controller's choice of pods).
/// Returns no action when the rollout has to wait (for new pods to become available) or is
/// done.
pub fn reconcile(spec: &RolloutSpec, pods: &[PodView], now: Duration) -> Vec<RolloutAction> {
    let d = spec.deployment();
    let old_pods = active_of(pods, Revision::Old);
    let new_pods = active_of(pods, Revision::New);
    let old_rs = replica_set("old", &old_pods, spec, now);
    let new_rs = replica_set("new", &new_pods, spec, now);
    let all_rss = [old_rs.clone(), new_rs.clone()];

    // maxSurge is always set on a RolloutSpec, so this cannot fail.
    let new_scale =
        reconcile_new_replica_set(&d, &all_rss, &new_rs).unwrap_or(NewRsScale::Unchanged);
    if let NewRsScale::To(target) = new_scale {
        return if target > new_rs.replicas {
            vec![RolloutAction::CreateNew((target - new_rs.replicas) as u32)]
        } else {
            let count = (new_rs.replicas - target) as usize;
            vec![RolloutAction::DeleteNew(choose_victims(
                &new_pods, count, now,
            ))]
        };
    }

    let mut old_rss: Vec<ReplicaSetView> = if old_rs.replicas > 0 {
        vec![old_rs.clone()]
    } else {
        Vec::new()
    };
    let result = reconcile_old_replica_sets(&d, &all_rss, &mut old_rss, &new_rs);
    if !result.scaled() {
        return Vec::new();
    }
    let remaining = old_rss.first().map_or(0, |rs| rs.replicas);
    let count = (old_rs.replicas - remaining) as usize;
    vec![RolloutAction::DeleteOld(choose_victims(
        &old_pods, count, now,
    ))]
}

/// `calculateStatus` over the pods.
pub fn status(spec: &RolloutSpec, pods: &[PodView], now: Duration) -> RolloutStatus {
    let active: Vec<&PodView> = pods.iter().filter(|p| p.active()).collect();
    let ready = active.iter().filter(|p| p.ready_since.is_some()).count() as i32;
    let available = active
        .iter()
        .filter(|p| p.is_available(spec.min_ready_seconds, now))
        .count() as i32;
    let replicas = active.len() as i32;
    RolloutStatus {
        replicas,
        updated_replicas: active
            .iter()
            .filter(|p| p.revision == Revision::New)
            .count() as i32,
        ready_replicas: ready,
        available_replicas: available,
        unavailable_replicas: (replicas - available).max(0),
        terminating_replicas: pods.iter().filter(|p| p.terminating).count() as i32,
    }
}

/// `DeploymentComplete`: all `replicas` pods are new and available and no old pod is active.
pub fn is_complete(spec: &RolloutSpec, pods: &[PodView], now: Duration) -> bool {
    let s = status(spec, pods, now);
    deployment_complete(
        &spec.deployment(),
        &DeploymentStatusView {
            replicas: s.replicas,
            updated_replicas: s.updated_replicas,
            available_replicas: s.available_replicas,
        },
    )
}

//! The run's self-audit: every accounting invariant the harness can know, checked on the run's
//! own data and on the figures its summary shows, after collecting and before the verdict is
//! trusted. A violated invariant means the measurement is broken, not the system under test:
//! the run ends with exit 3 (see `RunOutcome::exit_status`).
//!
//! What is checked (each check names its subject and numbers):
//! - per pod with a sidecar: the answers its callers attribute to it (and the SSE streams it
//!   served) never exceed what arrived at its sidecar; its callers' 503s never exceed its
//!   sidecar's rejections; what arrived is admitted, rejected, still queued or abandoned
//!   (`pods`);
//! - per load generator: attempted = responses + transport errors, its timeline and its
//!   per-pod attribution add up to its totals (`generators`);
//! - per pod at the load balancer: sent = responses + client closed + in flight, and what it
//!   relayed from the pod never exceeds what arrived at the pod's sidecar (`load_balancer`);
//! - per HPA sync: the destination-side rate is the sum over the pods it counted, each of
//!   which existed then (`autoscaler`);
//! - the summary's figures: totals = the sum of the per-pod rows and what no pod was named
//!   for; the traffic matrix = the generators' attributed responses, zone by zone; the
//!   per-second series add up to the totals; pod shares sum to one (`figures`);
//! - bytes and the cross-zone figures: each generator's bytes by second are its bytes by pod;
//!   the traffic matrix's bytes are the generators' of the load phase, zone by zone; the
//!   cross-zone split recounted from the summary's matrix and pod rows agrees, cross-zone +
//!   same-zone = attributed responses, and with what named no pod they are the whole matrix
//!   (responses and bytes); the share and the estimated cost follow from them (`cross_zone`).
//!
//! Counts are exact (tolerance 0): every count is cumulative and the last reading of a pod is
//! its final one (the sampler's round after the load, or the totals a sidecar writes when it
//! exits). Where a final reading is missing (a pod killed at the end of its grace period
//! before it could report) the check is not made, and the audit says so. Rates (the HPA's)
//! are compared within a relative 1e-9.

mod autoscaler;
mod cross_zone;
mod figures;
mod generators;
mod load_balancer;
mod pods;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::measure::RunData;
use crate::report::Summary;

/// Whether an invariant held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum AuditStatus {
    Held,
    Violated,
    /// The data needed is not there (the reason is in `note`).
    NotChecked,
}

/// One invariant on one subject.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditCheck {
    /// The invariant's name (e.g. `answersWithinArrivals`).
    pub invariant: String,
    /// What it is about: `pod-3`, `generator ingress-2a`, `HPA sync at 31.0s`, `summary`.
    pub subject: String,
    /// The invariant with its numbers, e.g. `answered 488 + streams 0 ≤ arrived 475`.
    pub statement: String,
    /// The numbers by name.
    pub values: BTreeMap<String, f64>,
    pub status: AuditStatus,
    /// Why a check was not made, or the tolerance it allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The self-audit of one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Audit {
    /// No invariant was violated.
    pub held: bool,
    /// Checks made (held or violated).
    pub checked: u32,
    pub violated: u32,
    /// Checks that could not be made, each with its reason.
    pub not_checked: u32,
    /// Every check, violations first.
    pub checks: Vec<AuditCheck>,
}

impl Audit {
    fn from_checks(mut checks: Vec<AuditCheck>) -> Audit {
        checks.sort_by_key(|c| match c.status {
            AuditStatus::Violated => 0,
            AuditStatus::NotChecked => 1,
            AuditStatus::Held => 2,
        });
        let count = |s: AuditStatus| checks.iter().filter(|c| c.status == s).count() as u32;
        let violated = count(AuditStatus::Violated);
        Audit {
            held: violated == 0,
            checked: count(AuditStatus::Held) + violated,
            violated,
            not_checked: count(AuditStatus::NotChecked),
            checks,
        }
    }

    /// The violated checks.
    pub fn violations(&self) -> impl Iterator<Item = &AuditCheck> {
        self.checks
            .iter()
            .filter(|c| c.status == AuditStatus::Violated)
    }

    /// One line: `audit: 212 checks held` or `audit: 2 of 212 checks VIOLATED: ...`.
    pub fn headline(&self) -> String {
        if self.held {
            let mut line = format!("audit: all {} checks held", self.checked);
            if self.not_checked > 0 {
                let _ = write!(line, " ({} could not be made)", self.not_checked);
            }
            line
        } else {
            let first: Vec<String> = self
                .violations()
                .take(3)
                .map(|c| format!("{} {}: {}", c.subject, c.invariant, c.statement))
                .collect();
            format!(
                "audit: {} of {} checks VIOLATED — the measurement is broken, not the system under test: {}{}",
                self.violated,
                self.checked,
                first.join("; "),
                if self.violated > 3 { "; …" } else { "" }
            )
        }
    }
}

/// Audits `run` and the figures of its `summary`.
pub fn audit(run: &RunData, summary: &Summary) -> Audit {
    let mut checks = Vec::new();
    checks.extend(pods::checks(run, summary));
    checks.extend(generators::checks(run));
    checks.extend(load_balancer::checks(run, summary));
    checks.extend(autoscaler::checks(run));
    checks.extend(figures::checks(run, summary));
    checks.extend(cross_zone::checks(run, summary));
    Audit::from_checks(checks)
}

/// Builds checks: `subject`, `invariant` and the numbers by name.
pub(crate) struct Check {
    invariant: &'static str,
    subject: String,
    values: Vec<(&'static str, f64)>,
}

impl Check {
    pub(crate) fn new(invariant: &'static str, subject: impl Into<String>) -> Self {
        Check {
            invariant,
            subject: subject.into(),
            values: Vec::new(),
        }
    }

    pub(crate) fn value(mut self, name: &'static str, v: impl Into<f64>) -> Self {
        self.values.push((name, v.into()));
        self
    }

    fn finish(self, statement: String, status: AuditStatus, note: Option<String>) -> AuditCheck {
        AuditCheck {
            invariant: self.invariant.to_owned(),
            subject: self.subject,
            statement,
            values: self
                .values
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
            status,
            note,
        }
    }

    /// Held when `ok`.
    pub(crate) fn expect(self, ok: bool, statement: String) -> AuditCheck {
        let status = if ok {
            AuditStatus::Held
        } else {
            AuditStatus::Violated
        };
        self.finish(statement, status, None)
    }

    /// Not made, for `reason`.
    pub(crate) fn skip(self, statement: String, reason: impl Into<String>) -> AuditCheck {
        self.finish(statement, AuditStatus::NotChecked, Some(reason.into()))
    }
}

#[cfg(test)]
mod tests;

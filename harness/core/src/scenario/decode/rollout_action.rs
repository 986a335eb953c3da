//! Checks and builds a `rollout` timeline action: exactly one of `restart: true` and a
//! non-empty `set`, and a new revision Kubernetes would accept (its `preStop` sleep no longer
//! than its grace period, given the settings earlier rollouts left).

use super::super::diagnostic::Problems;
use super::super::format::{PreStopChangeSpec, RolloutActionSpec, RolloutSetSpec};
use super::super::model::{PreStop, RolloutChange, Termination};
use super::super::path::FieldPath;
use super::duration;
use super::lifecycle::{build_pre_stop, sleep_too_long};

/// `path` is the entry's `rollout`; `revision` is the termination settings at that point of
/// the timeline (unknown when `service` could not be read), updated by a `set`.
pub(super) fn build(
    spec: &RolloutActionSpec,
    path: &FieldPath,
    revision: Option<&mut Termination>,
    problems: &mut Problems<'_>,
) -> Option<RolloutChange> {
    match (spec.restart, &spec.set) {
        (Some(true), None) => Some(RolloutChange {
            restart: true,
            drain_delay: None,
            pre_stop: None,
            grace_period: None,
        }),
        (None, Some(set)) => build_set(set, &path.key("set"), revision, problems),
        (Some(false), None) => {
            problems.at(
                &path.key("restart"),
                "`restart: false` rolls out nothing; write `restart: true`, or use `set` to change settings",
            );
            None
        }
        (Some(_), Some(_)) => {
            problems.at(path, "set only one of `restart` and `set`");
            None
        }
        (None, None) => {
            problems.at(
                path,
                "set one of `restart: true` (a new revision with the same settings) or `set` (a new revision with changed settings)",
            );
            None
        }
    }
}

fn build_set(
    spec: &RolloutSetSpec,
    path: &FieldPath,
    revision: Option<&mut Termination>,
    problems: &mut Problems<'_>,
) -> Option<RolloutChange> {
    if spec.drain_delay.is_none() && spec.pre_stop.is_none() && spec.grace_period.is_none() {
        problems.at(
            path,
            "`set` changes nothing; set at least one of drainDelay, preStop, gracePeriod, or use `restart: true` for a new revision with the same settings",
        );
        return None;
    }
    let drain_delay = spec
        .drain_delay
        .as_ref()
        .map(|text| duration(problems, &path.key("drainDelay"), text));
    let grace_period = spec
        .grace_period
        .as_ref()
        .map(|text| duration(problems, &path.key("gracePeriod"), text));
    let pre_stop = spec.pre_stop.as_ref().map(|change| match change {
        PreStopChangeSpec::Remove => Some(PreStop::None),
        PreStopChangeSpec::Set(hook) => build_pre_stop(hook, &path.key("preStop"), problems),
    });
    let change = RolloutChange {
        restart: false,
        drain_delay: changed(drain_delay)?,
        pre_stop: changed(pre_stop)?,
        grace_period: changed(grace_period)?,
    };
    if let Some(current) = revision {
        let grace = change.grace_period.unwrap_or(current.grace_period);
        let hook = change.pre_stop.clone().unwrap_or(current.pre_stop.clone());
        if let Some(message) = sleep_too_long(&hook, grace) {
            let at = match change.pre_stop {
                Some(PreStop::Sleep(_)) => path.key("preStop").key("sleep"),
                _ => path.key("gracePeriod"),
            };
            problems.at(&at, format!("in the new revision, {message}"));
        }
        current.grace_period = grace;
        current.pre_stop = hook;
    }
    Some(change)
}

/// A field of `set`: `None` when it was written but could not be read, otherwise the change
/// (`Some(None)`: not written, no change).
fn changed<T>(written: Option<Option<T>>) -> Option<Option<T>> {
    written.map_or(Some(None), |value| value.map(Some))
}

//! Checks and builds the lifecycle settings of `service`: the rolling-update strategy (pod
//! counts or percentages, `maxUnavailable` at most 100%, not both zero), termination (exactly
//! one `preStop` kind, a sleep no longer than the grace period) and the app's drain delay.

use std::time::Duration;

use super::super::diagnostic::Problems;
use super::super::format::{AppSpec, IntOrPercentText, PreStopSpec, RolloutSpec, TerminationSpec};
use super::super::model::{App, IntOrPercent, PreStop, RolloutStrategy, Termination};
use super::super::path::FieldPath;
use super::super::units::{self, format_duration};
use super::duration;

pub(super) fn build_rollout(
    spec: &RolloutSpec,
    path: &FieldPath,
    problems: &mut Problems<'_>,
) -> RolloutStrategy {
    let defaults = RolloutStrategy::default();
    let max_surge = int_or_percent(&spec.max_surge, &path.key("maxSurge"), problems);
    let unavailable_path = path.key("maxUnavailable");
    let max_unavailable = int_or_percent(&spec.max_unavailable, &unavailable_path, problems);
    if let Some(IntOrPercent::Percent(p)) = max_unavailable
        && p > 100
    {
        problems.at(
            &unavailable_path,
            format!("maxUnavailable `{p}%` is more than 100% of the pods; Kubernetes rejects it"),
        );
    }
    if let (Some(surge), Some(unavailable)) = (max_surge, max_unavailable)
        && surge.is_zero()
        && unavailable.is_zero()
    {
        problems.at(
            path,
            "maxSurge and maxUnavailable are both 0, so a rollout could never replace a pod (Kubernetes rejects this); allow at least one of them",
        );
    }
    RolloutStrategy {
        max_surge: max_surge.unwrap_or(defaults.max_surge),
        max_unavailable: max_unavailable.unwrap_or(defaults.max_unavailable),
        min_ready: duration(
            problems,
            &path.key("minReadySeconds"),
            &spec.min_ready_seconds,
        )
        .unwrap_or_default(),
    }
}

fn int_or_percent(
    text: &IntOrPercentText,
    path: &FieldPath,
    problems: &mut Problems<'_>,
) -> Option<IntOrPercent> {
    units::parse_int_or_percent(&text.0)
        .map_err(|message| problems.at(path, message))
        .ok()
}

pub(super) fn build_termination(
    spec: &TerminationSpec,
    path: &FieldPath,
    problems: &mut Problems<'_>,
) -> Termination {
    let grace_period = duration(problems, &path.key("gracePeriod"), &spec.grace_period);
    let pre_stop_path = path.key("preStop");
    let pre_stop = spec
        .pre_stop
        .as_ref()
        .and_then(|hook| build_pre_stop(hook, &pre_stop_path, problems))
        .unwrap_or_default();
    if let Some(message) = grace_period.and_then(|grace| sleep_too_long(&pre_stop, grace)) {
        problems.at(&pre_stop_path.key("sleep"), message);
    }
    Termination {
        grace_period: grace_period.unwrap_or(Termination::default().grace_period),
        pre_stop,
        image_has_shell: spec.image_has_shell,
    }
}

/// A `preStop` hook: exactly one of `sleep` and `exec`.
pub(super) fn build_pre_stop(
    spec: &PreStopSpec,
    path: &FieldPath,
    problems: &mut Problems<'_>,
) -> Option<PreStop> {
    match (&spec.sleep, &spec.exec) {
        (Some(sleep), None) => duration(problems, &path.key("sleep"), sleep).map(PreStop::Sleep),
        (None, Some(command)) => Some(PreStop::Exec(command.clone())),
        (Some(_), Some(_)) => {
            problems.at(path, "set only one of `sleep` and `exec`");
            None
        }
        (None, None) => {
            problems.at(
                path,
                "set one of `sleep` or `exec`, or remove `preStop` for no hook",
            );
            None
        }
    }
}

/// The problem with a `preStop` sleep longer than the grace period (Kubernetes rejects it).
pub(super) fn sleep_too_long(pre_stop: &PreStop, grace_period: Duration) -> Option<String> {
    match pre_stop {
        PreStop::Sleep(sleep) if *sleep > grace_period => Some(format!(
            "the preStop sleep ({}) is longer than the grace period ({}); Kubernetes rejects a sleep action longer than terminationGracePeriodSeconds",
            format_duration(*sleep),
            format_duration(grace_period)
        )),
        _ => None,
    }
}

pub(super) fn build_app(spec: &AppSpec, path: &FieldPath, problems: &mut Problems<'_>) -> App {
    App {
        drain_delay: duration(problems, &path.key("drainDelay"), &spec.drain_delay)
            .unwrap_or_default(),
    }
}

//! The autoscaler's part of a kind run: the pinned metrics pipeline installed before the
//! Service (prometheus-operator, then KEDA; [`crate::pinned`]), and once the service's
//! pods are ready the run's Prometheus, PodMonitors and ScaledObject
//! ([`crate::manifests::autoscaler`]) with the watcher that puts the real HPA's status on
//! the timeline ([`crate::autoscaler`]).

use harness_core::engine::{RunContext, TargetError};
use harness_core::measure::EventKind;
use harness_core::scenario::model::Scenario;

use super::{KindError, Running};
use crate::autoscaler::{HpaWatch, spawn_hpa_watcher};
use crate::manifests::time::UnscalableSeconds;
use crate::manifests::{ManifestError, autoscaler, namespace_name};
use crate::pinned::{self, apply, fetch};

/// A pin table and cache given to the target instead of the built-in ones.
#[derive(Debug, Clone)]
pub(super) struct ThirdParty {
    pub table: pinned::PinTable,
    pub file: String,
    pub cache_dir: std::path::PathBuf,
}

fn releases(
    scenario: &Scenario,
    given: Option<&ThirdParty>,
) -> Result<Vec<pinned::LockedPin>, pinned::PinError> {
    match given {
        Some(tp) if scenario.service.autoscaler.is_some() => {
            pinned::required_from(&tp.table, &tp.file)
        }
        _ => pinned::required_releases(scenario),
    }
}

/// Refuses, before anything is created, a scenario whose pinned releases have no hash.
pub(super) fn check_pins(
    scenario: &Scenario,
    given: Option<&ThirdParty>,
) -> Result<(), TargetError> {
    releases(scenario, given).map(|_| ()).map_err(|e| {
        TargetError::new(
            "checking the pinned third-party releases",
            KindError::from(pinned::ThirdPartyError::from(e)),
        )
    })
}

/// The ingress controller's image (`repo:tag@digest`) when the scenario has `ingress`;
/// refuses, before anything is created, an image pin without a digest.
pub(super) fn ingress_image(
    scenario: &Scenario,
    given: Option<&ThirdParty>,
) -> Result<Option<String>, TargetError> {
    super::ingress::required_image(scenario, given.map(|tp| (&tp.table, tp.file.as_str()))).map_err(
        |e| {
            TargetError::new(
                "checking the pinned ingress controller image",
                KindError::from(pinned::ThirdPartyError::from(e)),
            )
        },
    )
}

/// Installs the metrics pipeline when the scenario has an autoscaler.
pub(super) async fn install(
    run: &Running,
    scenario: &Scenario,
    client: &kube::Client,
    given: Option<&ThirdParty>,
) -> Result<(), TargetError> {
    let fail = |e: pinned::ThirdPartyError| {
        TargetError::new(
            "installing the metrics pipeline (prometheus-operator, KEDA)",
            KindError::from(e),
        )
    };
    let pins = releases(scenario, given).map_err(|e| fail(e.into()))?;
    if pins.is_empty() {
        return Ok(());
    }
    let cache = given.map_or_else(fetch::default_cache_dir, |tp| tp.cache_dir.clone());
    let fetcher = fetch::Fetcher::new(cache).map_err(|e| fail(e.into()))?;
    let applied = pinned::install_releases(client, &fetcher, &pins, apply::Waits::default())
        .await
        .map_err(fail)?;
    let versions: Vec<String> = pins
        .iter()
        .map(|p| format!("{} {}", p.name, p.version))
        .collect();
    run.recorder.record(vec![EventKind::Note {
        message: format!(
            "metrics pipeline installed: {} ({} objects, sha256-verified)",
            versions.join(", "),
            applied.len()
        ),
    }]);
    Ok(())
}

/// Applies the run's autoscaler objects and starts the HPA watcher.
pub(super) async fn start(
    run: &mut Running,
    scenario: &Scenario,
    ctx: &RunContext,
    client: &kube::Client,
) -> Result<(), TargetError> {
    let Some(hpa) = scenario.service.autoscaler.as_ref() else {
        return Ok(());
    };
    let refused = |e: Box<UnscalableSeconds>| {
        TargetError::new(
            "rendering the autoscaler's objects",
            KindError::from(ManifestError::from(e)),
        )
    };
    let seconds =
        autoscaler::seconds(hpa, ctx.time_scale).map_err(|mut all| refused(all.swap_remove(0)))?;
    let objects = autoscaler::render(scenario, &ctx.run_id, ctx.time_scale)
        .map_err(refused)?
        .unwrap_or_default();
    let ns = namespace_name(&ctx.run_id);
    run.tasks.push(spawn_hpa_watcher(
        client,
        HpaWatch {
            namespace: ns,
            name: scenario.service.name.clone(),
            reporter: hpa.reporter,
            window_s: autoscaler::rate_window_s(&seconds),
        },
        &run.recorder,
        &run.stop,
    ));
    apply::apply_all(client, &objects).await.map_err(|e| {
        TargetError::new(
            "applying the autoscaler (Prometheus, PodMonitors, ScaledObject)",
            KindError::from(pinned::ThirdPartyError::from(e)),
        )
    })?;
    Ok(())
}

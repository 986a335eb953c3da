//! The real haproxy-ingress controller of a kind run (scenario `ingress`): its image
//! ([`required_image`]), its objects ([`crate::manifests::ingress`]) applied and waited for
//! ([`deploy`]), the observer that turns each replica's HAProxy
//! server list, reloads and restarts into `ingress` events ([`observe`], reading
//! [`stats_csv`] and [`updates`]), the churn that rewrites the controller's ConfigMap and
//! restarts replicas at the scenario's reload-failure rate ([`churn`]), the
//! `reloadIngress`/`restartIngress` actions, and what the kind target refuses of it
//! ([`refuse`]).

pub mod churn;
pub mod deploy;
pub mod intents;
pub mod observe;
pub mod refuse;
pub mod stats_csv;
pub mod updates;

use harness_core::measure::IngressCause;
use harness_core::scenario::model::{Action, IngressReplicas, Scenario};
use k8s_openapi::api::core::v1::ConfigMap;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::KindError;
use crate::api::KubeApi;
use crate::manifests::ingress::kind_support;
use crate::pinned::{PIN_FILE, PinError, PinTable};
use crate::watch::Recorder;
use churn::ChurnSetup;
use intents::Intents;
use observe::ObserveSetup;

/// The controller image a scenario's `ingress` runs on kind (`repo:tag@digest`), from `given`
/// (a pin table and its file name) or the built-in table; `None` without `ingress`, or for a
/// version kind does not run (the target's refusals say why). An image pin without a digest
/// is refused here, before anything is created.
pub fn required_image(
    scenario: &Scenario,
    given: Option<(&PinTable, &str)>,
) -> Result<Option<String>, PinError> {
    let Some(spec) = &scenario.ingress else {
        return Ok(None);
    };
    let Ok(builtin) = kind_support(&spec.controller) else {
        return Ok(None);
    };
    match given {
        Some((table, file)) => table.image(&builtin.name, file)?.require_digest(file),
        None => builtin.require_digest(PIN_FILE),
    }
    .map(Some)
}

/// A run's deployed controller: what the observer reads, what the churn and the actions write.
#[derive(Clone)]
pub struct IngressRuntime {
    pub observe: ObserveSetup,
    /// `None`: no `rewriteInterval`.
    pub churn: Option<ChurnSetup>,
    /// The controller's ConfigMap as deployed (generation 0); the churn and `reloadIngress`
    /// apply it at later generations ([`crate::manifests::ingress::config_map_at`]).
    pub config_map: ConfigMap,
    pub intents: Intents,
}

impl IngressRuntime {
    fn replicas(&self) -> u32 {
        u32::try_from(self.observe.pods.len()).unwrap_or(u32::MAX)
    }

    /// Starts the observer (until `stop` or `until`).
    pub fn spawn_observer(
        &self,
        api: &KubeApi,
        recorder: &Recorder,
        stop: &CancellationToken,
        until: Instant,
    ) -> JoinHandle<()> {
        tokio::spawn(observe::observe(
            api.clone(),
            self.observe.clone(),
            recorder.clone(),
            self.intents.clone(),
            stop.clone(),
            until,
        ))
    }

    /// Starts the churn, when the scenario has a rewrite interval (until `stop` or `until`).
    pub fn spawn_churn(
        &self,
        api: &KubeApi,
        recorder: &Recorder,
        stop: &CancellationToken,
        until: Instant,
    ) -> Option<JoinHandle<()>> {
        let setup = self.churn.clone()?;
        Some(tokio::spawn(churn::churn(
            api.clone(),
            setup,
            self.config_map.clone(),
            self.intents.clone(),
            recorder.clone(),
            stop.clone(),
            until,
        )))
    }

    /// `reloadIngress: {}` rewrites the ConfigMap (every replica reloads); `restartIngress`
    /// deletes the pod(s). `reloadIngress` of one replica is refused before the run
    /// ([`refuse::refusals`]).
    pub async fn act(&self, api: &KubeApi, action: &Action) -> Result<(), KindError> {
        let replicas = self.replicas();
        let chosen = |which: &IngressReplicas| match *which {
            IngressReplicas::All => Ok((0..replicas).collect::<Vec<u32>>()),
            IngressReplicas::One(i) if i < replicas => Ok(vec![i]),
            IngressReplicas::One(i) => Err(KindError::NoIngressReplica {
                replica: i,
                count: replicas,
            }),
        };
        match action {
            Action::ReloadIngress(IngressReplicas::All) => {
                churn::rewrite(
                    api,
                    &self.config_map,
                    &self.intents,
                    replicas,
                    IngressCause::Action,
                )
                .await?;
                Ok(())
            }
            Action::RestartIngress(which) => {
                let pods = chosen(which)?;
                churn::restart(
                    api,
                    &self.observe.namespace,
                    &self.observe.pods,
                    &pods,
                    IngressCause::Action,
                    &self.intents,
                )
                .await?;
                Ok(())
            }
            other => Err(KindError::Unsupported(format!("{other:?} on the ingress"))),
        }
    }
}

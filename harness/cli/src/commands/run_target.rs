//! The target a `harness run` uses (`--target`), behind one type: asked first whether it
//! refuses the scenario ([`RunTarget::check`], before the output directory is claimed or the
//! banner printed), then run ([`RunTarget::run`]), each target adding what only it knows to the
//! summary (the modelled Kubernetes version; kind's model agreement and observed versions).

use harness_core::engine::{self, EngineError, Progress, RunContext, RunOptions, RunOutcome};
use harness_core::report::KubernetesInfo;
use harness_core::scenario::model::Scenario;
use harness_kind::driver::KindTarget;
use harness_local::LocalTarget;
use tokio_util::sync::CancellationToken;

/// The local or the kind target.
pub enum RunTarget {
    Local(Box<LocalTarget>),
    Kind(Box<KindTarget>),
}

impl RunTarget {
    /// `engine::check` on the target: refusals (exit 2) or a failed preflight (exit 3).
    pub async fn check(
        &mut self,
        scenario: &Scenario,
        ctx: &RunContext,
        cancel: &CancellationToken,
    ) -> Result<(), EngineError> {
        match self {
            RunTarget::Local(t) => engine::check(t.as_mut(), scenario, ctx, cancel).await,
            RunTarget::Kind(t) => engine::check(t.as_mut(), scenario, ctx, cancel).await,
        }
    }

    /// `engine::run_checked`, with what the target adds to the summary.
    pub async fn run(
        &mut self,
        scenario: &Scenario,
        ctx: &RunContext,
        options: &RunOptions,
        cancel: CancellationToken,
        progress: &dyn Progress,
    ) -> RunOutcome {
        match self {
            RunTarget::Local(t) => {
                let mut outcome =
                    engine::run_checked(t.as_mut(), scenario, ctx, options, cancel, progress).await;
                outcome.summary.kubernetes =
                    Some(KubernetesInfo::modelled(kube_model::KUBERNETES_VERSION));
                outcome
            }
            RunTarget::Kind(t) => {
                let mut outcome =
                    engine::run_checked(t.as_mut(), scenario, ctx, options, cancel, progress).await;
                outcome.summary.model_agreement = t.model_agreement().cloned();
                outcome.summary.kubernetes = t.kubernetes().cloned();
                outcome
            }
        }
    }
}

//! The `rollout` action on kind: a real Deployment rolling update. The pod template is patched
//! (strategic merge, [`manifests::rollout_patch`]): the `harness.io/restarted-at` annotation
//! for `restart: true` — what `kubectl rollout restart` does with
//! `kubectl.kubernetes.io/restartedAt` — and the new revision's containers and grace period
//! for a changed `drainDelay`, `preStop` or `gracePeriod`. The Deployment controller then rolls
//! it out under the Deployment's own strategy. `rollout` `started` is recorded with the
//! patched generation; the Deployment watcher records `complete` from the controller's status
//! ([`crate::observer::deployment_complete`]).

use harness_core::clock::rfc3339_utc;
use harness_core::scenario::model::RolloutChange;

use super::{KindError, Running};
use crate::manifests::{self, RenderInput};
use crate::observer::PendingRollout;

pub(super) async fn rollout(run: &mut Running, change: &RolloutChange) -> Result<(), KindError> {
    let api = run.api.clone().ok_or(KindError::NotDeployed)?;
    let ns = run.namespace.clone().ok_or(KindError::NotDeployed)?;
    let images = run.images.clone().ok_or(KindError::NotDeployed)?;
    let input = RenderInput {
        run_id: &run.ctx.run_id,
        images: &images,
        service_host: manifests::service_dns_name(&run.scenario, &run.ctx.run_id),
        lb_host: manifests::lb_dns_name(&run.ctx.run_id),
        ingress_host: manifests::ingress_dns_name(&run.ctx.run_id),
        time_scale: run.ctx.time_scale,
        seed: run.ctx.seed,
    };
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis() as u64;
    let (revision, current) = &run.revision;
    let patch = manifests::rollout_patch(current, change, &input, &rfc3339_utc(now_ms))?;
    let next = (revision + 1, manifests::revised(current, change));
    let patched = api
        .patch_deployment(&ns, &run.scenario.service.name, &patch)
        .await?;
    let generation = patched.metadata.generation.unwrap_or(0);
    run.recorder.start_rollout(PendingRollout {
        revision: next.0,
        generation,
    });
    run.revision = next;
    Ok(())
}

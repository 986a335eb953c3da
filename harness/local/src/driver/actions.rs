//! A timeline action on the local target: ingress reloads and restarts go to the replicas;
//! everything else goes through the control-plane model, whose pod operations the pod manager
//! carries out; a `zoneNetwork` change is then handed to the forwarders' faults.

use harness_core::engine::TargetError;
use harness_core::measure::EventKind;
use harness_core::scenario::model::{Action, TimelineEvent};

use super::Running;
use crate::LocalError;
use crate::ingress::ReplicaAction;

/// Applies `event` now.
pub(super) async fn act(run: &mut Running, event: &TimelineEvent) -> Result<(), TargetError> {
    let ingress_action = match event.action {
        Action::ReloadIngress(which) => Some((ReplicaAction::Reload, which)),
        Action::RestartIngress(which) => Some((ReplicaAction::Restart, which)),
        _ => None,
    };
    if let Some((action, which)) = ingress_action {
        run.shared.lock().record(vec![EventKind::Action {
            name: event.name.clone(),
            description: event.to_string(),
        }]);
        let fleet = run.ingress.as_ref().ok_or_else(|| {
            TargetError::new(
                format!("applying `{event}`"),
                LocalError::IngressNotDeployed,
            )
        })?;
        return fleet
            .act(action, which)
            .await
            .map_err(|e| TargetError::new(format!("applying `{event}`"), e));
    }
    let ops = {
        let mut s = run.shared.lock();
        s.model.set_time(run.manager.model_time());
        s.record(vec![EventKind::Action {
            name: event.name.clone(),
            description: event.to_string(),
        }]);
        let applied = s
            .model
            .apply(&event.action)
            .map_err(|e| TargetError::new(format!("applying `{event}`"), e))?;
        s.record(applied.events);
        if matches!(event.action, Action::ZoneNetwork(_)) {
            let faults = s.model.zone_faults().clone();
            s.zone_faults.replace(faults);
        }
        applied.pod_ops
    };
    run.manager.execute(ops).await
}

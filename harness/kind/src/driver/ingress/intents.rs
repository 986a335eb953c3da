//! What the harness did to the ingress replicas and has not yet seen happen: the churn and
//! the actions note here why a replica will reload (a ConfigMap rewrite: `rewrite`, or
//! `reloadIngress`: `action`) or restart (its pod deleted after a failed reload:
//! `reloadFailed`, or `restartIngress`: `action`), and the observer takes the cause when it
//! sees the reload or the new pod. What the observer sees without a note here is the
//! controller's own doing (an endpoint change) or the StatefulSet's.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use harness_core::measure::IngressCause;

#[derive(Debug, Default)]
struct Pending {
    reload: BTreeMap<u32, IngressCause>,
    restart: BTreeMap<u32, IngressCause>,
    /// The ConfigMap's rewrite generation last applied (0: as deployed).
    generation: u64,
}

/// Shared between the churn, the actions and the observer.
#[derive(Debug, Clone, Default)]
pub struct Intents(Arc<Mutex<Pending>>);

impl Intents {
    fn lock(&self) -> MutexGuard<'_, Pending> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The next rewrite generation (each call a new one).
    pub fn next_generation(&self) -> u64 {
        let mut p = self.lock();
        p.generation += 1;
        p.generation
    }

    /// Every one of `replicas` will reload because of `cause`.
    pub fn expect_reloads(&self, replicas: u32, cause: IngressCause) {
        let mut p = self.lock();
        for r in 0..replicas {
            p.reload.insert(r, cause);
        }
    }

    /// `replica`'s pod is being deleted because of `cause`.
    pub fn expect_restart(&self, replica: u32, cause: IngressCause) {
        self.lock().restart.insert(replica, cause);
    }

    /// Why `replica` reloaded: the noted cause, else the controller's reaction to the
    /// Service's endpoints.
    pub fn take_reload(&self, replica: u32) -> IngressCause {
        self.lock()
            .reload
            .remove(&replica)
            .unwrap_or(IngressCause::Endpoints)
    }

    /// Why `replica` restarted: the noted cause, else the StatefulSet's (re)start of it. A
    /// fresh pod has the current configuration, so a reload noted for it is dropped too.
    pub fn take_restart(&self, replica: u32) -> IngressCause {
        let mut p = self.lock();
        p.reload.remove(&replica);
        p.restart.remove(&replica).unwrap_or(IngressCause::Deploy)
    }
}

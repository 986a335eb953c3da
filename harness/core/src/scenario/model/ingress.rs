//! The HAProxy ingress replicas in the typed model: the controller's settings (see
//! `crate::ingress`), how many replicas, and the churn on them.

use std::time::Duration;

use crate::ingress::ControllerSettings;

/// HAProxy ingress replicas in front of the pods, configured by a modelled controller.
#[derive(Debug, Clone, PartialEq)]
pub struct Ingress {
    pub controller: ControllerSettings,
    /// Ingress replicas (one `haproxy` each), at least 1.
    pub replicas: u32,
    /// Unrelated configuration rewrites this often (Kubernetes time); `None`: none.
    pub rewrite_interval: Option<Duration>,
    /// The share of reloads that fail and become restarts, in [0, 1].
    pub reload_failure_rate: f64,
}

/// Which ingress replicas a `reloadIngress` / `restartIngress` acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IngressReplicas {
    All,
    One(u32),
}

//! The HorizontalPodAutoscaler in the typed model, with Kubernetes' `behavior` defaults.

use std::time::Duration;

pub use super::super::format::{PolicyKind, Reporter, SelectPolicy};

/// A HorizontalPodAutoscaler on the service's Deployment, scaling on requests per second per
/// pod. It owns the replica count (no `scale` actions).
#[derive(Debug, Clone, PartialEq)]
pub struct Autoscaler {
    /// At least 1.
    pub min_replicas: u32,
    /// At least `min_replicas`.
    pub max_replicas: u32,
    /// Which side counts the requests; [`Reporter::Destination`] implies a sidecar.
    pub reporter: Reporter,
    /// Target requests per second per pod (> 0).
    pub target_average_value: f64,
    /// How often the controller recomputes (default 15s).
    pub sync_period: Duration,
    /// No scaling while |metric / target − 1| is within it (default 0.1).
    pub tolerance: f64,
    pub behavior: Behavior,
}

/// `spec.behavior`, with Kubernetes' defaults filled in for every omitted direction and field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Behavior {
    pub scale_up: ScalingRules,
    pub scale_down: ScalingRules,
}

impl Default for Behavior {
    fn default() -> Self {
        Self {
            scale_up: ScalingRules::default_scale_up(),
            scale_down: ScalingRules::default_scale_down(),
        }
    }
}

/// `HPAScalingRules` for one direction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScalingRules {
    /// At most one hour.
    pub stabilization_window: Duration,
    pub select_policy: SelectPolicy,
    /// At least one.
    pub policies: Vec<ScalingPolicy>,
}

impl ScalingRules {
    /// Kubernetes' scale-up defaults: no stabilization, `Max` of 4 pods or 100% per 15s.
    pub fn default_scale_up() -> Self {
        Self {
            stabilization_window: Duration::ZERO,
            select_policy: SelectPolicy::Max,
            policies: vec![
                ScalingPolicy::per_15s(PolicyKind::Pods, 4),
                ScalingPolicy::per_15s(PolicyKind::Percent, 100),
            ],
        }
    }

    /// Kubernetes' scale-down defaults: a 300s stabilization window, `Max` of 100% per 15s.
    pub fn default_scale_down() -> Self {
        Self {
            stabilization_window: Duration::from_secs(300),
            select_policy: SelectPolicy::Max,
            policies: vec![ScalingPolicy::per_15s(PolicyKind::Percent, 100)],
        }
    }
}

/// `HPAScalingPolicy`: at most `value` pods (or percent) of change per `period`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScalingPolicy {
    pub kind: PolicyKind,
    /// At least 1.
    pub value: u32,
    /// More than zero, at most 30 minutes.
    pub period: Duration,
}

impl ScalingPolicy {
    fn per_15s(kind: PolicyKind, value: u32) -> Self {
        Self {
            kind,
            value,
            period: Duration::from_secs(15),
        }
    }
}

// Ported from kubernetes/kubernetes v1.34 (release-1.34 line; defaults read at defaults.go
// @1adaa7534575, a later copy whose behavior defaults are the ones v1.34's own
// defaults_test.go @e0a566e71f69 asserts; the `tolerance` field as of v1.33+).
// pkg/apis/autoscaling/v2/defaults.go (defaultHPAScaleUpRules, defaultHPAScaleDownRules,
// GenerateHPAScaleUpRules, GenerateHPAScaleDownRules, copyHPAScalingRules) and the shapes of
// `HPAScalingRules` / `HPAScalingPolicy` / `ScalingPolicySelect` in k8s.io/api/autoscaling/v2.
//! `spec.behavior`: per-direction scaling rules (rate policies, how to pick among them, the
//! stabilization window, the per-HPA tolerance) and the defaults the API server fills in.
//!
//! Defaulting happens only when `spec.behavior` is present: every unset field of a direction
//! is taken from that direction's defaults, field by field.
//!
//! - scale up: stabilization 0 s, policies `Pods 4 / 15 s` and `Percent 100 / 15 s`,
//!   `selectPolicy: Max`;
//! - scale down: policy `Percent 100 / 15 s`, `selectPolicy: Max`, and *no* stabilization
//!   window: the controller fills it at sync time from its
//!   `--horizontal-pod-autoscaler-downscale-stabilization` flag (default 300 s).
//!
//! An HPA without `spec.behavior` is not the same as one with default behavior: the controller
//! takes a separate, older path for it (see [`super::normalize::convert_desired_replicas_with_rules`]).

use serde::{Deserialize, Serialize};

/// Default scale-up stabilization window, seconds.
pub const DEFAULT_SCALE_UP_STABILIZATION_SECONDS: i32 = 0;
/// Default scale-up `Pods` policy value (pods added per period).
pub const DEFAULT_SCALE_UP_PODS: i32 = 4;
/// Default scale-up `Percent` policy value.
pub const DEFAULT_SCALE_UP_PERCENT: i32 = 100;
/// Period of both default scale-up policies, seconds.
pub const DEFAULT_SCALE_UP_PERIOD_SECONDS: i32 = 15;
/// Default scale-down `Percent` policy value.
pub const DEFAULT_SCALE_DOWN_PERCENT: i32 = 100;
/// Period of the default scale-down policy, seconds.
pub const DEFAULT_SCALE_DOWN_PERIOD_SECONDS: i32 = 15;

/// `HPAScalingPolicyType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PolicyType {
    /// Change by an absolute number of pods per period.
    Pods,
    /// Change by a percentage of the replicas at the start of the period.
    Percent,
}

/// `HPAScalingPolicy`: at most `value` pods (or percent) of change within `period_seconds`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScalingPolicy {
    #[serde(rename = "type")]
    pub policy_type: PolicyType,
    pub value: i32,
    pub period_seconds: i32,
}

impl ScalingPolicy {
    /// A `Pods` policy.
    pub const fn pods(value: i32, period_seconds: i32) -> Self {
        ScalingPolicy {
            policy_type: PolicyType::Pods,
            value,
            period_seconds,
        }
    }

    /// A `Percent` policy.
    pub const fn percent(value: i32, period_seconds: i32) -> Self {
        ScalingPolicy {
            policy_type: PolicyType::Percent,
            value,
            period_seconds,
        }
    }
}

/// `ScalingPolicySelect`: which policy wins when several apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SelectPolicy {
    /// The policy allowing the largest change (the default).
    Max,
    /// The policy allowing the smallest change.
    Min,
    /// No change at all in this direction.
    Disabled,
}

/// `HPAScalingRules` for one direction, as written in the object (every field optional).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScalingRules {
    pub stabilization_window_seconds: Option<i32>,
    pub select_policy: Option<SelectPolicy>,
    pub policies: Option<Vec<ScalingPolicy>>,
    /// Per-HPA tolerance for this direction (e.g. `0.05`). Read by the controller only when the
    /// `HPAConfigurableTolerance` feature gate is on (alpha, off by default in v1.34).
    pub tolerance: Option<f64>,
}

impl ScalingRules {
    /// Rules with a stabilization window, a select policy and policies, as upstream's
    /// `generateScalingRules` test helper builds them (tolerance unset).
    pub fn new(
        stabilization_window_seconds: i32,
        select_policy: SelectPolicy,
        policies: Vec<ScalingPolicy>,
    ) -> Self {
        ScalingRules {
            stabilization_window_seconds: Some(stabilization_window_seconds),
            select_policy: Some(select_policy),
            policies: Some(policies),
            tolerance: None,
        }
    }

    /// The select policy after defaulting (`Max` when unset).
    pub fn select(&self) -> SelectPolicy {
        self.select_policy.unwrap_or(SelectPolicy::Max)
    }

    /// The policies (empty when unset; defaulting never leaves them unset).
    pub fn policy_list(&self) -> &[ScalingPolicy] {
        self.policies.as_deref().unwrap_or(&[])
    }

    /// The longest `period_seconds` among the policies (upstream `getLongestPolicyPeriod`).
    pub fn longest_policy_period(&self) -> i32 {
        self.policy_list()
            .iter()
            .map(|p| p.period_seconds)
            .fold(0, i32::max)
    }
}

/// `HorizontalPodAutoscalerBehavior`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Behavior {
    pub scale_up: Option<ScalingRules>,
    pub scale_down: Option<ScalingRules>,
}

impl Behavior {
    /// The behavior after API defaulting: both directions present, every field but the
    /// scale-down stabilization window (and the tolerances) filled in.
    pub fn defaulted(&self) -> Behavior {
        Behavior {
            scale_up: Some(generate_scale_up_rules(self.scale_up.as_ref())),
            scale_down: Some(generate_scale_down_rules(self.scale_down.as_ref())),
        }
    }

    /// Scale-up rules after defaulting.
    pub fn scale_up_rules(&self) -> ScalingRules {
        generate_scale_up_rules(self.scale_up.as_ref())
    }

    /// Scale-down rules after defaulting (stabilization window possibly still unset).
    pub fn scale_down_rules(&self) -> ScalingRules {
        generate_scale_down_rules(self.scale_down.as_ref())
    }
}

/// upstream `defaultHPAScaleUpRules`.
pub fn default_scale_up_rules() -> ScalingRules {
    ScalingRules::new(
        DEFAULT_SCALE_UP_STABILIZATION_SECONDS,
        SelectPolicy::Max,
        vec![
            ScalingPolicy::pods(DEFAULT_SCALE_UP_PODS, DEFAULT_SCALE_UP_PERIOD_SECONDS),
            ScalingPolicy::percent(DEFAULT_SCALE_UP_PERCENT, DEFAULT_SCALE_UP_PERIOD_SECONDS),
        ],
    )
}

/// upstream `defaultHPAScaleDownRules` (stabilization deliberately unset).
pub fn default_scale_down_rules() -> ScalingRules {
    ScalingRules {
        stabilization_window_seconds: None,
        select_policy: Some(SelectPolicy::Max),
        policies: Some(vec![ScalingPolicy::percent(
            DEFAULT_SCALE_DOWN_PERCENT,
            DEFAULT_SCALE_DOWN_PERIOD_SECONDS,
        )]),
        tolerance: None,
    }
}

/// upstream `GenerateHPAScaleUpRules`: the defaults overlaid with every set field of `from`.
pub fn generate_scale_up_rules(from: Option<&ScalingRules>) -> ScalingRules {
    overlay(from, default_scale_up_rules())
}

/// upstream `GenerateHPAScaleDownRules`.
pub fn generate_scale_down_rules(from: Option<&ScalingRules>) -> ScalingRules {
    overlay(from, default_scale_down_rules())
}

/// upstream `copyHPAScalingRules`: a set field replaces the default, an unset one keeps it
/// (an explicitly empty policy list counts as set).
fn overlay(from: Option<&ScalingRules>, mut to: ScalingRules) -> ScalingRules {
    let Some(from) = from else { return to };
    if from.select_policy.is_some() {
        to.select_policy = from.select_policy;
    }
    if from.stabilization_window_seconds.is_some() {
        to.stabilization_window_seconds = from.stabilization_window_seconds;
    }
    if from.policies.is_some() {
        to.policies.clone_from(&from.policies);
    }
    if from.tolerance.is_some() {
        to.tolerance = from.tolerance;
    }
    to
}

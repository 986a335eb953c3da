//! The pod lifecycle settings of `service` as written: the Deployment's rolling-update
//! strategy, how pods terminate (grace period, `preStop` hook, shell in the image) and the
//! service's own drain on shutdown.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer};

use super::scalars::{DurationText, IntOrPercentText, Scalar};

/// The Deployment's `RollingUpdate` strategy: how many pods a rollout may add above, or take
/// below, the desired replica count at a time.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RolloutSpec {
    /// `maxSurge`: how many pods may exist above the desired count during a rollout, a number
    /// or a percentage of the desired count (rounded up).
    #[serde(default = "quarter")]
    pub max_surge: IntOrPercentText,
    /// `maxUnavailable`: how many pods may be unavailable below the desired count during a
    /// rollout, a number or a percentage of the desired count (rounded down; at most `100%`).
    /// `maxSurge` and `maxUnavailable` may not both be `0`.
    #[serde(default = "quarter")]
    pub max_unavailable: IntOrPercentText,
    /// `minReadySeconds`: how long a new pod must be ready, without failing, before it counts
    /// as available and the rollout moves on.
    #[serde(default = "zero_seconds")]
    pub min_ready_seconds: DurationText,
}

impl Default for RolloutSpec {
    fn default() -> Self {
        Self {
            max_surge: quarter(),
            max_unavailable: quarter(),
            min_ready_seconds: zero_seconds(),
        }
    }
}

/// How a pod stops. On deletion the kubelet runs the `preStop` hook, then sends SIGTERM, and
/// kills the container when `gracePeriod` (counted from the deletion) runs out; the pod leaves
/// the Service's endpoints as soon as it is deleted.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TerminationSpec {
    /// `terminationGracePeriodSeconds`: from the deletion to SIGKILL, `preStop` hook included.
    #[serde(default = "thirty_seconds")]
    pub grace_period: DurationText,
    /// The container's `preStop` hook: exactly one of `sleep` or `exec`. Omit it for no hook.
    #[serde(default)]
    pub pre_stop: Option<PreStopSpec>,
    /// Whether the image has a shell and the usual binaries; `false` is a distroless or
    /// scratch image, where `exec` hooks fail (the native `sleep` action still works).
    #[serde(default = "super::yes")]
    pub image_has_shell: bool,
}

impl Default for TerminationSpec {
    fn default() -> Self {
        Self {
            grace_period: thirty_seconds(),
            pre_stop: None,
            image_has_shell: true,
        }
    }
}

/// A `preStop` hook. Exactly one key.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PreStopSpec {
    /// The native sleep action (`lifecycle.preStop.sleep`): the kubelet waits this long
    /// itself, so it works in any image. Kubernetes rejects a sleep longer than the grace
    /// period.
    #[serde(default)]
    pub sleep: Option<DurationText>,
    /// A command run in the container (`lifecycle.preStop.exec.command`), such as
    /// `[sleep, "30"]`; it fails when the image has no shell (`imageHasShell: false`).
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub exec: Option<Vec<String>>,
}

/// A change of the `preStop` hook in a new revision: a new hook, or `null` to remove it.
#[derive(Debug, Clone)]
pub enum PreStopChangeSpec {
    /// `preStop: null`: the new revision has no hook.
    Remove,
    /// The new revision's hook.
    Set(PreStopSpec),
}

impl<'de> Deserialize<'de> for PreStopChangeSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let hook = Option::<PreStopSpec>::deserialize(deserializer)?;
        Ok(hook.map_or(Self::Remove, Self::Set))
    }
}

impl JsonSchema for PreStopChangeSpec {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "PreStopChange".into()
    }
    /// The `preStop` mapping, or `null` (the one place a scenario may write `null`).
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let mut schema = PreStopSpec::json_schema(generator);
        schema.insert("type".into(), serde_json::json!(["object", "null"]));
        schema.insert(super::NULL_ALLOWED.into(), true.into());
        schema.insert(
            "description".into(),
            "The new revision's `preStop` hook (exactly one of `sleep` or `exec`), or `null` to remove the hook.".into(),
        );
        schema
    }
}

/// The service's own behaviour on shutdown (the `flagsvc` and `sidecar` `--drain-delay`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AppSpec {
    /// How long the service keeps accepting and serving requests after SIGTERM before it
    /// stops; `0s` stops accepting at once (the incident's application).
    #[serde(default = "zero_seconds")]
    pub drain_delay: DurationText,
}

impl Default for AppSpec {
    fn default() -> Self {
        Self {
            drain_delay: zero_seconds(),
        }
    }
}

/// `deserialize_with` for an optional field whose value may be `null`: present (even as
/// `null`) gives `Some`, absent gives the field's default.
pub(crate) fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

fn quarter() -> IntOrPercentText {
    IntOrPercentText(Scalar::Text("25%".to_owned()))
}
fn zero_seconds() -> DurationText {
    DurationText::of("0s")
}
fn thirty_seconds() -> DurationText {
    DurationText::of("30s")
}

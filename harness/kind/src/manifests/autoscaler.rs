//! The objects behind the real HorizontalPodAutoscaler of `service.autoscaler`, rendered by the
//! harness into the run's namespace (the pipeline itself comes from pinned releases,
//! [`crate::pinned`]):
//!
//! - Prometheus (prometheus-operator `monitoring.coreos.com/v1` `Prometheus`) with its
//!   ServiceAccount, Role and RoleBinding (list/watch pods of the namespace), selecting the
//!   run's PodMonitors; pod-level security context for Pod Security "restricted" (the operator
//!   sets the containers' own: no privilege escalation, read-only root, all capabilities
//!   dropped);
//! - PodMonitors scraping every second the sidecars' admin port (`admin`, `/metrics`) and the
//!   generators' metrics port (`metrics`);
//! - a KEDA `ScaledObject` (`keda.sh/v1alpha1`) whose `prometheus` trigger asks for the
//!   scenario's side summed over the namespace, with `metricType: AverageValue` and the
//!   scenario's target as `threshold`: KEDA creates the HPA (named after the service, through
//!   `advanced.horizontalPodAutoscalerConfig.name`), an External metric with an AverageValue
//!   target, so the HPA controller wants `ceil(total / target)` replicas — the scenario's
//!   "requests per second per pod". `minReplicaCount`/`maxReplicaCount` and `behavior`
//!   (stabilization windows, select policy, policies) are the scenario's, every period scaled
//!   by the run's time scale to whole seconds by the rule of every whole-second field
//!   ([`super::time::whole_seconds`]: refused, never rounded, when it is not whole; [`check`]).
//!
//! Field names: KEDA `apis/keda/v1alpha1/scaledobject_types.go` (`ScaledObjectSpec`,
//! `AdvancedConfig`, `HorizontalPodAutoscalerConfig{Behavior, Name}`, `ScaleTriggers`) and
//! `pkg/scalers/prometheus_scaler.go` (`serverAddress`, `query`, `threshold`);
//! prometheus-operator `pkg/apis/monitoring/v1` (`PrometheusSpec`, `PodMonitorSpec`,
//! `PodMetricsEndpoint.port`: a named container port).

use std::collections::BTreeMap;
use std::time::Duration;

use harness_core::clock::TimeScale;
use harness_core::scenario::model::{
    Autoscaler, PolicyKind, Reporter, ScalingRules, Scenario, SelectPolicy,
};
use k8s_openapi::api::autoscaling::v2::{
    HPAScalingPolicy, HPAScalingRules, HorizontalPodAutoscalerBehavior,
};
use serde_json::{Value, json};

use super::time::{UnscalableSeconds, whole_seconds};
use super::{ROLE_LABEL, RUN_ID_LABEL, namespace_name, run_labels};

/// The Prometheus object's name; the operator's governing Service is `prometheus-operated`.
pub const PROMETHEUS_NAME: &str = "harness";
/// The ServiceAccount, Role and RoleBinding of Prometheus.
pub const PROMETHEUS_ACCOUNT: &str = "harness-prometheus";
/// The Service prometheus-operator creates for every Prometheus of a namespace.
pub const PROMETHEUS_SERVICE: &str = "prometheus-operated";
/// Prometheus' web port on that Service.
pub const PROMETHEUS_PORT: u16 = 9090;
/// The named container port of the generators' metrics (loadgen's 9091).
pub const GENERATOR_METRICS_PORT_NAME: &str = "metrics";
/// The named container port of the sidecars' admin endpoint.
pub const SIDECAR_ADMIN_PORT_NAME: &str = "admin";
/// How often Prometheus scrapes (the local target samples the sidecars once a second too).
pub const SCRAPE_INTERVAL_S: u32 = 1;
/// The shortest `rate()` window: a few scrapes, so one missed scrape still leaves two samples.
pub const MIN_RATE_WINDOW_S: u32 = 3;

/// The autoscaler's whole-second values at the run's time scale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutoscalerSeconds {
    /// The sync period: KEDA's `pollingInterval`, the `rate()` window's base.
    pub sync_period: i64,
    pub scale_up: RulesSeconds,
    pub scale_down: RulesSeconds,
}

/// One direction's whole-second values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RulesSeconds {
    pub stabilization_window: i64,
    /// Each policy's `periodSeconds`, in the scenario's order.
    pub policy_periods: Vec<i64>,
}

/// The autoscaler's periods at `scale`, each by [`whole_seconds`] under its scenario field;
/// every value that does not scale is listed. Minimums: a policy's `periodSeconds` must be
/// greater than zero and a stabilization window at least zero (kubernetes/kubernetes
/// `pkg/apis/autoscaling/validation/validation.go`: `validateScalingPolicy` and the scaling
/// rules' `stabilizationWindowSeconds` check; the stored copy read carried no release tag). The sync period,
/// KEDA's `pollingInterval`, is held to at least 1 s as before; KEDA's own lower bound was not
/// looked up.
pub fn seconds(
    hpa: &Autoscaler,
    scale: TimeScale,
) -> Result<AutoscalerSeconds, Vec<Box<UnscalableSeconds>>> {
    let mut refused = Vec::new();
    let mut whole = |field: &str, d: Duration, min: i64| {
        whole_seconds(field, d, scale, min).unwrap_or_else(|e| {
            refused.push(e);
            0
        })
    };
    let mut rules = |direction: &str, r: &ScalingRules| {
        let at = format!("service.autoscaler.behavior.{direction}");
        RulesSeconds {
            stabilization_window: whole(
                &format!("{at}.stabilizationWindow"),
                r.stabilization_window,
                0,
            ),
            policy_periods: (r.policies.iter().enumerate())
                .map(|(i, p)| whole(&format!("{at}.policies[{i}].period"), p.period, 1))
                .collect(),
        }
    };
    let scale_up = rules("scaleUp", &hpa.behavior.scale_up);
    let scale_down = rules("scaleDown", &hpa.behavior.scale_down);
    let sync_period = whole("service.autoscaler.syncPeriod", hpa.sync_period, 1);
    if refused.is_empty() {
        Ok(AutoscalerSeconds {
            sync_period,
            scale_up,
            scale_down,
        })
    } else {
        Err(refused)
    }
}

/// Every period of the scenario's autoscaler that does not scale (none without one).
pub fn check(scenario: &Scenario, scale: TimeScale) -> Vec<Box<UnscalableSeconds>> {
    match scenario
        .service
        .autoscaler
        .as_ref()
        .map(|h| seconds(h, scale))
    {
        Some(Err(refused)) => refused,
        Some(Ok(_)) | None => Vec::new(),
    }
}

/// The HPA's side of the traffic as a PromQL query: the per-second rate of requests the
/// sidecars admitted (destination) or the generators attempted (source), summed over the
/// run's namespace, over `window_s` seconds.
pub fn rate_query(reporter: Reporter, namespace: &str, window_s: u32) -> String {
    let metric = match reporter {
        Reporter::Destination => "sidecar_admitted_total",
        Reporter::Source => "loadgen_attempted_total",
    };
    format!("sum(rate({metric}{{namespace=\"{namespace}\"}}[{window_s}s]))")
}

/// The `rate()` window of this run: one (scaled) HPA sync period, at least
/// [`MIN_RATE_WINDOW_S`] — as the local target's HPA model averages the sidecars' counters over
/// one sync period.
pub fn rate_window_s(seconds: &AutoscalerSeconds) -> u32 {
    (seconds.sync_period as u32).max(MIN_RATE_WINDOW_S)
}

/// The address KEDA's scaler queries.
pub fn prometheus_url(namespace: &str) -> String {
    format!("http://{PROMETHEUS_SERVICE}.{namespace}.svc:{PROMETHEUS_PORT}")
}

fn rules(r: &ScalingRules, seconds: &RulesSeconds) -> HPAScalingRules {
    HPAScalingRules {
        stabilization_window_seconds: Some(seconds.stabilization_window as i32),
        select_policy: Some(
            match r.select_policy {
                SelectPolicy::Max => "Max",
                SelectPolicy::Min => "Min",
                SelectPolicy::Disabled => "Disabled",
            }
            .to_owned(),
        ),
        policies: Some(
            r.policies
                .iter()
                .zip(&seconds.policy_periods)
                .map(|(p, &period)| HPAScalingPolicy {
                    type_: match p.kind {
                        PolicyKind::Pods => "Pods",
                        PolicyKind::Percent => "Percent",
                    }
                    .to_owned(),
                    value: p.value as i32,
                    period_seconds: period as i32,
                })
                .collect(),
        ),
        ..Default::default()
    }
}

/// `spec.behavior` of the HPA: the scenario's, periods scaled ([`seconds`]).
pub fn behavior(hpa: &Autoscaler, seconds: &AutoscalerSeconds) -> HorizontalPodAutoscalerBehavior {
    HorizontalPodAutoscalerBehavior {
        scale_up: Some(rules(&hpa.behavior.scale_up, &seconds.scale_up)),
        scale_down: Some(rules(&hpa.behavior.scale_down, &seconds.scale_down)),
    }
}

/// A number as KEDA's `threshold` string: no trailing `.0` for whole numbers.
fn threshold(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

fn meta(scenario: &Scenario, run_id: &str, name: &str) -> Value {
    json!({
        "name": name,
        "namespace": namespace_name(run_id),
        "labels": run_labels(scenario, run_id),
    })
}

fn selector(run_id: &str, role: &str) -> Value {
    let labels = BTreeMap::from([
        (RUN_ID_LABEL.to_owned(), run_id.to_owned()),
        (ROLE_LABEL.to_owned(), role.to_owned()),
    ]);
    json!({ "matchLabels": labels })
}

/// Every object of the autoscaler in apply order, each with a name for `NN-kind-name`
/// files; `Ok(None)` when the scenario has no autoscaler, the first period that does not
/// scale when one does not ([`check`] lists them all up front).
pub fn render(
    scenario: &Scenario,
    run_id: &str,
    scale: TimeScale,
) -> Result<Option<Vec<Value>>, Box<UnscalableSeconds>> {
    let Some(hpa) = scenario.service.autoscaler.as_ref() else {
        return Ok(None);
    };
    let seconds = seconds(hpa, scale).map_err(|mut refused| refused.swap_remove(0))?;
    let ns = namespace_name(run_id);
    let interval = format!("{SCRAPE_INTERVAL_S}s");
    let mut objects = vec![
        json!({
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": meta(scenario, run_id, PROMETHEUS_ACCOUNT),
            "automountServiceAccountToken": true,
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": meta(scenario, run_id, PROMETHEUS_ACCOUNT),
            "rules": [
                { "apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"] },
            ],
        }),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": meta(scenario, run_id, PROMETHEUS_ACCOUNT),
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "Role",
                "name": PROMETHEUS_ACCOUNT,
            },
            "subjects": [
                { "kind": "ServiceAccount", "name": PROMETHEUS_ACCOUNT, "namespace": ns },
            ],
        }),
        json!({
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "Prometheus",
            "metadata": meta(scenario, run_id, PROMETHEUS_NAME),
            "spec": {
                "replicas": 1,
                "serviceAccountName": PROMETHEUS_ACCOUNT,
                "scrapeInterval": interval,
                "evaluationInterval": "30s",
                // Only this run's PodMonitors, only in this namespace (a nil namespace selector).
                "podMonitorSelector": { "matchLabels": { RUN_ID_LABEL: run_id } },
                "podMetadata": { "labels": run_labels(scenario, run_id) },
                "securityContext": {
                    "runAsNonRoot": true,
                    "runAsUser": 65534,
                    "runAsGroup": 65534,
                    "fsGroup": 65534,
                    "seccompProfile": { "type": "RuntimeDefault" },
                },
            },
        }),
    ];
    if scenario.service.sidecar.is_some() {
        objects.push(json!({
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "PodMonitor",
            "metadata": meta(scenario, run_id, "harness-sidecars"),
            "spec": {
                "selector": selector(run_id, "service"),
                "podMetricsEndpoints": [
                    { "port": SIDECAR_ADMIN_PORT_NAME, "path": "/metrics", "interval": interval },
                ],
            },
        }));
    }
    objects.push(json!({
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PodMonitor",
        "metadata": meta(scenario, run_id, "harness-generators"),
        "spec": {
            "selector": selector(run_id, "generator"),
            "podMetricsEndpoints": [
                { "port": GENERATOR_METRICS_PORT_NAME, "path": "/metrics", "interval": interval },
            ],
        },
    }));
    let name = &scenario.service.name;
    objects.push(json!({
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": meta(scenario, run_id, name),
        "spec": {
            "scaleTargetRef": { "apiVersion": "apps/v1", "kind": "Deployment", "name": name },
            "minReplicaCount": hpa.min_replicas,
            "maxReplicaCount": hpa.max_replicas,
            "pollingInterval": seconds.sync_period,
            "advanced": {
                "horizontalPodAutoscalerConfig": {
                    "name": name,
                    "behavior": behavior(hpa, &seconds),
                },
            },
            "triggers": [{
                "type": "prometheus",
                "name": reporter_name(hpa.reporter),
                "metricType": "AverageValue",
                "metadata": {
                    "serverAddress": prometheus_url(&ns),
                    "query": rate_query(hpa.reporter, &ns, rate_window_s(&seconds)),
                    "threshold": threshold(hpa.target_average_value),
                },
            }],
        },
    }));
    Ok(Some(objects))
}

/// `destination-rps` / `source-rps`: the trigger's name.
pub fn reporter_name(reporter: Reporter) -> &'static str {
    match reporter {
        Reporter::Destination => "destination-rps",
        Reporter::Source => "source-rps",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hpa_with_periods(sync: Duration, window: Duration, period: Duration) -> Autoscaler {
        let mut scale_down = ScalingRules::default_scale_down();
        scale_down.stabilization_window = window;
        scale_down.policies[0].period = period;
        Autoscaler {
            min_replicas: 1,
            max_replicas: 4,
            reporter: Reporter::Source,
            target_average_value: 10.0,
            sync_period: sync,
            tolerance: 0.1,
            behavior: harness_core::scenario::model::Behavior {
                scale_up: ScalingRules::default_scale_up(),
                scale_down,
            },
        }
    }

    #[test]
    fn periods_scale_to_whole_seconds_or_are_refused_by_field() {
        let s = Duration::from_secs;
        let fifth = TimeScale::new(0.2).unwrap();
        let ok = seconds(&hpa_with_periods(s(10), s(300), s(30)), fifth).unwrap();
        assert_eq!(ok.sync_period, 2);
        assert_eq!(ok.scale_down.stabilization_window, 60);
        assert_eq!(ok.scale_down.policy_periods, [6]);
        // The scale-up defaults: no window, two 15 s policies.
        assert_eq!(ok.scale_up.stabilization_window, 0);
        assert_eq!(ok.scale_up.policy_periods, [3, 3]);
        assert_eq!(rate_window_s(&ok), MIN_RATE_WINDOW_S);
        let real = seconds(&hpa_with_periods(s(15), s(300), s(60)), TimeScale::REAL).unwrap();
        assert_eq!(
            (real.sync_period, real.scale_up.policy_periods.clone()),
            (15, vec![15, 15])
        );
        assert_eq!(rate_window_s(&real), 15);
        // 1.5 s is not rounded to 2: every field that is not whole is named.
        let refused = seconds(
            &hpa_with_periods(
                Duration::from_millis(1500),
                s(300),
                Duration::from_millis(2500),
            ),
            TimeScale::REAL,
        )
        .unwrap_err();
        let fields: Vec<&str> = refused.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "service.autoscaler.behavior.scaleDown.policies[0].period",
                "service.autoscaler.syncPeriod"
            ]
        );
        // At 0.05 the two 15 s scale-up defaults are 0.75 s and the 30 s period 1.5 s.
        let refused = seconds(
            &hpa_with_periods(s(20), s(300), s(30)),
            TimeScale::new(0.05).unwrap(),
        )
        .unwrap_err();
        assert_eq!(refused.len(), 3, "{refused:?}");
        assert_eq!(
            refused[0].field,
            "service.autoscaler.behavior.scaleUp.policies[0].period"
        );
    }

    #[test]
    fn thresholds_read_as_numbers() {
        assert_eq!(threshold(15.0), "15");
        assert_eq!(threshold(12.5), "12.5");
    }

    #[test]
    fn each_side_queries_its_own_counter() {
        assert_eq!(
            rate_query(Reporter::Destination, "harness-x", 15),
            "sum(rate(sidecar_admitted_total{namespace=\"harness-x\"}[15s]))"
        );
        assert_eq!(
            rate_query(Reporter::Source, "harness-x", 3),
            "sum(rate(loadgen_attempted_total{namespace=\"harness-x\"}[3s]))"
        );
    }
}

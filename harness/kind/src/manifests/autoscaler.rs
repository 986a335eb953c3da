//! The objects behind the real HorizontalPodAutoscaler of `service.autoscaler`, rendered by the
//! harness into the run's namespace (the pipeline itself comes from pinned releases,
//! [`crate::third_party`]):
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
//!   by the run's time scale to whole seconds ([`scaled_seconds`]).
//!
//! Field names: KEDA `apis/keda/v1alpha1/scaledobject_types.go` (`ScaledObjectSpec`,
//! `AdvancedConfig`, `HorizontalPodAutoscalerConfig{Behavior, Name}`, `ScaleTriggers`) and
//! `pkg/scalers/prometheus_scaler.go` (`serverAddress`, `query`, `threshold`);
//! prometheus-operator `pkg/apis/monitoring/v1` (`PrometheusSpec`, `PodMonitorSpec`,
//! `PodMetricsEndpoint.port`: a named container port).

use std::collections::BTreeMap;
use std::time::Duration;

use harness_core::engine::TimeScale;
use harness_core::scenario::model::{
    Autoscaler, PolicyKind, Reporter, ScalingRules, Scenario, SelectPolicy,
};
use k8s_openapi::api::autoscaling::v2::{
    HPAScalingPolicy, HPAScalingRules, HorizontalPodAutoscalerBehavior,
};
use serde_json::{Value, json};

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

/// A span of Kubernetes time as the whole wall seconds of this run: rounded to the nearest
/// second, and at least one second unless it is zero.
pub fn scaled_seconds(d: Duration, scale: TimeScale) -> u32 {
    if d.is_zero() {
        return 0;
    }
    let wall = scale.wall(d).as_secs_f64().round();
    (wall as u32).max(1)
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
pub fn rate_window_s(hpa: &Autoscaler, scale: TimeScale) -> u32 {
    scaled_seconds(hpa.sync_period, scale).max(MIN_RATE_WINDOW_S)
}

/// The address KEDA's scaler queries.
pub fn prometheus_url(namespace: &str) -> String {
    format!("http://{PROMETHEUS_SERVICE}.{namespace}.svc:{PROMETHEUS_PORT}")
}

fn rules(r: &ScalingRules, scale: TimeScale) -> HPAScalingRules {
    HPAScalingRules {
        stabilization_window_seconds: Some(scaled_seconds(r.stabilization_window, scale) as i32),
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
                .map(|p| HPAScalingPolicy {
                    type_: match p.kind {
                        PolicyKind::Pods => "Pods",
                        PolicyKind::Percent => "Percent",
                    }
                    .to_owned(),
                    value: p.value as i32,
                    period_seconds: scaled_seconds(p.period, scale).max(1) as i32,
                })
                .collect(),
        ),
        ..Default::default()
    }
}

/// `spec.behavior` of the HPA: the scenario's, periods scaled.
pub fn behavior(hpa: &Autoscaler, scale: TimeScale) -> HorizontalPodAutoscalerBehavior {
    HorizontalPodAutoscalerBehavior {
        scale_up: Some(rules(&hpa.behavior.scale_up, scale)),
        scale_down: Some(rules(&hpa.behavior.scale_down, scale)),
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
/// files; `None` when the scenario has no autoscaler.
pub fn render(scenario: &Scenario, run_id: &str, scale: TimeScale) -> Option<Vec<Value>> {
    let hpa = scenario.service.autoscaler.as_ref()?;
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
    let sync = scaled_seconds(hpa.sync_period, scale).max(1);
    objects.push(json!({
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": meta(scenario, run_id, name),
        "spec": {
            "scaleTargetRef": { "apiVersion": "apps/v1", "kind": "Deployment", "name": name },
            "minReplicaCount": hpa.min_replicas,
            "maxReplicaCount": hpa.max_replicas,
            "pollingInterval": sync,
            "advanced": {
                "horizontalPodAutoscalerConfig": {
                    "name": name,
                    "behavior": behavior(hpa, scale),
                },
            },
            "triggers": [{
                "type": "prometheus",
                "name": reporter_name(hpa.reporter),
                "metricType": "AverageValue",
                "metadata": {
                    "serverAddress": prometheus_url(&ns),
                    "query": rate_query(hpa.reporter, &ns, rate_window_s(hpa, scale)),
                    "threshold": threshold(hpa.target_average_value),
                },
            }],
        },
    }));
    Some(objects)
}

/// `destination-rps` / `source-rps`: the trigger's name.
pub fn reporter_name(reporter: Reporter) -> &'static str {
    match reporter {
        Reporter::Destination => "destination-rps",
        Reporter::Source => "source-rps",
    }
}

/// The objects as a multi-document YAML stream with `# kind-name` comments.
pub fn to_yaml(objects: &[Value]) -> String {
    let mut out = String::new();
    for o in objects {
        out.push_str("---\n# ");
        out.push_str(&document_name(o));
        out.push('\n');
        out.push_str(&super::yaml(o));
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// `kind-name` in lower case (`scaledobject-flagsvc`).
pub fn document_name(object: &Value) -> String {
    format!(
        "{}-{}",
        object["kind"]
            .as_str()
            .unwrap_or("object")
            .to_ascii_lowercase(),
        object["metadata"]["name"].as_str().unwrap_or("unnamed")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_scale_to_whole_seconds() {
        let tenth = TimeScale::new(0.1).unwrap();
        assert_eq!(scaled_seconds(Duration::from_secs(300), tenth), 30);
        assert_eq!(scaled_seconds(Duration::from_secs(15), tenth), 2);
        assert_eq!(scaled_seconds(Duration::from_secs(4), tenth), 1);
        assert_eq!(scaled_seconds(Duration::ZERO, tenth), 0);
        assert_eq!(scaled_seconds(Duration::from_secs(15), TimeScale::REAL), 15);
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

//! The HorizontalPodAutoscaler (`autoscaling/v2`) as `service.autoscaler`: replicas bounds,
//! `behavior` as written, and its metric mapped to the side the harness measures requests on —
//! `destination` (what each pod takes in: CPU, memory, a per-pod metric) or `source` (demand
//! measured in front of the pods: an Object or External metric) — with the reason stated.

use k8s_openapi::api::autoscaling::v2::{
    HPAScalingRules, HorizontalPodAutoscaler, MetricSpec, MetricTarget,
};

use super::text::{Field, Note, NoteKind};

/// `service.autoscaler`, and whether its reporter needs the sidecar (`destination`).
pub struct Autoscaler {
    pub field: Field,
    pub needs_sidecar: bool,
}

/// The metric as the harness scales on it.
struct Mapped {
    reporter: &'static str,
    target: Option<f64>,
    why: String,
}

/// Maps `hpa`.
pub fn autoscaler(hpa: &HorizontalPodAutoscaler, notes: &mut Vec<Note>) -> Autoscaler {
    let name = hpa.metadata.name.clone().unwrap_or_default();
    let spec = hpa.spec.clone();
    let metrics = spec.metrics.clone().unwrap_or_default();
    let mapped = match metrics.first() {
        Some(m) => map_metric(m),
        None => Mapped {
            reporter: "destination",
            target: None,
            why: "no metrics: Kubernetes' default is 80% CPU utilization, which pods spend on what they take in".into(),
        },
    };
    if metrics.len() > 1 {
        notes.push(Note {
            kind: NoteKind::NotReproduced,
            field: "service.autoscaler.metric".into(),
            text: format!(
                "HorizontalPodAutoscaler {name} has {} metrics and follows the largest proposal; the scenario scales on one, the first",
                metrics.len()
            ),
        });
    }
    notes.push(Note {
        kind: NoteKind::Approximation,
        field: "service.autoscaler.metric.reporter".into(),
        text: format!("{}: {}", mapped.reporter, mapped.why),
    });
    let target = match mapped.target {
        Some(t) => format_number(t),
        None => {
            notes.push(Note {
                kind: NoteKind::FillIn,
                field: "service.autoscaler.metric.targetAverageValue".into(),
                text: "the HPA's target is not a number of requests per second per pod: write the requests per second one pod takes at the HPA's target (e.g. at 70% CPU)".into(),
            });
            "10".to_owned()
        }
    };
    let mut parts = vec![
        format!("minReplicas: {}", spec.min_replicas.unwrap_or(1)),
        format!("maxReplicas: {}", spec.max_replicas),
        format!(
            "metric: {{ reporter: {}, targetAverageValue: {target} }}",
            mapped.reporter
        ),
    ];
    let behavior = spec.behavior.unwrap_or_default();
    let directions: Vec<String> = [
        ("scaleUp", behavior.scale_up),
        ("scaleDown", behavior.scale_down),
    ]
    .into_iter()
    .filter_map(|(key, rules)| rules.map(|r| format!("{key}: {}", rules_text(&r))))
    .collect();
    if !directions.is_empty() {
        parts.push(format!("behavior: {{ {} }}", directions.join(", ")));
    }
    let mut comment = format!("HorizontalPodAutoscaler {name}");
    if mapped.target.is_none() {
        comment.push_str("; FILL IN targetAverageValue");
    }
    Autoscaler {
        field: Field::read("autoscaler", format!("{{ {} }}", parts.join(", ")))
            .with_comment(comment),
        needs_sidecar: mapped.reporter == "destination",
    }
}

fn rules_text(rules: &HPAScalingRules) -> String {
    let mut parts = Vec::new();
    if let Some(w) = rules.stabilization_window_seconds {
        parts.push(format!("stabilizationWindow: {w}s"));
    }
    if let Some(p) = &rules.select_policy {
        parts.push(format!("selectPolicy: {p}"));
    }
    if let Some(policies) = &rules.policies {
        let list: Vec<String> = policies
            .iter()
            .map(|p| {
                format!(
                    "{{ type: {}, value: {}, period: {}s }}",
                    p.type_, p.value, p.period_seconds
                )
            })
            .collect();
        parts.push(format!("policies: [{}]", list.join(", ")));
    }
    format!("{{ {} }}", parts.join(", "))
}

fn map_metric(m: &MetricSpec) -> Mapped {
    match m.type_.as_str() {
        "Resource" | "ContainerResource" => {
            let resource = m
                .resource
                .as_ref()
                .map(|r| r.name.clone())
                .or_else(|| m.container_resource.as_ref().map(|r| r.name.clone()))
                .unwrap_or_default();
            Mapped {
                reporter: "destination",
                target: None,
                why: format!(
                    "{resource} usage is spent by the pods on the requests they take in, and falls when a pod leaves the endpoints whatever the demand, as the sidecar's admitted requests do"
                ),
            }
        }
        "Pods" => {
            let pods = m.pods.as_ref();
            let name = pods.map(|p| p.metric.name.clone()).unwrap_or_default();
            let selector_source = pods
                .and_then(|p| p.metric.selector.as_ref())
                .and_then(|s| s.match_labels.as_ref())
                .and_then(|l| l.get("reporter"))
                .is_some_and(|r| r == "source");
            let (reporter, why) = if selector_source || name.contains("source") {
                (
                    "source",
                    format!(
                        "per-pod metric {name} is counted by the callers (reporter=source): demand"
                    ),
                )
            } else {
                (
                    "destination",
                    format!(
                        "per-pod metric {name} is what each pod reports about the requests it takes in"
                    ),
                )
            };
            Mapped {
                reporter,
                target: pods.and_then(|p| average_value(&p.target)),
                why,
            }
        }
        "Object" | "External" => {
            let (name, target) = match (&m.object, &m.external) {
                (Some(o), _) => (o.metric.name.clone(), &o.target),
                (_, Some(e)) => (e.metric.name.clone(), &e.target),
                _ => (String::new(), &MetricTarget::default()),
            };
            Mapped {
                reporter: "source",
                target: average_value(target),
                why: format!(
                    "{} metric {name} is measured outside the pods (an ingress, a queue): demand, which does not fall when pods leave the endpoints",
                    m.type_
                ),
            }
        }
        other => Mapped {
            reporter: "destination",
            target: None,
            why: format!("metric type {other} is not one the import knows"),
        },
    }
}

/// A target of `AverageValue` as a number; other target types are not a per-pod rate.
fn average_value(target: &MetricTarget) -> Option<f64> {
    if target.type_ != "AverageValue" {
        return None;
    }
    let q = target.average_value.as_ref()?;
    let millis = kube_model::quantity::parse_cpu_millis(&q.0).ok()?;
    (millis > 0).then(|| millis as f64 / 1000.0)
}

fn format_number(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

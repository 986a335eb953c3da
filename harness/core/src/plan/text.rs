//! `harness plan`'s text: the load, the warnings, then the control plane at load start and
//! after each timeline action, in words a reader can check against the scenario.

use std::fmt::Write;

use super::{Plan, PlanGenerator, PlanRate};
use crate::scenario::model::{ConnectionModel, Via};
use crate::text::natural_key;

impl Plan {
    /// Readable text.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let variant = self
            .variant
            .as_deref()
            .map(|v| format!(" (variant {v})"))
            .unwrap_or_else(|| " (base document)".into());
        let _ = writeln!(out, "plan for {}{variant}", self.scenario);
        for g in &self.generators {
            let _ = writeln!(out, "  load: {}", generator_text(g));
        }
        let _ = writeln!(
            out,
            "  a new pod is ready {:.1}s after its creation (start-up, then the readiness probe)",
            self.pod_ready_after_s
        );
        for w in &self.warnings {
            let _ = writeln!(out, "  warning: {w}");
        }
        let callers: Vec<&str> = self
            .generators
            .iter()
            .filter(|g| g.via == Via::KubeProxy)
            .map(|g| g.zone.as_str())
            .collect();
        for s in &self.steps {
            let when = s
                .at_s
                .map(|t| format!("at {t:.1}s"))
                .unwrap_or_else(|| "before load".into());
            let _ = writeln!(out, "\n{when}: {}", s.label);
            if s.at_s.is_some() && !(s.deleted.is_empty() && s.created.is_empty()) {
                let list = |pods: &[String]| {
                    if pods.is_empty() {
                        "none".to_owned()
                    } else {
                        pods.join(", ")
                    }
                };
                let _ = writeln!(
                    out,
                    "  pods deleted: {}; created: {}",
                    list(&s.deleted),
                    list(&s.created)
                );
            }
            if let Some(r) = &s.rollout {
                let _ = writeln!(
                    out,
                    "  rollout: {} wave{} of new pods, complete after about {:.1}s",
                    r.waves,
                    if r.waves == 1 { "" } else { "s" },
                    r.duration_s
                );
            }
            let ratios = match &s.zone_cpu_ratios {
                Some(r) => r
                    .iter()
                    .map(|(z, v)| format!("{z}={v:.3}"))
                    .collect::<Vec<_>>()
                    .join(" "),
                None => "none (insufficient node information)".into(),
            };
            let _ = writeln!(out, "  zone CPU ratios: {ratios}");
            let _ = writeln!(
                out,
                "  hints: {}",
                if s.hints_enabled { "enabled" } else { "none" }
            );
            let mut pods: Vec<(&String, _)> = s.pods.iter().collect();
            pods.sort_by(|a, b| natural_key(a.0).cmp(&natural_key(b.0)));
            for (pod, place) in pods {
                let zones = s
                    .hints
                    .get(pod)
                    .map(|z| format!(" forZones={}", z.join(",")))
                    .unwrap_or_default();
                let _ = writeln!(out, "    {pod} on {} ({}){zones}", place.node, place.zone);
            }
            for (zone, pods) in &s.reachable_from {
                // Only where a generator calls through kube-proxy: elsewhere nobody uses it.
                if !callers.contains(&zone.as_str()) {
                    continue;
                }
                let _ = writeln!(
                    out,
                    "  clients in {zone} reach {} pod(s): {}",
                    pods.len(),
                    pods.join(", ")
                );
            }
            for e in &s.events {
                let _ = writeln!(out, "  event {e}");
            }
        }
        out
    }
}

/// `ingress-2a in ap-northeast-2a: 100 rps, 256 connections (a new one per request), 38 SSE
/// streams, through kube-proxy`.
fn generator_text(g: &PlanGenerator) -> String {
    let rate = match g.rate {
        PlanRate::PerSecond(r) => format!("{r} rps"),
        PlanRate::Max => "as fast as the connections allow".to_owned(),
        PlanRate::Ramp { from, to } => format!("{from} → {to} rps over the load"),
    };
    let connections = match g.connection_model {
        ConnectionModel::KeepAlive => format!("{} keep-alive connections", g.connections),
        ConnectionModel::PerRequest => {
            format!(
                "at most {} connections (a new one per request)",
                g.connections
            )
        }
    };
    let mut text = format!("{} in {}: {rate}, {connections}", g.name, g.zone);
    if g.sse_streams > 0 {
        text.push_str(&format!(", {} SSE streams", g.sse_streams));
    }
    text.push_str(match g.via {
        Via::KubeProxy => ", through kube-proxy",
        Via::LoadBalancer => ", through the load balancer",
        Via::Ingress => ", through the ingress replicas",
    });
    if g.start_at_s > 0.0 {
        text.push_str(&format!(", from {:.1}s", g.start_at_s));
    }
    text
}

//! `harness plan`'s text: the load, the warnings, then the control plane at load start and
//! after each timeline action, in words a reader can check against the scenario.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::{Plan, PlanGenerator, PlanRate};
use crate::scenario::model::{ConnectionModel, Via};
use crate::text::{first_few, natural_key};

/// Above this many pods a step is summarised per zone and node (`harness plan --verbose`
/// lists every pod).
pub const POD_LINES_LIMIT: usize = 30;

/// Pod names a line shows before counting the rest.
const NAMES_SHOWN: usize = 8;

impl Plan {
    /// Readable text; a step with more than [`POD_LINES_LIMIT`] pods is summarised per zone
    /// and node.
    pub fn to_text(&self) -> String {
        self.text(false)
    }

    /// Readable text with every pod of every step.
    pub fn to_verbose_text(&self) -> String {
        self.text(true)
    }

    fn text(&self, verbose: bool) -> String {
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
                    } else if verbose {
                        pods.join(", ")
                    } else {
                        first_few(pods, NAMES_SHOWN)
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
            if verbose || pods.len() <= POD_LINES_LIMIT {
                for (pod, place) in pods {
                    let zones = s
                        .hints
                        .get(pod)
                        .map(|z| format!(" forZones={}", z.join(",")))
                        .unwrap_or_default();
                    let _ = writeln!(out, "    {pod} on {} ({}){zones}", place.node, place.zone);
                }
            } else {
                out.push_str(&pods_summary(s));
            }
            for (zone, pods) in &s.reachable_from {
                // Only where a generator calls through kube-proxy: elsewhere nobody uses it.
                if !callers.contains(&zone.as_str()) {
                    continue;
                }
                let names = if verbose {
                    pods.join(", ")
                } else {
                    first_few(pods, NAMES_SHOWN)
                };
                let _ = writeln!(
                    out,
                    "  clients in {zone} reach {} pod(s): {names}",
                    pods.len()
                );
            }
            for (e, times) in collapse(&s.events) {
                match times {
                    1 => {
                        let _ = writeln!(out, "  event {e}");
                    }
                    n => {
                        let _ = writeln!(out, "  event {e} (×{n})");
                    }
                }
            }
        }
        out
    }
}

/// Consecutive identical lines once, with how many times.
fn collapse(lines: &[String]) -> Vec<(&str, usize)> {
    let mut out: Vec<(&str, usize)> = Vec::new();
    for line in lines {
        match out.last_mut() {
            Some((last, n)) if *last == line.as_str() => *n += 1,
            _ => out.push((line, 1)),
        }
    }
    out
}

/// The pods of a large step: per zone their count, nodes and hints, the busiest nodes named.
fn pods_summary(step: &super::PlanStep) -> String {
    let mut zones: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
    let mut hinted: BTreeMap<&str, BTreeMap<String, usize>> = BTreeMap::new();
    for (pod, place) in &step.pods {
        *zones
            .entry(place.zone.as_str())
            .or_default()
            .entry(place.node.as_str())
            .or_default() += 1;
        if let Some(for_zones) = step.hints.get(pod) {
            *hinted
                .entry(place.zone.as_str())
                .or_default()
                .entry(for_zones.join(","))
                .or_default() += 1;
        }
    }
    let mut out = format!(
        "    {} pods (harness plan --verbose lists each):\n",
        step.pods.len()
    );
    for (zone, nodes) in zones {
        let pods: usize = nodes.values().sum();
        let mut by_count: Vec<(&str, usize)> = nodes.into_iter().collect();
        by_count.sort_by(|a, b| b.1.cmp(&a.1).then(natural_key(a.0).cmp(&natural_key(b.0))));
        let named: Vec<String> = by_count.iter().map(|(n, c)| format!("{n} ×{c}")).collect();
        let hints = hinted
            .get(zone)
            .map(|h| {
                let parts: Vec<String> =
                    h.iter().map(|(z, n)| format!("{n} forZones={z}")).collect();
                format!("; {}", parts.join(", "))
            })
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "    {zone}: {pods} pods on {} nodes ({}){hints}",
            by_count.len(),
            first_few(&named, 4)
        );
    }
    out
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

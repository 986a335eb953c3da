//! The words both progress views use: time left, rates, pods ready, hints, one pod's load.

use harness_core::engine::{Observation, PodObservation};

/// `12s/40s · 28s left`.
pub fn clock(t_s: f64, total_s: f64) -> String {
    let t = t_s.max(0.0);
    format!(
        "{:.0}s/{:.0}s · {:.0}s left",
        t.floor(),
        total_s,
        (total_s - t).max(0.0).ceil()
    )
}

/// `100 rps · errors 48.1% · pods ready 4/4 · hints on`.
pub fn summary(obs: &Observation) -> String {
    let ready = obs.pods.iter().filter(|p| p.ready).count();
    let rate = obs
        .achieved_rps
        .map_or_else(|| "— rps".to_string(), |r| format!("{r:.0} rps"));
    let errors = obs.error_rate.map_or_else(
        || "errors —".to_string(),
        |e| format!("errors {:.1}%", e * 100.0),
    );
    format!(
        "{rate} · {errors} · pods ready {ready}/{} · hints {}",
        obs.pods.len(),
        if obs.hints_enabled { "on" } else { "off" }
    )
}

/// `20/20 in flight +93 queued`, or `not ready` appended.
pub fn pod_load(p: &PodObservation) -> String {
    let mut text = if p.max_concurrency > 0 {
        format!("{}/{} in flight", p.in_flight, p.max_concurrency)
    } else {
        format!("{} in flight", p.in_flight)
    };
    if p.queue_depth > 0 {
        text.push_str(&format!(" +{} queued", p.queue_depth));
    }
    if !p.ready {
        text.push_str(" · not ready");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(in_flight: u64, queue_depth: u64, ready: bool) -> PodObservation {
        PodObservation {
            name: "pod-0".into(),
            zone: "a".into(),
            ready,
            in_flight,
            queue_depth,
            max_concurrency: 20,
        }
    }

    #[test]
    fn words() {
        assert_eq!(clock(12.4, 40.0), "12s/40s · 28s left");
        assert_eq!(clock(-1.0, 40.0), "0s/40s · 40s left");
        let obs = Observation {
            pods: vec![pod(20, 93, true), pod(0, 0, false)],
            hints_enabled: true,
            achieved_rps: Some(99.6),
            error_rate: Some(0.4813),
        };
        assert_eq!(
            summary(&obs),
            "100 rps · errors 48.1% · pods ready 1/2 · hints on"
        );
        assert_eq!(pod_load(&obs.pods[0]), "20/20 in flight +93 queued");
        assert_eq!(pod_load(&obs.pods[1]), "0/20 in flight · not ready");
        let quiet = Observation::default();
        assert_eq!(
            summary(&quiet),
            "— rps · errors — · pods ready 0/0 · hints off"
        );
    }
}

//! The shared measurements (DESIGN.md "Measurements") computed from [`RunData`] over a time
//! window: error rates by kind, per-pod skew and starvation, latency, hint flaps, saturation and
//! sidecar rejections, pod lifecycles (termination, rollout, autoscaler), what still
//! reached pods after they left the endpoints, and the ingress replicas' list positions,
//! reloads and restarts. Each metric returns the value and a sentence
//! of evidence for the verdict.

mod cross_zone;
mod ingress;
mod lb_stats;
mod lifecycle;
mod metrics;
mod removal;
pub mod run_data;
mod skew;
mod targets;

pub use cross_zone::*;
pub use ingress::*;
pub use lb_stats::*;
pub use lifecycle::*;
pub use metrics::*;
pub use removal::*;
pub use run_data::*;
pub use skew::*;
pub use targets::*;

/// A half-open interval of the run, in seconds from the load start. Per-second data is
/// counted when its second starts inside the window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    pub from_s: f64,
    pub to_s: f64,
}

impl Window {
    pub fn whole(run: &RunData) -> Self {
        Self {
            from_s: 0.0,
            to_s: run.duration_s,
        }
    }

    /// Whether per-second row `i` (covering [i, i+1)) belongs to the window.
    pub fn has_second(&self, i: usize) -> bool {
        let s = i as f64;
        s >= self.from_s.floor() && s < self.to_s
    }

    /// Whether an instant belongs to the window.
    pub fn has_instant(&self, t_s: f64) -> bool {
        t_s >= self.from_s && t_s < self.to_s
    }
}

/// A measured value (None when nothing in the window could be measured) and its evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub value: Option<f64>,
    pub evidence: String,
}

//! The load balancer's routable targets over time (`minRoutableTargets`): from the pods'
//! joins and leaves of its routable set (`RunData::lb_routable`), the fewest targets it could
//! route to at any instant of a window.

use super::run_data::{LbRoutable, RunData};
use super::{Measured, Window};

/// (time, routable targets) after every change, in time order.
pub fn routable_steps(changes: &[LbRoutable]) -> Vec<(f64, u32)> {
    let mut sorted: Vec<&LbRoutable> = changes.iter().collect();
    sorted.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
    let mut routable = std::collections::BTreeSet::new();
    let mut steps: Vec<(f64, u32)> = Vec::new();
    for change in sorted {
        if change.routable {
            routable.insert(change.pod.as_str());
        } else {
            routable.remove(change.pod.as_str());
        }
        let count = routable.len() as u32;
        // Changes at the same instant count once, after all of them.
        match steps.last_mut() {
            Some((t, c)) if *t == change.t_s => *c = count,
            _ => steps.push((change.t_s, count)),
        }
    }
    steps
}

/// The fewest routable targets at any instant of the window: the count at its start and
/// after each change inside it. Nothing measured without a load balancer.
pub fn min_routable_targets(run: &RunData, window: Window) -> Measured {
    if run.lb_routable.is_empty() {
        return Measured {
            value: None,
            evidence: "the load balancer reported no routable targets".into(),
        };
    }
    let steps = routable_steps(&run.lb_routable);
    let at_start = steps
        .iter()
        .take_while(|(t, _)| *t <= window.from_s)
        .last()
        .map(|(_, c)| *c)
        .unwrap_or(0);
    let mut min = (at_start, window.from_s);
    for (t, c) in steps.iter().filter(|(t, _)| window.has_instant(*t)) {
        if *c < min.0 {
            min = (*c, *t);
        }
    }
    let max = steps
        .iter()
        .filter(|(t, _)| window.has_instant(*t))
        .map(|(_, c)| *c)
        .chain([at_start])
        .max()
        .unwrap_or(at_start);
    Measured {
        value: Some(f64::from(min.0)),
        evidence: format!(
            "{} routable targets at the window's start, fewest {} (at {:.1}s), most {max}",
            at_start, min.0, min.1
        ),
    }
}

//! Each HPA sync: the destination-side rate it reports is the sum over the pods it counted,
//! and each of those pods existed at that moment. "At that moment" is by the timeline's order,
//! as well as its clock: a sync's own scale-down deletes pods at the same instant, after it
//! counted them (a soak found the clock comparison alone calling those pods dead).

use std::collections::BTreeMap;

use super::{AuditCheck, Check};
use crate::measure::{EventKind, RunData, TerminationStage};

/// A relative tolerance for sums of rates (floating point).
const RATE_TOLERANCE: f64 = 1e-9;

/// An event's time and its position on the timeline (which orders events of one instant).
type Instant = (f64, usize);

/// Whether `a` comes before `b`.
fn before(a: &Instant, b: &Instant) -> bool {
    a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).is_lt()
}

pub(super) fn checks(run: &RunData) -> Vec<AuditCheck> {
    // Pod → (created, deleted), each as (time, position on the timeline).
    let mut life: BTreeMap<&str, (Instant, Option<Instant>)> = BTreeMap::new();
    for (i, e) in run.events.iter().enumerate() {
        match &e.kind {
            EventKind::Pod {
                pod, created: true, ..
            } => {
                life.entry(pod.as_str()).or_insert(((e.t_s, i), None));
            }
            EventKind::Termination {
                pod,
                stage: TerminationStage::Deleted,
            } => {
                if let Some((_, gone)) = life.get_mut(pod.as_str()) {
                    gone.get_or_insert((e.t_s, i));
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    for (at, e) in run.events.iter().enumerate() {
        let EventKind::Autoscaler {
            destination_rps,
            destination_by_pod,
            ..
        } = &e.kind
        else {
            continue;
        };
        let subject = format!("HPA sync at {:.1}s", e.t_s);
        // `+ 0.0`: an empty sum of f64 is -0.0, which would read "-0.000/s".
        let sum: f64 = destination_by_pod.values().sum::<f64>() + 0.0;
        let destination_rps = &(*destination_rps + 0.0);
        let check = Check::new("autoscalerCountsLivePods", &subject)
            .value("destinationRps", *destination_rps)
            .value("sumOverCountedPods", sum);
        if destination_by_pod.is_empty() && *destination_rps != 0.0 {
            out.push(check.skip(
                format!("destination rate {destination_rps:.1}/s"),
                "the target recorded the HPA's own figure, not the pods it counted",
            ));
            continue;
        }
        let dead: Vec<&str> = destination_by_pod
            .keys()
            .map(String::as_str)
            .filter(|pod| match life.get(pod) {
                Some((created, gone)) => {
                    before(&(e.t_s, at), created) || gone.is_some_and(|g| before(&g, &(e.t_s, at)))
                }
                None => true,
            })
            .collect();
        let close =
            (destination_rps - sum).abs() <= RATE_TOLERANCE * destination_rps.abs().max(1.0);
        let mut statement = format!(
            "destination rate {destination_rps:.3}/s = the sum over the {} pods it counted {sum:.3}/s",
            destination_by_pod.len()
        );
        if !dead.is_empty() {
            statement.push_str(&format!("; not alive then: {}", dead.join(", ")));
        }
        out.push(check.expect(close && dead.is_empty(), statement));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::RecordedEvent;

    #[test]
    fn a_sync_that_counted_no_pod_reads_zero_not_minus_zero() {
        let run = RunData {
            events: vec![RecordedEvent {
                t_s: -1.0,
                kind: EventKind::Autoscaler {
                    current: 4,
                    desired: 4,
                    source_rps: 0.0,
                    destination_rps: -0.0,
                    destination_by_pod: BTreeMap::new(),
                },
            }],
            ..RunData::default()
        };
        let checks = checks(&run);
        assert_eq!(checks.len(), 1);
        assert_eq!(
            checks[0].statement,
            "destination rate 0.000/s = the sum over the 0 pods it counted 0.000/s"
        );
        assert!(checks[0].values.values().all(|v| v.is_sign_positive()));
    }
}

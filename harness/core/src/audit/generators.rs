//! Each load generator's report against itself: its outcomes, its timeline and its per-pod
//! attribution add up to its totals.

use super::{AuditCheck, Check};
use crate::measure::RunData;

pub(super) fn checks(run: &RunData) -> Vec<AuditCheck> {
    let mut out = Vec::new();
    for g in &run.generators {
        let r = &g.report;
        let subject = format!("generator {}", g.name);
        let responses = r.total_responses();
        let errors = r.total_transport_errors();
        out.push(
            Check::new("attemptedAnsweredOrFailed", &subject)
                .value("attempted", r.attempted as f64)
                .value("responses", responses as f64)
                .value("transportErrors", errors as f64)
                .value("notSent", r.dropped as f64)
                .expect(
                    r.attempted == responses + errors,
                    format!(
                        "attempted {} = responses {responses} + transport errors {errors} \
                         (not sent, the open loop's schedule having fallen behind: {})",
                        r.attempted, r.dropped
                    ),
                ),
        );
        let row_attempted: u64 = r.timeline.iter().map(|row| row.attempted).sum();
        let row_responses: u64 = r
            .timeline
            .iter()
            .map(|row| row.responses.values().sum::<u64>())
            .sum();
        out.push(
            Check::new("timelineAddsUp", &subject)
                .value("attempted", r.attempted as f64)
                .value("timelineAttempted", row_attempted as f64)
                .value("responses", responses as f64)
                .value("timelineResponses", row_responses as f64)
                .expect(
                    row_attempted == r.attempted && row_responses == responses,
                    format!(
                        "per-second rows attempted {row_attempted} = attempted {}, responses \
                         {row_responses} = responses {responses}",
                        r.attempted
                    ),
                ),
        );
        let attributed: u64 = r
            .by_backend
            .values()
            .map(|b| b.responses.values().sum::<u64>())
            .sum();
        out.push(
            Check::new("attributionAddsUp", &subject)
                .value("responses", responses as f64)
                .value("byPod", attributed as f64)
                .expect(
                    attributed == responses,
                    format!(
                        "responses by the pod that answered (or none named) {attributed} = \
                         responses {responses}"
                    ),
                ),
        );
    }
    out
}

//! Each pod's two sides: what its callers got back from it against what arrived at its
//! sidecar, and the sidecar's own arithmetic.

use super::{AuditCheck, Check};
use crate::measure::RunData;
use crate::report::Summary;

pub(super) fn checks(run: &RunData, summary: &Summary) -> Vec<AuditCheck> {
    let mut out = Vec::new();
    for pod in &summary.pods {
        let Some(d) = &pod.destination else {
            continue;
        };
        let rejected: u64 = d.rejected.values().sum();
        let accounted = d.admitted + rejected + d.queued_at_end;
        out.push(
            Check::new("arrivalsAccounted", &pod.name)
                .value("arrived", d.arrived as f64)
                .value("admitted", d.admitted as f64)
                .value("rejected", rejected as f64)
                .value("queuedAtEnd", d.queued_at_end as f64)
                .expect(
                    accounted <= d.arrived,
                    format!(
                        "admitted {} + rejected {rejected} + queued {} ≤ arrived {} (the rest, {}, abandoned)",
                        d.admitted,
                        d.queued_at_end,
                        d.arrived,
                        d.arrived as i64 - accounted as i64
                    ),
                ),
        );
        let source = pod.source.clone().unwrap_or_default();
        let answered = source.answered();
        let streams = source.streams_opened;
        let answers = Check::new("answersWithinArrivals", &pod.name)
            .value("answered", answered as f64)
            .value("streamsOpened", streams as f64)
            .value("arrived", d.arrived as f64);
        let statement = format!(
            "answered at the callers {answered} + SSE streams {streams} ≤ arrived at its sidecar {}",
            d.arrived
        );
        let cut = run.counters_cut.contains(&pod.name);
        let why_cut = "the pod was killed at the end of its grace period before its sidecar reported \
                       its final counters: its last sample may miss later arrivals";
        out.push(if cut {
            answers.skip(statement, why_cut)
        } else {
            answers.expect(answered + streams <= d.arrived, statement)
        });
        let callers_503 = source.responses.get("503").copied().unwrap_or(0);
        let rejections = Check::new("rejectionsAnswered", &pod.name)
            .value("callers503", callers_503 as f64)
            .value("rejected", rejected as f64);
        let statement = format!(
            "503s its callers got from it {callers_503} ≤ its sidecar's rejections {rejected}"
        );
        out.push(if cut {
            rejections.skip(statement, why_cut)
        } else {
            rejections.expect(callers_503 <= rejected, statement)
        });
    }
    out
}

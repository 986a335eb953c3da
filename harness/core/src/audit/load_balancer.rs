//! The load balancer's account of each pod, against itself and against the pod's sidecar.

use super::{AuditCheck, Check};
use crate::measure::RunData;
use crate::report::Summary;

pub(super) fn checks(run: &RunData, summary: &Summary) -> Vec<AuditCheck> {
    let mut out = Vec::new();
    for (pod, a) in &run.lb_accounts {
        let subject = format!("{pod} at the load balancer");
        let ended = a.responses + a.client_closed + a.in_flight;
        out.push(
            Check::new("loadBalancerSentAccounted", &subject)
                .value("sent", a.sent as f64)
                .value("responses", a.responses as f64)
                .value("clientClosed", a.client_closed as f64)
                .value("inFlight", a.in_flight as f64)
                .expect(
                    a.sent == ended,
                    format!(
                        "sent {} = responses {} + closed by the client {} + in flight {}",
                        a.sent, a.responses, a.client_closed, a.in_flight
                    ),
                ),
        );
        let Some(d) = summary
            .pods
            .iter()
            .find(|p| &p.name == pod)
            .and_then(|p| p.destination.as_ref())
        else {
            continue;
        };
        let relayed = a.responses.saturating_sub(a.own_errors);
        let check = Check::new("loadBalancerWithinArrivals", &subject)
            .value("relayed", relayed as f64)
            .value("arrived", d.arrived as f64);
        let statement = format!(
            "responses relayed from the pod {relayed} ≤ arrived at its sidecar {}",
            d.arrived
        );
        out.push(if run.counters_cut.contains(pod) {
            check.skip(
                statement,
                "the pod was killed before its sidecar reported its final counters",
            )
        } else {
            check.expect(relayed <= d.arrived, statement)
        });
    }
    out
}

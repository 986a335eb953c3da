//! The summary's own figures against each other: the per-pod rows and what no pod was named
//! for add up to the generators' totals; the traffic matrix, the per-second series and the
//! totals of the load phase agree; the pods' shares sum to one.

use std::collections::BTreeMap;

use super::{AuditCheck, Check};
use crate::measure::{RunData, Window};
use crate::report::{PodSource, Summary};

pub(super) fn checks(run: &RunData, summary: &Summary) -> Vec<AuditCheck> {
    let mut out = Vec::new();
    if run.generators.is_empty() {
        return out;
    }
    // Whole runs of the generators (warm-up and drain included): the per-pod rows.
    let sources: Vec<&PodSource> = summary
        .pods
        .iter()
        .filter_map(|p| p.source.as_ref())
        .chain(summary.unattributed.as_ref())
        .collect();
    let rows_answered: u64 = sources.iter().map(|s| s.answered()).sum();
    let rows_transport: u64 = sources.iter().map(|s| s.transport()).sum();
    let rows_streams: u64 = sources.iter().map(|s| s.streams_opened).sum();
    let generated: u64 = run
        .generators
        .iter()
        .map(|g| g.report.total_responses())
        .sum();
    let generated_transport: u64 = run
        .generators
        .iter()
        .map(|g| g.report.total_transport_errors())
        .sum();
    let generated_streams: u64 = run
        .generators
        .iter()
        .map(|g| g.report.sse.streams_opened)
        .sum();
    out.push(
        Check::new("podRowsAreGeneratorTotals", "summary")
            .value("rowsAnswered", rows_answered as f64)
            .value("generatorResponses", generated as f64)
            .value("rowsTransportErrors", rows_transport as f64)
            .value("generatorTransportErrors", generated_transport as f64)
            .value("rowsStreams", rows_streams as f64)
            .value("generatorStreams", generated_streams as f64)
            .expect(
                rows_answered == generated
                    && rows_transport == generated_transport
                    && rows_streams == generated_streams,
                format!(
                    "per-pod rows + unattributed: answered {rows_answered} = the generators' \
                     responses {generated}, transport errors {rows_transport} = \
                     {generated_transport}, SSE streams {rows_streams} = {generated_streams}"
                ),
            ),
    );

    // The load phase (warm-up excluded): totals, matrix and series.
    let window = Window::whole(run);
    let totals_responses: u64 = summary.totals.responses.values().sum();
    let matrix: u64 = summary
        .traffic_matrix
        .values()
        .flat_map(|z| z.values())
        .sum();
    out.push(
        Check::new("matrixIsTotals", "summary")
            .value("matrix", matrix as f64)
            .value("totalsResponses", totals_responses as f64)
            .expect(
                matrix == totals_responses,
                format!("traffic matrix {matrix} = responses of the load phase {totals_responses}"),
            ),
    );
    let mut by_zone: BTreeMap<&str, u64> = BTreeMap::new();
    for (g, second, row) in run.load_seconds() {
        if window.has_second(second) {
            *by_zone.entry(g.zone.as_str()).or_default() += row.responses.values().sum::<u64>();
        }
    }
    for (zone, expected) in &by_zone {
        let got: u64 = summary
            .traffic_matrix
            .get(*zone)
            .map_or(0, |row| row.values().sum());
        out.push(
            Check::new("matrixRowIsZoneTotal", format!("origin zone {zone}"))
                .value("matrixRow", got as f64)
                .value("generatorResponses", *expected as f64)
                .expect(
                    got == *expected,
                    format!("matrix row {got} = responses of the zone's generators {expected}"),
                ),
        );
    }
    let series_attempted: u64 = summary.series.attempted.iter().sum();
    out.push(
        Check::new("seriesAreTotals", "summary")
            .value("seriesAttempted", series_attempted as f64)
            .value("totalsAttempted", summary.totals.attempted as f64)
            .expect(
                series_attempted == summary.totals.attempted,
                format!(
                    "per-second attempts {series_attempted} = attempted {}",
                    summary.totals.attempted
                ),
            ),
    );
    let errors_series: u64 = summary
        .series
        .errors_by_kind
        .values()
        .flat_map(|v| v.iter())
        .sum();
    let errors_totals = summary
        .totals
        .responses
        .iter()
        .filter(|(code, _)| !code.starts_with('2'))
        .map(|(_, n)| n)
        .sum::<u64>()
        + summary.totals.transport_errors.values().sum::<u64>();
    out.push(
        Check::new("errorSeriesAreTotals", "summary")
            .value("seriesErrors", errors_series as f64)
            .value("totalsErrors", errors_totals as f64)
            .expect(
                errors_series == errors_totals,
                format!(
                    "per-second errors by kind {errors_series} = non-2xx and transport errors \
                     {errors_totals}"
                ),
            ),
    );
    for (pod, per_second) in &summary.series.requests_per_pod {
        let series: u64 = per_second.iter().sum();
        let column: u64 = summary
            .traffic_matrix
            .values()
            .filter_map(|row| row.get(pod))
            .sum();
        if series == 0 && column == 0 {
            continue;
        }
        out.push(
            Check::new("podSeriesIsMatrixColumn", pod.as_str())
                .value("series", series as f64)
                .value("matrixColumn", column as f64)
                .expect(
                    series == column,
                    format!("answered per second {series} = its traffic-matrix column {column}"),
                ),
        );
    }
    let requests: u64 = summary.pods.iter().map(|p| p.requests).sum();
    if requests > 0 {
        let shares: f64 = summary.pods.iter().map(|p| p.share).sum();
        out.push(
            Check::new("sharesSumToOne", "summary")
                .value("sumOfShares", shares)
                .expect(
                    (shares - 1.0).abs() <= 1e-9,
                    format!("the pods' shares sum to {shares:.12}"),
                ),
        );
    }
    out
}

//! The seconds a chart shows that the load did not fill (it ended inside its last second):
//! where they begin, their shading with what it means, and their legend rows.

use std::fmt::Write as _;

use super::{LEGEND_ROW, PARTIAL_FILL, RIGHT, TOP, WIDTH, legend_entry, x_of};
use crate::report::escape;

/// Where the seconds the load did not fill begin — the load's end — when it ended inside the
/// last of `seconds` seconds drawn (or earlier); `None` when every second drawn is whole.
pub fn partial_from(load_end_s: Option<f64>, seconds: usize) -> Option<f64> {
    let end = load_end_s?;
    let n = seconds as f64;
    (seconds > 0 && end.is_finite() && end > 0.0 && end < n - 1e-6).then_some(end)
}

/// The first second that is not a whole second of load.
pub(super) fn first_partial_second(end: f64) -> usize {
    end.floor() as usize
}

/// The seconds from the load's end to the end of the chart, shaded, with what they are.
pub(super) fn partial_band(svg: &mut String, end: f64, span: f64, plot_bottom: f64) {
    let from = first_partial_second(end) as f64;
    let x0 = x_of(from, span);
    let _ = write!(
        svg,
        "<rect class=\"partial\" x=\"{x0:.1}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{PARTIAL_FILL}\" opacity=\"0.45\"><title>{}</title></rect>",
        (x_of(span, span) - x0).max(1.0),
        plot_bottom - TOP,
        escape(&partial_text(end))
    );
}

/// `load ended at 40.3s: the second 40s–41s holds 0.3 s of load`.
fn partial_text(end: f64) -> String {
    let from = first_partial_second(end);
    format!(
        "last second partial: the load ended at {end:.1}s, so {from}s–{}s holds {:.1} s of load (drawn hollow, as measured)",
        from + 1,
        end - from as f64
    )
}

/// Two legend rows below the series': the shading's swatch and the load's end.
pub(super) fn partial_legend(svg: &mut String, row: usize, end: f64) {
    legend_entry(svg, row, "last second partial:", PARTIAL_FILL);
    let y = TOP + 10.0 + LEGEND_ROW * (row + 1) as f64;
    let _ = write!(
        svg,
        "<text class=\"partial-note\" x=\"{:.1}\" y=\"{y:.1}\" font-size=\"11\">load ended at {end:.1}s</text>",
        WIDTH - RIGHT + 24.0
    );
}

//! The lanes chart: one row per pod of labelled spans over time (hints per endpoint,
//! termination windows) with optional per-second bars, on the line charts' frame and markers.

use std::fmt::Write;

use super::*;

/// One lane of a lanes chart: spans over time, and optional per-second bars.
pub struct Lane<'a> {
    pub label: &'a str,
    pub spans: Vec<Span>,
    /// Per-second counts drawn as bars inside the lane (e.g. failures), with their unit.
    pub bars: Vec<u64>,
}

/// A coloured interval `[from_s, to_s)` with hover text.
pub struct Span {
    pub from_s: f64,
    pub to_s: f64,
    pub color: &'static str,
    pub text: String,
}

/// A chart with one row per lane; `legend` explains the span colours, `bar_label` the bars.
pub struct LanesChart<'a> {
    pub id: &'a str,
    pub title: &'a str,
    pub seconds: usize,
    pub lanes: Vec<Lane<'a>>,
    pub legend: Vec<(String, &'static str)>,
    pub bar_label: &'a str,
    pub markers: &'a [Marker],
    /// When the load ended: a last second it did not fill is shaded, as on the line charts.
    pub load_end_s: Option<f64>,
}

/// Renders `chart`.
pub fn lanes_chart(chart: &LanesChart<'_>) -> String {
    let span = chart.seconds as f64;
    let rows = chart.lanes.len().max(1) as f64;
    let partial = partial_from(chart.load_end_s, chart.seconds);
    let legend_rows = chart.legend.len() + 1 + if partial.is_some() { 2 } else { 0 };
    let legend_height = LEGEND_ROW * legend_rows as f64 + TOP;
    let height = TOP + (LANE_HEIGHT * rows).max(legend_height) + BOTTOM;
    let plot_bottom = height - BOTTOM;
    let mut svg = open_svg(chart.id, chart.title, height);
    if let Some(end) = partial {
        let _ = write!(svg, " data-load-end=\"{end}\"");
    }
    let _ = write!(svg, "><title>{}</title>", escape(chart.title));
    let _ = write!(
        svg,
        "<rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"none\" stroke=\"#bbb\"/>",
        WIDTH - LEFT - RIGHT,
        plot_bottom - TOP
    );
    if let Some(end) = partial {
        partial_band(&mut svg, end, span, plot_bottom);
    }
    time_ticks(&mut svg, span, plot_bottom);
    let bar_max = chart
        .lanes
        .iter()
        .flat_map(|l| l.bars.iter().copied())
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    for (row, lane) in chart.lanes.iter().enumerate() {
        let y = TOP + LANE_HEIGHT * row as f64;
        let bars_sum: u64 = lane.bars.iter().sum();
        let _ = write!(
            svg,
            "<g class=\"lane\" data-lane=\"{}\" data-spans=\"{}\" data-bars-sum=\"{bars_sum}\"><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\">{}</text>",
            escape(lane.label),
            lane.spans.len(),
            LEFT - 4.0,
            y + LANE_HEIGHT * 0.65,
            escape(lane.label)
        );
        for s in &lane.spans {
            let x0 = x_of(s.from_s.max(0.0), span);
            // A span shorter than the scale shows (a pod killed at once) still gets 2 px.
            let x1 = x_of(s.to_s.min(span), span).max(x0 + 2.0);
            if s.to_s < s.from_s || s.from_s > span {
                continue;
            }
            let _ = write!(
                svg,
                "<rect x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{SPAN_HEIGHT}\" fill=\"{}\" opacity=\"0.85\"><title>{}</title></rect>",
                y + 2.0,
                x1 - x0,
                s.color,
                escape(&s.text)
            );
        }
        for (t, n) in lane.bars.iter().enumerate().filter(|(_, n)| **n > 0) {
            let x0 = x_of(t as f64, span);
            let x1 = x_of(t as f64 + 1.0, span);
            let h = (LANE_HEIGHT - SPAN_HEIGHT - 5.0) * (*n as f64 / bar_max);
            let _ = write!(
                svg,
                "<rect class=\"bar\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\" fill=\"#82071e\"><title>{}: {n} {} in {t}s–{}s</title></rect>",
                x0 + 0.5,
                y + LANE_HEIGHT - 1.0 - h,
                (x1 - x0 - 1.0).max(0.8),
                escape(lane.label),
                escape(chart.bar_label),
                t + 1
            );
        }
        svg.push_str("</g>");
    }
    for (i, (label, c)) in chart.legend.iter().enumerate() {
        legend_entry(&mut svg, i, label, c);
    }
    let mut row = chart.legend.len();
    if chart.lanes.iter().any(|l| !l.bars.is_empty()) {
        legend_entry(&mut svg, row, chart.bar_label, "#82071e");
        row += 1;
    }
    if let Some(end) = partial {
        partial_legend(&mut svg, row, end);
    }
    draw_markers(&mut svg, chart.markers, span, plot_bottom);
    svg.push_str("</svg>");
    svg
}

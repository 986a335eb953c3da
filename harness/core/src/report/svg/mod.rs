//! Inline-SVG charts for report.html, with values on hover through SVG `<title>` elements (no
//! scripts, no fonts beyond the page's): a line chart of per-second series with action markers
//! and an optional limit line, where every second is a hover column listing each series' value;
//! and a lanes chart (one row per pod) of labelled spans with per-second bars, for hints per
//! endpoint and termination windows. Every series carries `data-series`, `data-max` and
//! `data-sum` so a test can read what was drawn from the rendered DOM.
//!
//! The y axis ([`Axis`], in `axis`) runs from 0 to a tick at or above the highest value (and the limit),
//! with a few pixels of headroom above it, so no point lies on or beyond the plot's edge; count
//! axes ([`Unit::Count`]) tick whole numbers only. A limit line is painted beneath the series,
//! thinner than they are, so a series sitting at its limit stays visible on top of it. When the
//! load ended inside the last second drawn, that second is shaded and its points are hollow,
//! joined by a dashed segment: it holds only a fraction of a second of load, and its value is
//! drawn as measured (the series still add up to the totals).

use std::fmt::Write;

use super::{Marker, escape};

mod axis;
mod lanes;
mod partial;

pub use axis::{Axis, Unit};
pub use lanes::{Lane, LanesChart, Span, lanes_chart};
pub use partial::partial_from;
use partial::{first_partial_second, partial_band, partial_legend};

const WIDTH: f64 = 1100.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 14.0;
const BOTTOM: f64 = 30.0;
const PLOT_HEIGHT: f64 = 190.0;
const LEGEND_ROW: f64 = 15.0;
/// Pixels between the plot's top edge and the axis' top tick.
const HEADROOM: f64 = 10.0;
/// Stroke widths: a series is drawn wider than the dashed limit beneath it.
const SERIES_STROKE: f64 = 2.0;
const LIMIT_STROKE: f64 = 1.0;
/// The shading of seconds the load did not fill.
const PARTIAL_FILL: &str = "#d0d7de";
const LANE_HEIGHT: f64 = 24.0;
/// Spans fill the top of a lane, bars grow in the part below.
const SPAN_HEIGHT: f64 = 9.0;

/// Enough colours that 20 pods stay apart (Tableau 20, dark shades first).
pub const PALETTE: [&str; 20] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94",
    "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5",
];

/// One named series; `None` where it has no value (drawn as a gap).
pub struct Line<'a> {
    pub label: &'a str,
    pub values: Vec<Option<f64>>,
}

impl<'a> Line<'a> {
    /// A series with a value every second.
    pub fn dense(label: &'a str, values: impl IntoIterator<Item = f64>) -> Self {
        Self {
            label,
            values: values.into_iter().map(Some).collect(),
        }
    }
}

/// A line chart.
pub struct LineChart<'a> {
    /// `data-chart` of the `<svg>`: what the chart shows, for tests and styling.
    pub id: &'a str,
    pub title: &'a str,
    pub unit: Unit,
    pub lines: Vec<Line<'a>>,
    pub markers: &'a [Marker],
    /// A horizontal reference line (e.g. the concurrency limit) and its label.
    pub limit: Option<(f64, String)>,
    /// When the load ended (seconds from its start): a last second it did not fill is marked.
    pub load_end_s: Option<f64>,
}

fn x_of(t: f64, seconds: f64) -> f64 {
    LEFT + (WIDTH - LEFT - RIGHT) * (t / seconds.max(1.0))
}

fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Renders `chart`.
pub fn line_chart(chart: &LineChart<'_>) -> String {
    let seconds = chart
        .lines
        .iter()
        .map(|l| l.values.len())
        .max()
        .unwrap_or(0);
    let span = seconds as f64;
    let data_max = chart
        .lines
        .iter()
        .flat_map(|l| l.values.iter().flatten().copied())
        .filter(|v| v.is_finite())
        .fold(0.0_f64, f64::max);
    let axis = Axis::new(
        data_max.max(chart.limit.as_ref().map_or(0.0, |l| l.0)),
        chart.unit.whole(),
    );
    let partial = partial_from(chart.load_end_s, seconds);
    let legend_rows = chart.lines.len() + if partial.is_some() { 2 } else { 0 };
    let legend_height = LEGEND_ROW * legend_rows as f64 + TOP;
    let height = TOP + PLOT_HEIGHT.max(legend_height) + BOTTOM;
    let plot_bottom = height - BOTTOM;
    let y_of = y_scale(axis, plot_bottom);
    let mut svg = open_svg(chart.id, chart.title, height);
    if let Some(end) = partial {
        let _ = write!(svg, " data-load-end=\"{end}\"");
    }
    svg.push('>');
    let _ = write!(svg, "<title>{}</title>", escape(chart.title));
    frame(&mut svg, span, plot_bottom, chart.unit, axis, &y_of);
    if let Some(end) = partial {
        partial_band(&mut svg, end, span, plot_bottom);
    }
    // Painted first, so every series lies on top of it.
    if let Some((limit, label)) = &chart.limit {
        let y = y_of(*limit);
        let _ = write!(
            svg,
            "<g class=\"limit\" data-limit=\"{limit}\"><title>{}</title><line x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#cf222e\" stroke-width=\"{LIMIT_STROKE}\" stroke-dasharray=\"6 3\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" fill=\"#cf222e\" text-anchor=\"end\">{}</text></g>",
            escape(label),
            WIDTH - RIGHT,
            WIDTH - RIGHT - 4.0,
            y - 3.0,
            escape(label)
        );
    }
    for (i, line) in chart.lines.iter().enumerate() {
        series(&mut svg, line, i, span, chart.unit, partial, &y_of);
        legend_entry(&mut svg, i, line.label, color(i));
    }
    if let Some(end) = partial {
        partial_legend(&mut svg, chart.lines.len(), end);
    }
    draw_markers(&mut svg, chart.markers, span, plot_bottom);
    hover_columns(&mut svg, chart, seconds, partial, plot_bottom);
    svg.push_str("</svg>");
    svg
}

/// Value → y: 0 at the plot's bottom, the axis' top tick `HEADROOM` below its top edge.
fn y_scale(axis: Axis, plot_bottom: f64) -> impl Fn(f64) -> f64 {
    let top = axis.top();
    let height = plot_bottom - TOP - HEADROOM;
    move |v: f64| plot_bottom - height * (v / top)
}

fn series(
    svg: &mut String,
    line: &Line<'_>,
    i: usize,
    span: f64,
    unit: Unit,
    partial: Option<f64>,
    y_of: &dyn Fn(f64) -> f64,
) {
    let values: Vec<f64> = line
        .values
        .iter()
        .flatten()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    let max = values.iter().copied().fold(0.0_f64, f64::max);
    let sum: f64 = values.iter().sum();
    let _ = write!(
        svg,
        "<g class=\"series\" data-series=\"{}\" data-max=\"{max}\" data-sum=\"{sum}\" data-points=\"{}\"><title>{}: highest {}</title>",
        escape(line.label),
        values.len(),
        escape(line.label),
        unit.format(max)
    );
    let c = color(i);
    let first_partial = partial.map_or(usize::MAX, first_partial_second);
    let point = |t: usize, v: f64| format!("{:.1},{:.1}", x_of(t as f64 + 0.5, span), y_of(v));
    // One polyline per run of whole seconds with values; a lone point is a dot.
    let mut run: Vec<String> = Vec::new();
    let flush = |svg: &mut String, run: &mut Vec<String>| {
        match run.len() {
            0 => {}
            1 => {
                let (x, y) = run[0].split_once(',').unwrap_or(("0", "0"));
                let _ = write!(svg, "<circle cx=\"{x}\" cy=\"{y}\" r=\"2\" fill=\"{c}\"/>");
            }
            _ => {
                let _ = write!(
                    svg,
                    "<polyline fill=\"none\" stroke=\"{c}\" stroke-width=\"{SERIES_STROKE}\" points=\"{}\"/>",
                    run.join(" ")
                );
            }
        }
        run.clear();
    };
    let whole = line.values.len().min(first_partial);
    for (t, v) in line.values.iter().enumerate().take(whole) {
        match v.filter(|v| v.is_finite()) {
            Some(v) => run.push(point(t, v)),
            None => flush(svg, &mut run),
        }
    }
    flush(svg, &mut run);
    // The seconds the load did not fill: a dashed segment from the last whole second, and
    // hollow points.
    let mut previous = whole.checked_sub(1).and_then(|t| {
        line.values[t]
            .filter(|v| v.is_finite())
            .map(|v| point(t, v))
    });
    for (t, v) in line.values.iter().enumerate().skip(whole) {
        let Some(v) = v.filter(|v| v.is_finite()) else {
            previous = None;
            continue;
        };
        let here = point(t, v);
        if let Some(from) = &previous {
            let _ = write!(
                svg,
                "<polyline class=\"partial\" fill=\"none\" stroke=\"{c}\" stroke-width=\"{SERIES_STROKE}\" stroke-dasharray=\"3 2\" points=\"{from} {here}\"/>"
            );
        }
        let (x, y) = here.split_once(',').unwrap_or(("0", "0"));
        let _ = write!(
            svg,
            "<circle class=\"partial\" cx=\"{x}\" cy=\"{y}\" r=\"2.5\" fill=\"#fff\" stroke=\"{c}\" stroke-width=\"1.5\"/>"
        );
        previous = Some(here);
    }
    svg.push_str("</g>");
}

/// Transparent full-height columns, one per second, whose titles list every series' value.
fn hover_columns(
    svg: &mut String,
    chart: &LineChart<'_>,
    seconds: usize,
    partial: Option<f64>,
    plot_bottom: f64,
) {
    let span = seconds as f64;
    svg.push_str("<g class=\"hover\">");
    for t in 0..seconds {
        let x0 = x_of(t as f64, span);
        let x1 = x_of(t as f64 + 1.0, span);
        let mut text = format!("{t}s–{}s", t + 1);
        if let Some(end) = partial.filter(|end| t >= first_partial_second(*end)) {
            let _ = write!(text, " (partial: the load ended at {end:.1}s)");
        }
        for line in &chart.lines {
            let value = line.values.get(t).copied().flatten();
            let _ = write!(
                text,
                "\n{}: {}",
                line.label,
                value.map_or_else(|| "—".to_string(), |v| chart.unit.format(v))
            );
        }
        let _ = write!(
            svg,
            "<rect x=\"{x0:.1}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"transparent\"><title>{}</title></rect>",
            (x1 - x0).max(0.5),
            plot_bottom - TOP,
            escape(&text)
        );
    }
    svg.push_str("</g>");
}

/// The `<svg` start tag, left open for more attributes; the caller closes it and adds the
/// `<title>` (the first element, which report.html shows above the chart).
fn open_svg(id: &str, title: &str, height: f64) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" data-chart=\"{}\" viewBox=\"0 0 {WIDTH} {height}\" width=\"{WIDTH}\" height=\"{height}\" role=\"img\" aria-label=\"{}\"",
        escape(id),
        escape(title)
    )
}

fn frame(
    svg: &mut String,
    span: f64,
    plot_bottom: f64,
    unit: Unit,
    axis: Axis,
    y_of: &dyn Fn(f64) -> f64,
) {
    let _ = write!(
        svg,
        "<rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"none\" stroke=\"#bbb\"/>",
        WIDTH - LEFT - RIGHT,
        plot_bottom - TOP
    );
    for v in axis.ticks() {
        let y = y_of(v);
        if v > 0.0 {
            let _ = write!(
                svg,
                "<line x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#eee\"/>",
                WIDTH - RIGHT
            );
        }
        let _ = write!(
            svg,
            "<text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\">{}</text>",
            LEFT - 4.0,
            y + 3.5,
            escape(&unit.tick_label(v))
        );
    }
    let _ = write!(
        svg,
        "<text x=\"12\" y=\"{:.1}\" font-size=\"10\" transform=\"rotate(-90 12 {:.1})\" text-anchor=\"middle\">{}</text>",
        (TOP + plot_bottom) / 2.0,
        (TOP + plot_bottom) / 2.0,
        escape(unit.axis_label())
    );
    time_ticks(svg, span, plot_bottom);
}

fn time_ticks(svg: &mut String, span: f64, plot_bottom: f64) {
    let step = [1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0]
        .into_iter()
        .find(|s| span / s <= 12.0)
        .unwrap_or(600.0);
    let mut t = 0.0;
    while t <= span {
        let _ = write!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"middle\">{t:.0}s</text>",
            x_of(t, span),
            plot_bottom + 14.0
        );
        t += step;
    }
}

fn legend_entry(svg: &mut String, i: usize, label: &str, c: &str) {
    let y = TOP + 10.0 + LEGEND_ROW * i as f64;
    let x = WIDTH - RIGHT + 10.0;
    let _ = write!(
        svg,
        "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"10\" height=\"10\" fill=\"{c}\"/><text x=\"{:.1}\" y=\"{y:.1}\" font-size=\"11\">{}</text>",
        y - 9.0,
        x + 14.0,
        escape(label)
    );
}

fn draw_markers(svg: &mut String, markers: &[Marker], span: f64, plot_bottom: f64) {
    for (i, m) in markers.iter().enumerate() {
        if m.t_s < 0.0 || m.t_s > span {
            continue;
        }
        let x = x_of(m.t_s, span);
        let _ = write!(
            svg,
            "<g class=\"marker\"><title>{:.1}s {}</title><line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{TOP}\" y2=\"{plot_bottom:.1}\" stroke=\"#555\" stroke-dasharray=\"4 3\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" fill=\"#555\">{}</text></g>",
            m.t_s,
            escape(&m.label),
            x + 3.0,
            TOP + 11.0 + 11.0 * (i % 3) as f64,
            escape(&m.label)
        );
    }
}

#[cfg(test)]
mod tests;

//! Inline-SVG charts for report.html, with values on hover through SVG `<title>` elements (no
//! scripts, no fonts beyond the page's): a line chart of per-second series with action markers
//! and an optional limit line, where every second is a hover column listing each series' value;
//! and a lanes chart (one row per pod) of labelled spans with per-second bars, for hints per
//! endpoint and termination windows. Every series carries `data-series`, `data-max` and
//! `data-sum` so a test can read what was drawn from the rendered DOM.

use std::fmt::Write;

use super::{Marker, escape};

const WIDTH: f64 = 1100.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 14.0;
const BOTTOM: f64 = 30.0;
const PLOT_HEIGHT: f64 = 190.0;
const LEGEND_ROW: f64 = 15.0;
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

/// How values read on the axis and in hover text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Counts or rates: whole numbers from 10 up.
    Number(&'static str),
    /// Fractions shown as percentages.
    Percent,
}

impl Unit {
    fn format(self, v: f64) -> String {
        match self {
            Unit::Number(_) if v.abs() >= 10.0 || v.fract() == 0.0 => format!("{v:.0}"),
            Unit::Number(_) => format!("{v:.2}")
                .trim_end_matches('0')
                .trim_end_matches('.')
                .to_string(),
            Unit::Percent => format!("{:.1}%", v * 100.0),
        }
    }

    fn axis_label(self) -> &'static str {
        match self {
            Unit::Number(label) => label,
            Unit::Percent => "%",
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
        .fold(0.0_f64, f64::max);
    let y_max = nice_ceiling(data_max.max(chart.limit.as_ref().map_or(0.0, |l| l.0)));
    let legend_height = LEGEND_ROW * chart.lines.len() as f64 + TOP;
    let height = TOP + PLOT_HEIGHT.max(legend_height) + BOTTOM;
    let plot_bottom = height - BOTTOM;
    let plot_height = plot_bottom - TOP;
    let y_of = |v: f64| plot_bottom - plot_height * (v / y_max);
    let mut svg = open_svg(chart.id, chart.title, height);
    frame(&mut svg, span, plot_bottom, chart.unit, y_max, &y_of);
    if let Some((limit, label)) = &chart.limit {
        let y = y_of(*limit);
        let _ = write!(
            svg,
            "<g class=\"limit\" data-limit=\"{limit}\"><title>{}</title><line x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#cf222e\" stroke-dasharray=\"6 3\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" fill=\"#cf222e\" text-anchor=\"end\">{}</text></g>",
            escape(label),
            WIDTH - RIGHT,
            WIDTH - RIGHT - 4.0,
            y - 3.0,
            escape(label)
        );
    }
    for (i, line) in chart.lines.iter().enumerate() {
        series(&mut svg, line, i, span, chart.unit, &y_of);
        legend_entry(&mut svg, i, line.label, color(i));
    }
    draw_markers(&mut svg, chart.markers, span, plot_bottom);
    hover_columns(&mut svg, chart, seconds, plot_bottom);
    svg.push_str("</svg>");
    svg
}

fn series(
    svg: &mut String,
    line: &Line<'_>,
    i: usize,
    span: f64,
    unit: Unit,
    y_of: &dyn Fn(f64) -> f64,
) {
    let values: Vec<f64> = line.values.iter().flatten().copied().collect();
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
    // One polyline per run of seconds with values; a lone point is a dot.
    let mut run: Vec<String> = Vec::new();
    let flush = |svg: &mut String, run: &mut Vec<String>| {
        match run.len() {
            0 => {}
            1 => {
                let (x, y) = run[0].split_once(',').unwrap_or(("0", "0"));
                let _ = write!(
                    svg,
                    "<circle cx=\"{x}\" cy=\"{y}\" r=\"2\" fill=\"{}\"/>",
                    color(i)
                );
            }
            _ => {
                let _ = write!(
                    svg,
                    "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.6\" points=\"{}\"/>",
                    color(i),
                    run.join(" ")
                );
            }
        }
        run.clear();
    };
    for (t, v) in line.values.iter().enumerate() {
        match v {
            Some(v) => run.push(format!("{:.1},{:.1}", x_of(t as f64 + 0.5, span), y_of(*v))),
            None => flush(svg, &mut run),
        }
    }
    flush(svg, &mut run);
    svg.push_str("</g>");
}

/// Transparent full-height columns, one per second, whose titles list every series' value.
fn hover_columns(svg: &mut String, chart: &LineChart<'_>, seconds: usize, plot_bottom: f64) {
    let span = seconds as f64;
    svg.push_str("<g class=\"hover\">");
    for t in 0..seconds {
        let x0 = x_of(t as f64, span);
        let x1 = x_of(t as f64 + 1.0, span);
        let mut text = format!("{t}s–{}s", t + 1);
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
}

/// Renders `chart`.
pub fn lanes_chart(chart: &LanesChart<'_>) -> String {
    let span = chart.seconds as f64;
    let rows = chart.lanes.len().max(1) as f64;
    let legend_height = LEGEND_ROW * (chart.legend.len() + 1) as f64 + TOP;
    let height = TOP + (LANE_HEIGHT * rows).max(legend_height) + BOTTOM;
    let plot_bottom = height - BOTTOM;
    let mut svg = open_svg(chart.id, chart.title, height);
    let _ = write!(
        svg,
        "<rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"none\" stroke=\"#bbb\"/>",
        WIDTH - LEFT - RIGHT,
        plot_bottom - TOP
    );
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
    if chart.lanes.iter().any(|l| !l.bars.is_empty()) {
        legend_entry(&mut svg, chart.legend.len(), chart.bar_label, "#82071e");
    }
    draw_markers(&mut svg, chart.markers, span, plot_bottom);
    svg.push_str("</svg>");
    svg
}

/// The smallest of 1, 2, 2.5, 5 × 10^k at or above `v` (1 for nothing to show).
fn nice_ceiling(v: f64) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return 1.0;
    }
    let magnitude = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|c| *c >= v * (1.0 - 1e-12))
        .unwrap_or(10.0 * magnitude)
}

fn open_svg(id: &str, title: &str, height: f64) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" data-chart=\"{}\" viewBox=\"0 0 {WIDTH} {height}\" width=\"{WIDTH}\" height=\"{height}\" role=\"img\" aria-label=\"{}\"><title>{}</title>",
        escape(id),
        escape(title),
        escape(title)
    )
}

fn frame(
    svg: &mut String,
    span: f64,
    plot_bottom: f64,
    unit: Unit,
    y_max: f64,
    y_of: &dyn Fn(f64) -> f64,
) {
    let _ = write!(
        svg,
        "<rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"none\" stroke=\"#bbb\"/>",
        WIDTH - LEFT - RIGHT,
        plot_bottom - TOP
    );
    for k in 0..=4 {
        let v = y_max * f64::from(k) / 4.0;
        let y = y_of(v);
        if k > 0 && k < 4 {
            let _ = write!(
                svg,
                "<line x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#eee\"/>",
                WIDTH - RIGHT
            );
        }
        let _ = write!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\">{}</text>",
            LEFT - 4.0,
            y + 3.5,
            escape(&unit.format(v))
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
mod tests {
    use super::*;

    fn chart<'a>(lines: Vec<Line<'a>>, markers: &'a [Marker]) -> LineChart<'a> {
        LineChart {
            id: "test",
            title: "rps",
            unit: Unit::Number("req/s"),
            lines,
            markers,
            limit: None,
        }
    }

    #[test]
    fn one_series_group_per_line_with_its_numbers_and_a_hover_column_per_second() {
        let lines = vec![
            Line::dense("pod-1", [0.0, 10.0]),
            Line::dense("pod-2", [5.0, 5.0]),
        ];
        let svg = line_chart(&chart(lines, &[]));
        assert_eq!(svg.matches("class=\"series\"").count(), 2);
        assert!(svg.contains("data-series=\"pod-1\" data-max=\"10\" data-sum=\"10\""));
        assert_eq!(svg.matches("fill=\"transparent\"").count(), 2);
        assert!(svg.contains("<title>1s–2s\npod-1: 10\npod-2: 5</title>"));
        // The 10 lands on the top edge of the plot: the axis ends at a nice 10.
        assert!(svg.contains(&format!(",{TOP:.1}")));
        assert!(svg.contains(">10</text>"));
    }

    #[test]
    fn gaps_split_the_line_and_limits_and_markers_are_drawn() {
        let lines = vec![Line {
            label: "pod-1",
            values: vec![Some(1.0), Some(2.0), None, Some(3.0)],
        }];
        let markers = [Marker {
            t_s: 1.0,
            label: "node <change>".into(),
        }];
        let mut c = chart(lines, &markers);
        c.limit = Some((20.0, "limit 20".into()));
        let svg = line_chart(&c);
        assert_eq!(svg.matches("<polyline").count(), 1);
        assert_eq!(svg.matches("<circle").count(), 1, "the lone last point");
        assert!(svg.contains("data-limit=\"20\""));
        assert!(svg.contains("node &lt;change&gt;"));
        assert!(svg.contains("\npod-1: —"), "no value in second 2");
    }

    #[test]
    fn lanes_draw_spans_and_bars_scaled_to_the_largest() {
        let chart = LanesChart {
            id: "lanes",
            title: "terminations",
            seconds: 4,
            lanes: vec![Lane {
                label: "pod-3",
                spans: vec![Span {
                    from_s: 1.0,
                    to_s: 3.0,
                    color: "#ccc",
                    text: "terminating".into(),
                }],
                bars: vec![0, 4, 2, 0],
            }],
            legend: vec![("terminating".into(), "#ccc")],
            bar_label: "failed",
            markers: &[],
        };
        let svg = lanes_chart(&chart);
        assert!(svg.contains("data-lane=\"pod-3\" data-spans=\"1\" data-bars-sum=\"6\""));
        assert_eq!(svg.matches("class=\"bar\"").count(), 2);
        assert!(svg.contains("<title>pod-3: 4 failed in 1s–2s</title>"));
    }

    #[test]
    fn nice_ceilings() {
        assert_eq!(nice_ceiling(0.0), 1.0);
        assert_eq!(nice_ceiling(7.0), 10.0);
        assert_eq!(nice_ceiling(20.0), 20.0);
        assert_eq!(nice_ceiling(21.0), 25.0);
        assert_eq!(nice_ceiling(0.48), 0.5);
        assert_eq!(nice_ceiling(130.0), 200.0);
    }
}

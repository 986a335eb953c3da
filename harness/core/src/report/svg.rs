//! Minimal inline-SVG charts for report.html: a multi-series line chart over seconds with
//! vertical action markers, and an on/off band for the hints timeline. No scripts, no fonts
//! beyond the page's, so the HTML stays one self-contained file.

use std::fmt::Write;

use super::{Marker, escape};

const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 220.0;
const LEFT: f64 = 50.0;
const RIGHT: f64 = 150.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 28.0;
const PALETTE: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// One named line.
pub struct Line<'a> {
    pub label: &'a str,
    pub values: Vec<f64>,
}

fn plot_width() -> f64 {
    WIDTH - LEFT - RIGHT
}

fn plot_height() -> f64 {
    HEIGHT - TOP - BOTTOM
}

fn x_of(t: f64, seconds: f64) -> f64 {
    LEFT + plot_width() * (t / seconds.max(1.0))
}

/// A line chart of per-second values; `y_label` names the unit.
pub fn line_chart(title: &str, y_label: &str, lines: &[Line<'_>], markers: &[Marker]) -> String {
    let seconds = lines.iter().map(|l| l.values.len()).max().unwrap_or(0) as f64;
    let y_max = lines
        .iter()
        .flat_map(|l| l.values.iter().copied())
        .fold(0.0_f64, f64::max)
        .max(f64::MIN_POSITIVE);
    let y_of = |v: f64| TOP + plot_height() * (1.0 - v / y_max);
    let mut svg = open_svg(title);
    axes(&mut svg, seconds, &axis_number(y_max), y_label);
    for (i, line) in lines.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let points: Vec<String> = line
            .values
            .iter()
            .enumerate()
            .map(|(t, v)| format!("{:.1},{:.1}", x_of(t as f64 + 0.5, seconds), y_of(*v)))
            .collect();
        let _ = write!(
            svg,
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"1.5\" points=\"{}\"/>",
            points.join(" ")
        );
        let _ = write!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" fill=\"{color}\">{}</text>",
            WIDTH - RIGHT + 8.0,
            TOP + 12.0 + 14.0 * i as f64,
            escape(line.label)
        );
    }
    draw_markers(&mut svg, markers, seconds);
    svg.push_str("</svg>");
    svg
}

/// A band that is filled where `on[i]` is true: hints enabled per second.
pub fn on_off_band(title: &str, on_label: &str, on: &[bool], markers: &[Marker]) -> String {
    let seconds = on.len() as f64;
    let mut svg = open_svg(title);
    axes(&mut svg, seconds, "", "");
    for (t, enabled) in on.iter().enumerate() {
        if *enabled {
            let x0 = x_of(t as f64, seconds);
            let x1 = x_of(t as f64 + 1.0, seconds);
            let _ = write!(
                svg,
                "<rect x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#2ca02c\" opacity=\"0.6\"/>",
                TOP + plot_height() * 0.25,
                (x1 - x0).max(0.5),
                plot_height() * 0.5
            );
        }
    }
    let _ = write!(
        svg,
        "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" fill=\"#2ca02c\">{}</text>",
        WIDTH - RIGHT + 8.0,
        TOP + 12.0,
        escape(on_label)
    );
    draw_markers(&mut svg, markers, seconds);
    svg.push_str("</svg>");
    svg
}

/// An axis label: whole numbers from 10 up, three decimals below (rates, fractions).
fn axis_number(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

fn open_svg(title: &str) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" width=\"{WIDTH}\" height=\"{HEIGHT}\" role=\"img\"><title>{}</title>",
        escape(title)
    )
}

fn axes(svg: &mut String, seconds: f64, y_max_label: &str, y_label: &str) {
    let bottom = TOP + plot_height();
    let _ = write!(
        svg,
        "<rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"none\" stroke=\"#999\"/>",
        plot_width(),
        plot_height()
    );
    let _ = write!(
        svg,
        "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\">{}</text>",
        LEFT - 4.0,
        TOP + 10.0,
        escape(y_max_label)
    );
    let _ = write!(
        svg,
        "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\">0</text>",
        LEFT - 4.0,
        bottom
    );
    let _ = write!(
        svg,
        "<text x=\"4\" y=\"{:.1}\" font-size=\"10\">{}</text>",
        TOP + plot_height() / 2.0,
        escape(y_label)
    );
    let step = tick_step(seconds);
    let mut t = 0.0;
    while t <= seconds {
        let _ = write!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"middle\">{t:.0}s</text>",
            x_of(t, seconds),
            bottom + 14.0
        );
        t += step;
    }
}

fn tick_step(seconds: f64) -> f64 {
    [1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0]
        .into_iter()
        .find(|s| seconds / s <= 12.0)
        .unwrap_or(600.0)
}

fn draw_markers(svg: &mut String, markers: &[Marker], seconds: f64) {
    for m in markers {
        let x = x_of(m.t_s, seconds);
        let _ = write!(
            svg,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{TOP}\" y2=\"{:.1}\" stroke=\"#555\" stroke-dasharray=\"4 3\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" fill=\"#555\">{}</text>",
            TOP + plot_height(),
            x + 3.0,
            TOP + 22.0,
            escape(&m.label)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_chart_has_one_polyline_per_series_and_scales_to_the_max() {
        let lines = [
            Line {
                label: "pod-1",
                values: vec![0.0, 10.0],
            },
            Line {
                label: "pod-2",
                values: vec![5.0, 5.0],
            },
        ];
        let svg = line_chart("rps", "req/s", &lines, &[]);
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains(">10<"), "y axis shows the maximum");
        // The 10.0 point sits on the top edge of the plot area.
        assert!(svg.contains(&format!(",{TOP:.1}")));
    }

    #[test]
    fn band_fills_only_enabled_seconds_and_draws_markers() {
        let markers = [Marker {
            t_s: 1.0,
            label: "node <change>".into(),
        }];
        let svg = on_off_band("hints", "hints on", &[true, false, true], &markers);
        assert_eq!(svg.matches("<rect").count(), 3, "frame + 2 filled seconds");
        assert!(svg.contains("node &lt;change&gt;"));
    }
}

//! The line chart's frame, series, limit line, markers and partial last second.

use super::*;
use proptest::prelude::*;

fn chart<'a>(lines: Vec<Line<'a>>, markers: &'a [Marker]) -> LineChart<'a> {
    LineChart {
        id: "test",
        title: "rps",
        unit: Unit::Number("req/s"),
        lines,
        markers,
        limit: None,
        load_end_s: None,
    }
}

/// Every number of every `name="..."` attribute (`points` split into its y coordinates).
fn attribute_numbers(svg: &str, name: &str) -> Vec<f64> {
    let needle = format!(" {name}=\"");
    svg.match_indices(&needle)
        .filter_map(|(i, _)| {
            let rest = &svg[i + needle.len()..];
            rest[..rest.find('"')?].parse().ok()
        })
        .collect()
}

/// The y of every point of every polyline and circle.
fn drawn_ys(svg: &str) -> Vec<f64> {
    let mut ys = attribute_numbers(svg, "cy");
    let needle = " points=\"";
    for (i, _) in svg.match_indices(needle) {
        let rest = &svg[i + needle.len()..];
        for point in rest[..rest.find('"').unwrap()].split(' ') {
            let (_, y) = point.split_once(',').unwrap();
            ys.push(y.parse().unwrap());
        }
    }
    ys
}

/// The labels of the y axis' ticks, bottom up.
fn tick_labels(svg: &str) -> Vec<String> {
    svg.split("<text class=\"tick\"")
        .skip(1)
        .map(|t| {
            let t = &t[t.find('>').unwrap() + 1..];
            t[..t.find('<').unwrap()].to_string()
        })
        .collect()
}

fn plot_bottom(svg: &str) -> f64 {
    attribute_numbers(svg, "height")[0] - BOTTOM
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
    // The axis ends at a tick of 10 (steps of 2), HEADROOM pixels below the plot's top
    // edge: the 10 is drawn there, inside the plot, not on its frame.
    assert_eq!(tick_labels(&svg), ["0", "2", "4", "6", "8", "10"]);
    let top = TOP + HEADROOM;
    assert!(svg.contains(&format!(",{top:.1}")), "{svg}");
    assert!(!svg.contains(&format!(",{TOP:.1}\"")));
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
    assert!(!svg.contains("class=\"partial"), "no load end given");
}

/// A pod pinned at its concurrency limit of 20 the whole run: the dashed limit line is
/// painted before (beneath) the series, and thinner, so the series shows on top of it.
#[test]
fn a_series_at_its_limit_is_painted_over_the_limit_line() {
    let mut c = chart(vec![Line::dense("pod-2", [20.0, 20.0, 20.0])], &[]);
    c.unit = Unit::Count("requests");
    c.limit = Some((20.0, "limit 20".into()));
    let svg = line_chart(&c);
    let limit = svg.find("class=\"limit\"").unwrap();
    let series = svg.find("class=\"series\"").unwrap();
    assert!(limit < series, "the limit is painted first");
    let limit_line = &svg[limit..svg[limit..].find("</g>").unwrap() + limit];
    let polyline = &svg[svg.find("<polyline").unwrap()..];
    let width = |text: &str| attribute_numbers(text, "stroke-width")[0];
    assert_eq!(width(limit_line), 1.0);
    assert_eq!(width(polyline), 2.0);
    // Both at the same height, the axis' top tick (20, in steps of 5), inside the plot.
    let y = TOP + HEADROOM;
    assert!(
        limit_line.contains(&format!("y1=\"{y:.1}\"")),
        "{limit_line}"
    );
    assert!(polyline.contains(&format!(",{y:.1} ")), "{polyline}");
    assert_eq!(tick_labels(&svg), ["0", "5", "10", "15", "20"]);
}

/// Counts tick whole numbers: a queue of at most one request reads 0, 1, 2 — not 0, 0.25,
/// 0.5, 0.75, 1 — while a rate of at most 1.25 may tick quarters.
#[test]
fn count_axes_tick_whole_numbers_and_rates_may_not() {
    let mut c = chart(
        vec![Line {
            label: "pod-1",
            values: vec![Some(0.0), Some(1.0), None],
        }],
        &[],
    );
    c.unit = Unit::Count("requests");
    assert_eq!(tick_labels(&line_chart(&c)), ["0", "1", "2"]);
    c.lines = vec![Line::dense("pod-1", [0.0, 116.0])];
    assert_eq!(
        tick_labels(&line_chart(&c)),
        ["0", "25", "50", "75", "100", "125"]
    );
    c.unit = Unit::Number("req/s");
    c.lines = vec![Line::dense("pod-1", [0.5, 1.25])];
    assert_eq!(
        tick_labels(&line_chart(&c)),
        ["0", "0.25", "0.5", "0.75", "1", "1.25"]
    );
    c.unit = Unit::Percent;
    c.lines = vec![Line::dense("timeout", [0.0, 0.023])];
    assert_eq!(
        tick_labels(&line_chart(&c)),
        ["0%", "0.5%", "1%", "1.5%", "2%", "2.5%"]
    );
}

/// The load ended 2.3 s in, inside the third second: that second is shaded and its point
/// hollow, joined by a dashed segment, its value (3) drawn as measured and counted in the
/// series' sum — the chart still adds up to the totals the audit checks.
#[test]
fn a_last_second_the_load_did_not_fill_is_marked_and_kept() {
    let mut c = chart(vec![Line::dense("pod-1", [10.0, 10.0, 3.0])], &[]);
    c.unit = Unit::Count("req/s");
    c.load_end_s = Some(2.3);
    let svg = line_chart(&c);
    assert!(svg.contains("data-load-end=\"2.3\""));
    assert!(svg.contains("data-max=\"10\" data-sum=\"23\" data-points=\"3\""));
    assert_eq!(svg.matches("<rect class=\"partial\"").count(), 1);
    assert_eq!(svg.matches("<circle class=\"partial\"").count(), 1);
    assert_eq!(
        svg.matches("<polyline class=\"partial\"").count(),
        1,
        "the dashed segment from 1s–2s"
    );
    assert_eq!(svg.matches("<polyline fill").count(), 1, "0s–2s whole");
    assert!(svg.contains("2s–3s (partial: the load ended at 2.3s)\npod-1: 3"));
    assert!(svg.contains(">load ended at 2.3s</text>"));
    assert!(svg.contains("so 2s–3s holds 0.3 s of load"));
    // The band covers the third second: x from 2 s to 3 s.
    let band = &svg[svg.find("<rect class=\"partial\"").unwrap()..];
    let x0 = attribute_numbers(band, "x")[0];
    let w = attribute_numbers(band, "width")[0];
    assert!((x0 - x_of(2.0, 3.0)).abs() < 0.1 && (x0 + w - x_of(3.0, 3.0)).abs() < 0.1);

    // A load that filled its last second: nothing marked.
    c.load_end_s = Some(3.0);
    let svg = line_chart(&c);
    assert!(!svg.contains("partial") && !svg.contains("data-load-end"));
    // Ended 1.5 s in, with three seconds of series: seconds 2 and 3 are both hollow.
    c.load_end_s = Some(1.5);
    assert_eq!(
        line_chart(&c).matches("<circle class=\"partial\"").count(),
        2
    );
}

#[test]
fn partial_seconds() {
    assert_eq!(partial_from(Some(40.3), 41), Some(40.3));
    assert_eq!(partial_from(Some(41.0), 41), None);
    assert_eq!(partial_from(Some(40.9999999), 41), None, "rounding");
    assert_eq!(partial_from(None, 41), None);
    assert_eq!(partial_from(Some(0.0), 1), None);
    assert_eq!(partial_from(Some(0.4), 0), None);
    assert_eq!(first_partial_second(40.3), 40);
}

#[test]
fn lanes_draw_spans_and_bars_scaled_to_the_largest() {
    let mut chart = LanesChart {
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
        load_end_s: None,
    };
    let svg = lanes_chart(&chart);
    assert!(svg.contains("data-lane=\"pod-3\" data-spans=\"1\" data-bars-sum=\"6\""));
    assert_eq!(svg.matches("class=\"bar\"").count(), 2);
    assert!(svg.contains("<title>pod-3: 4 failed in 1s–2s</title>"));
    assert!(svg.starts_with("<svg") && svg.contains("\"><title>terminations</title>"));
    assert!(!svg.contains("partial"));
    chart.load_end_s = Some(3.6);
    let svg = lanes_chart(&chart);
    assert!(svg.contains("data-load-end=\"3.6\""));
    assert_eq!(svg.matches("<rect class=\"partial\"").count(), 1);
    assert!(svg.contains(">load ended at 3.6s</text>"));
}

proptest! {
    /// Whatever the series, the limit and the load's end, every point, segment and the
    /// limit line lie inside the plot, below its headroom: nothing is clipped or drawn on
    /// the frame; and each series' sum is what it was given.
    #[test]
    fn every_point_is_drawn_inside_the_plot(
        values in prop::collection::vec(
            prop::collection::vec(prop::option::weighted(0.9, 0u32..2_000_000), 1..50),
            1..4,
        ),
        limit in prop::option::of(0u32..3_000_000),
        end in prop::option::of(0.0f64..60.0),
        whole in any::<bool>(),
    ) {
        let lines: Vec<Line<'_>> = values
            .iter()
            .map(|v| Line {
                label: "s",
                values: v.iter().map(|x| x.map(f64::from)).collect(),
            })
            .collect();
        let mut c = chart(lines, &[]);
        c.unit = if whole { Unit::Count("requests") } else { Unit::Number("req/s") };
        c.limit = limit.map(|l| (f64::from(l), format!("limit {l}")));
        c.load_end_s = end;
        let svg = line_chart(&c);
        let bottom = plot_bottom(&svg);
        let mut ys = drawn_ys(&svg);
        ys.extend(attribute_numbers(&svg, "y1"));
        for y in ys {
            prop_assert!(y >= TOP + HEADROOM - 0.05 && y <= bottom + 0.05, "{} in {}", y, svg);
        }
        let sums = attribute_numbers(&svg, "data-sum");
        for (sum, v) in sums.iter().zip(&values) {
            prop_assert_eq!(*sum, v.iter().flatten().map(|x| f64::from(*x)).sum::<f64>());
        }
    }
}

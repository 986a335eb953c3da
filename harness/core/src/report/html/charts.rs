//! The page's charts, from the summary's per-second series: answered and arrived per pod,
//! error rate by kind, in flight per pod against the limit, the admission queues, hints per
//! endpoint, and — where the scenario has them — demand against processed rate with the
//! replicas, and per-pod failures inside termination windows.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::open_section;
use crate::report::svg::{
    Lane, LanesChart, Line, LineChart, PALETTE, Span, Unit, lanes_chart, line_chart,
};
use crate::report::text::pod_label;
use crate::report::{Series, Summary, escape};
use crate::text::natural_key;

pub fn charts(page: &mut String, s: &Summary) {
    open_section(page, "charts", "Over time");
    let series = &s.series;
    let markers = series.markers.as_slice();
    figure(
        page,
        &line_chart(&LineChart {
            id: "answered-per-pod",
            title: "Answered per pod (source side)",
            unit: Unit::Count("req/s"),
            lines: counts(&series.requests_per_pod),
            markers,
            limit: None,
            load_end_s: Some(s.duration_s),
        }),
        "Responses per second the callers got from each pod (by x-pod), by intended send time.",
    );
    if !series.arrivals_per_pod.is_empty() {
        figure(
            page,
            &line_chart(&LineChart {
                id: "arrivals-per-pod",
                title: "Arrived per pod (destination side)",
                unit: Unit::Count("req/s"),
                lines: counts(&series.arrivals_per_pod),
                markers,
                limit: None,
                load_end_s: Some(s.duration_s),
            }),
            "Requests per second that reached each pod's sidecar. A pod high here and low in the chart above is receiving requests it does not answer.",
        );
    }
    figure(
        page,
        &line_chart(&LineChart {
            id: "error-rate",
            title: "Error rate by kind",
            unit: Unit::Percent,
            lines: error_lines(series),
            markers,
            limit: None,
            load_end_s: Some(s.duration_s),
        }),
        "Failed attempts ÷ attempts per second, for each kind of failure (a status code, or a transport error such as a client timeout), with the timeline's actions.",
    );
    if !series.in_flight_per_pod.is_empty() {
        figure(
            page,
            &line_chart(&LineChart {
                id: "in-flight-per-pod",
                title: "In flight per pod against the limit",
                unit: Unit::Count("requests"),
                lines: gauges(&series.in_flight_per_pod),
                markers,
                limit: concurrency_limit(s),
                load_end_s: Some(s.duration_s),
            }),
            "Requests holding a concurrency slot at each pod's sidecar (SSE streams included), the highest sample in each second; the dashed line is the limit.",
        );
    }
    let queued = series
        .queue_per_pod
        .values()
        .any(|v| v.iter().flatten().any(|q| *q > 0));
    if queued {
        figure(
            page,
            &line_chart(&LineChart {
                id: "queue-per-pod",
                title: "Admission queue per pod",
                unit: Unit::Count("requests"),
                lines: gauges(&series.queue_per_pod),
                markers,
                limit: None,
                load_end_s: Some(s.duration_s),
            }),
            "Requests waiting for a slot at each pod's sidecar, the longest sample in each second.",
        );
    }
    if !series.hints_per_pod.is_empty() || series.hints_enabled.iter().any(|on| *on) {
        figure(
            page,
            &hints_chart(series, Some(s.duration_s)),
            "Which zone each endpoint is hinted for, second by second (kube-proxy in a zone uses only the endpoints hinted for it while every endpoint has a hint). The top lane shows when the EndpointSlice carried hints.",
        );
    }
    if series.replicas.windows(2).any(|w| w[0] != w[1]) {
        figure(
            page,
            &line_chart(&LineChart {
                id: "source-vs-destination",
                title: "Demand (source) and processed rate (destination)",
                unit: Unit::Number("req/s"),
                lines: vec![
                    Line::dense(
                        "attempted (source)",
                        series.attempted.iter().map(|v| *v as f64),
                    ),
                    Line::dense(
                        "admitted (destination)",
                        series.destination_rps.iter().copied(),
                    ),
                ],
                markers,
                limit: None,
                load_end_s: Some(s.duration_s),
            }),
            "Requests the load generators attempted (what a source-side metric sees) and requests the sidecars admitted (what a destination-side metric sees), per second.",
        );
        figure(
            page,
            &line_chart(&LineChart {
                id: "replicas",
                title: "Replicas",
                unit: Unit::Count("pods"),
                lines: vec![Line::dense(
                    "replicas",
                    series.replicas.iter().map(|v| f64::from(*v)),
                )],
                markers,
                limit: None,
                load_end_s: Some(s.duration_s),
            }),
            "Pods not terminating, at the end of each second.",
        );
    }
    if !series.terminations.is_empty() || !series.lb_failed_per_pod.is_empty() {
        figure(
            page,
            &terminations_chart(series, Some(s.duration_s)),
            &termination_caption(series),
        );
    }
    page.push_str("</section>");
}

fn figure(page: &mut String, svg: &str, caption: &str) {
    // The chart's title, shown above it (the SVG's own <title> is only a tooltip).
    let title = svg
        .split_once("<title>")
        .and_then(|(_, rest)| rest.split_once("</title>"))
        .map_or("", |(t, _)| t);
    let caption = match load_end(svg) {
        Some(end) => format!("{caption} {}", partial_caption(end)),
        None => caption.to_owned(),
    };
    let _ = write!(
        page,
        "<figure><h3>{title}</h3>{svg}<figcaption>{}</figcaption></figure>",
        escape(&caption)
    );
}

/// The load's end a chart marks (its `data-load-end`): the load ended inside its last second.
fn load_end(svg: &str) -> Option<f64> {
    let tag = &svg[..svg.find('>')?];
    let (_, rest) = tag.split_once("data-load-end=\"")?;
    rest[..rest.find('"')?].parse().ok()
}

/// What the shaded last second is, for a chart's caption.
fn partial_caption(end: f64) -> String {
    let second = end.floor();
    format!(
        "The shaded last second is partial: the load ended at {end:.1}s, so {second:.0}s–{:.0}s holds only {:.1} s of it, and a count there (a hollow point) covers that fraction of a second — drawn as measured, and counted in the totals.",
        second + 1.0,
        end - second
    )
}

/// Pods in natural order (`pod-2` before `pod-10`).
fn natural_order<T>(map: &BTreeMap<String, T>) -> Vec<(&String, &T)> {
    let mut entries: Vec<(&String, &T)> = map.iter().collect();
    entries.sort_by(|a, b| natural_key(a.0).cmp(&natural_key(b.0)));
    entries
}

fn counts(map: &BTreeMap<String, Vec<u64>>) -> Vec<Line<'_>> {
    natural_order(map)
        .into_iter()
        .map(|(pod, v)| Line::dense(pod_label(pod), v.iter().map(|c| *c as f64)))
        .collect()
}

fn gauges(map: &BTreeMap<String, Vec<Option<u64>>>) -> Vec<Line<'_>> {
    natural_order(map)
        .into_iter()
        .map(|(pod, v)| Line {
            label: pod,
            values: v.iter().map(|c| c.map(|c| c as f64)).collect(),
        })
        .collect()
}

/// One line per error kind (its count ÷ that second's attempts), plus all errors together.
fn error_lines(series: &Series) -> Vec<Line<'_>> {
    // With one kind, "all errors" is the same line: leave it out.
    let mut lines = Vec::new();
    if series.errors_by_kind.len() != 1 {
        lines.push(Line::dense("all errors", series.error_rate.iter().copied()));
    }
    for (kind, per_second) in &series.errors_by_kind {
        lines.push(Line {
            label: kind,
            values: per_second
                .iter()
                .zip(&series.attempted)
                .map(|(n, a)| (*a > 0).then(|| *n as f64 / *a as f64))
                .collect(),
        });
    }
    lines
}

/// The sidecars' limit when every pod has the same one.
fn concurrency_limit(s: &Summary) -> Option<(f64, String)> {
    let mut limits = s.pods.iter().map(|p| p.max_concurrency).filter(|l| *l > 0);
    let first = limits.next()?;
    limits
        .all(|l| l == first)
        .then(|| (first as f64, format!("limit {first}")))
}

fn hints_chart(series: &Series, load_end_s: Option<f64>) -> String {
    let seconds = series.hints_enabled.len();
    let mut zones: Vec<&str> = series
        .hints_per_pod
        .values()
        .flatten()
        .flatten()
        .map(String::as_str)
        .collect();
    zones.sort_unstable();
    zones.dedup();
    let zone_color = |z: &str| {
        let i = zones.iter().position(|x| *x == z).unwrap_or(0);
        PALETTE[(i * 2) % PALETTE.len()]
    };
    let mut lanes = vec![Lane {
        label: "hints on",
        spans: runs(
            &series
                .hints_enabled
                .iter()
                .map(|on| on.then_some("on"))
                .collect::<Vec<_>>(),
        )
        .into_iter()
        .map(|(from, to, _)| Span {
            from_s: from as f64,
            to_s: to as f64,
            color: "#1a7f37",
            text: format!("{from}s–{to}s: the EndpointSlice carries hints"),
        })
        .collect(),
        bars: Vec::new(),
    }];
    for (pod, per_second) in natural_order(&series.hints_per_pod) {
        let values: Vec<Option<&str>> = per_second.iter().map(|z| z.as_deref()).collect();
        lanes.push(Lane {
            label: pod,
            spans: runs(&values)
                .into_iter()
                .map(|(from, to, zone)| Span {
                    from_s: from as f64,
                    to_s: to as f64,
                    color: zone_color(zone),
                    text: format!("{pod} {from}s–{to}s: hinted for {zone}"),
                })
                .collect(),
            bars: Vec::new(),
        });
    }
    lanes_chart(&LanesChart {
        id: "hints-per-endpoint",
        title: "Topology hints per endpoint",
        seconds,
        lanes,
        legend: zones
            .iter()
            .map(|z| (format!("for {z}"), zone_color(z)))
            .collect(),
        bar_label: "",
        markers: &series.markers,
        load_end_s,
    })
}

/// Maximal runs of equal non-empty values: (from second, to second, value).
fn runs<'a>(values: &[Option<&'a str>]) -> Vec<(usize, usize, &'a str)> {
    let mut out: Vec<(usize, usize, &str)> = Vec::new();
    for (t, v) in values.iter().enumerate() {
        let Some(v) = v else { continue };
        match out.last_mut() {
            Some(last) if last.1 == t && last.2 == *v => last.1 = t + 1,
            _ => out.push((t, t + 1, v)),
        }
    }
    out
}

fn terminations_chart(series: &Series, load_end_s: Option<f64>) -> String {
    let seconds = series.attempted.len();
    let end = seconds as f64;
    let mut pods: Vec<&str> = series
        .terminations
        .iter()
        .map(|w| w.pod.as_str())
        .chain(series.lb_failed_per_pod.keys().map(String::as_str))
        .collect();
    pods.sort_unstable_by(|a, b| natural_key(a).cmp(&natural_key(b)));
    pods.dedup();
    let lanes = pods
        .into_iter()
        .map(|pod| {
            let mut spans = Vec::new();
            for w in series.terminations.iter().filter(|w| w.pod == pod) {
                let sigterm = w.sigterm_s.unwrap_or(w.to_s.unwrap_or(end));
                let exit = w.to_s.unwrap_or(end);
                let counts = match (w.requests, w.failed) {
                    (Some(r), Some(f)) => format!("; after deletion: {r} requests, {f} failed"),
                    _ => String::new(),
                };
                spans.push(Span {
                    from_s: w.from_s,
                    to_s: sigterm,
                    color: "#d4a72c",
                    text: format!(
                        "{pod} deleted at {:.1}s, endpoint removed; preStop until {sigterm:.1}s{counts}",
                        w.from_s
                    ),
                });
                spans.push(Span {
                    from_s: sigterm,
                    to_s: exit,
                    color: "#8c959f",
                    text: format!("{pod} SIGTERM at {sigterm:.1}s, exited at {exit:.1}s{counts}"),
                });
                if let Some(last) = w.lb_last_sent_s.filter(|last| *last > exit) {
                    spans.push(Span {
                        from_s: exit,
                        to_s: last,
                        color: "#ff8182",
                        text: format!(
                            "{pod} gone since {exit:.1}s, but the load balancer kept sending it requests until {last:.1}s{counts}"
                        ),
                    });
                }
            }
            Lane {
                label: pod,
                spans,
                bars: series
                    .lb_failed_per_pod
                    .get(pod)
                    .cloned()
                    .unwrap_or_default(),
            }
        })
        .collect();
    lanes_chart(&LanesChart {
        id: "terminations",
        title: "Termination windows and failures per pod",
        seconds,
        lanes,
        legend: vec![
            ("deleted → SIGTERM".into(), "#d4a72c"),
            ("SIGTERM → exit".into(), "#8c959f"),
            ("exited, LB still sending".into(), "#ff8182"),
        ],
        bar_label: "failed at the LB",
        markers: &series.markers,
        load_end_s,
    })
}

fn termination_caption(series: &Series) -> String {
    let (requests, failed) = series.terminations.iter().fold((0, 0), |(r, f), w| {
        (r + w.requests.unwrap_or(0), f + w.failed.unwrap_or(0))
    });
    let base = "Each terminating pod from its deletion (its endpoint removed) to SIGTERM (after any preStop) and to its exit, then — where the load balancer kept sending to it — until the last request it sent";
    let counted = series.terminations.iter().any(|w| w.requests.is_some());
    if counted || !series.lb_failed_per_pod.is_empty() {
        format!(
            "{base}; red bars are requests the load balancer sent it that failed, per second. In all windows: {requests} requests reached pods after their deletion, {failed} failed."
        )
    } else {
        format!(
            "{base}. Without a load balancer in the scenario, which requests reached a terminating pod is not counted."
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::TerminationWindow;
    use crate::report::fixture::failing_summary;

    #[test]
    fn draws_the_per_pod_error_and_hint_charts_with_the_limit() {
        let mut page = String::new();
        charts(&mut page, &failing_summary());
        for id in [
            "answered-per-pod",
            "arrivals-per-pod",
            "error-rate",
            "in-flight-per-pod",
            "hints-per-endpoint",
        ] {
            assert!(page.contains(&format!("data-chart=\"{id}\"")), "{id}");
        }
        assert!(!page.contains("data-chart=\"replicas\""), "no scaling");
        assert!(!page.contains("data-chart=\"terminations\""));
        assert!(page.contains("data-limit=\"20\""));
        assert!(page.contains("data-series=\"timeout\" data-max=\"0.5\""));
        assert!(page.contains("data-lane=\"pod-2\" data-spans=\"1\""));
    }

    #[test]
    fn scaling_and_terminations_get_their_charts() {
        let mut summary = failing_summary();
        summary.series.replicas = vec![2, 4, 4];
        summary.series.terminations = vec![TerminationWindow {
            pod: "pod-10".into(),
            from_s: 1.0,
            sigterm_s: Some(1.0),
            to_s: Some(2.5),
            requests: Some(9),
            failed: Some(3),
            lb_last_sent_s: Some(2.8),
        }];
        summary
            .series
            .lb_failed_per_pod
            .insert("pod-10".into(), vec![0, 3, 0]);
        let mut page = String::new();
        charts(&mut page, &summary);
        assert!(page.contains("data-chart=\"source-vs-destination\""));
        assert!(page.contains("data-chart=\"replicas\""));
        assert!(page.contains("data-lane=\"pod-10\" data-spans=\"3\" data-bars-sum=\"3\""));
        assert!(page.contains("kept sending it requests until 2.8s"));
        assert!(page.contains("9 requests reached pods after their deletion, 3 failed"));
    }

    /// The count charts tick whole numbers: pod-2's single answer in its busiest second reads
    /// on an axis of 0, 1, 2 when it is drawn alone.
    #[test]
    fn count_charts_tick_whole_numbers() {
        let mut summary = failing_summary();
        summary.series.requests_per_pod.remove("pod-1");
        let mut page = String::new();
        charts(&mut page, &summary);
        let answered = &page[page.find("data-chart=\"answered-per-pod\"").unwrap()..];
        let answered = &answered[..answered.find("</svg>").unwrap()];
        let ticks: Vec<&str> = answered
            .split("<text class=\"tick\"")
            .skip(1)
            .map(|t| &t[t.find('>').unwrap() + 1..t.find('<').unwrap()])
            .collect();
        assert_eq!(ticks, ["0", "1", "2"]);
    }

    /// A run whose load ended 2.4 s in: its three seconds of series are drawn whole (the third
    /// with 0.4 s of load: 55 answers of pod-1 there, as measured), the third second shaded on
    /// every per-second chart, with the reason in each caption.
    #[test]
    fn a_last_second_the_load_did_not_fill_is_marked_on_every_chart() {
        let mut summary = failing_summary();
        summary.duration_s = 2.4;
        let mut page = String::new();
        charts(&mut page, &summary);
        let charts = page.matches("<svg").count();
        assert_eq!(page.matches("data-load-end=\"2.4\"").count(), charts);
        assert!(page.contains("data-series=\"pod-1\" data-max=\"60\" data-sum=\"165\""));
        assert_eq!(
            page.matches("the load ended at 2.4s, so 2s–3s holds only 0.4 s of it")
                .count(),
            charts,
            "{page}"
        );
        summary.duration_s = 3.0;
        let mut page = String::new();
        super::charts(&mut page, &summary);
        assert!(!page.contains("data-load-end") && !page.contains("partial"));
    }

    #[test]
    fn runs_and_natural_order() {
        let v = [Some("a"), Some("a"), None, Some("b"), Some("a")];
        assert_eq!(runs(&v), vec![(0, 2, "a"), (3, 4, "b"), (4, 5, "a")]);
    }
}

//! Every shipped scenario's report, rebuilt with `harness report` from run data recorded by
//! real runs (tests/fixtures/runs, see scripts/record-report-fixtures.sh) and rendered in a
//! real browser: headless Chromium loads report.html and dumps the DOM it built, and the test
//! checks that the page holds the verdict, every expectation, every pod on both sides, the
//! traffic matrix and the charts the run calls for, each with a series of non-zero data, the
//! hint events (repeats collapsed into one row with ×N, the files of record untouched). The
//! pass/fail marks are checked in report_marks.rs.
//!
//! Needs Debian's `chromium` (`.ci/run` installs it; `HARNESS_CHROMIUM` names another
//! binary). With `HARNESS_REPORT_SCREENSHOTS=DIR` each rendered run directory is kept in
//! `DIR/<scenario>-<variant>/` with a `report.png` screenshot beside the reports
//! (`HARNESS_SCREENSHOT_HEIGHT` pixels tall, 2400 by default).

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use support::chromium::{element, fixtures, headless};

/// The `<svg ... data-chart="id">…</svg>` element of the DOM, if drawn.
fn chart<'a>(dom: &'a str, id: &str) -> Option<&'a str> {
    let at = dom.find(&format!("data-chart=\"{id}\""))?;
    let start = dom[..at].rfind("<svg")?;
    let end = dom[at..].find("</svg>")? + at;
    Some(&dom[start..end])
}

/// Every `name="number"` attribute value in `text`.
fn numbers(text: &str, name: &str) -> Vec<f64> {
    let needle = format!("{name}=\"");
    text.match_indices(&needle)
        .filter_map(|(i, _)| {
            let rest = &text[i + needle.len()..];
            rest[..rest.find('"')?].parse().ok()
        })
        .collect()
}

fn check_dom(name: &str, dom: &str, summary: &Value) {
    let verdict = summary["verdict"].as_str().unwrap();
    assert!(
        dom.contains(&format!("data-verdict=\"{verdict}\"")),
        "{name}: verdict banner"
    );

    let expectations = element(dom, "<table class=\"expectations\">", "</table>");
    let held = summary["expectations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["passed"] == true)
        .count();
    let all = summary["expectations"].as_array().unwrap().len();
    assert_eq!(
        expectations.matches("<tr class=\"pass\"").count(),
        held,
        "{name}"
    );
    assert_eq!(
        expectations.matches("<tr class=\"fail\"").count(),
        all - held,
        "{name}"
    );
    assert_eq!(
        expectations.matches("</svg> pass").count(),
        held,
        "{name}: marks (inline SVG) and words"
    );
    assert_eq!(
        expectations.matches("</svg> FAIL").count(),
        all - held,
        "{name}: marks (inline SVG) and words"
    );

    let pods = element(dom, "<table class=\"pods\">", "</table>");
    for pod in summary["pods"].as_array().unwrap() {
        let pod = pod["name"].as_str().unwrap();
        assert!(
            pods.contains(&format!("data-pod=\"{pod}\"")),
            "{name}: row of {pod}"
        );
    }
    assert!(pods.contains("source: what callers got back"), "{name}");
    assert!(pods.contains("all pods"), "{name}: total row");

    let heat = element(dom, "<table class=\"heat\">", "</table>");
    assert!(
        numbers(heat, "data-count").iter().any(|n| *n > 0.0),
        "{name}: heat map with traffic"
    );

    // The charts this run calls for, each with at least one series of non-zero data.
    let series = &summary["series"];
    let has = |key: &str| series[key].as_object().is_some_and(|m| !m.is_empty());
    let mut wanted = vec!["answered-per-pod"];
    if has("arrivalsPerPod") {
        wanted.extend(["arrivals-per-pod", "in-flight-per-pod"]);
    }
    let errors = summary["totals"]["errorRate"].as_f64().unwrap() > 0.0;
    if errors {
        wanted.push("error-rate");
    }
    if has("hintsPerPod") {
        wanted.push("hints-per-endpoint");
    }
    let replicas: Vec<u64> = series["replicas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    if replicas.windows(2).any(|w| w[0] != w[1]) {
        wanted.extend(["source-vs-destination", "replicas"]);
    }
    for id in wanted {
        let svg = chart(dom, id).unwrap_or_else(|| panic!("{name}: no `{id}` chart"));
        if id == "hints-per-endpoint" {
            assert!(
                numbers(svg, "data-spans").iter().any(|n| *n > 0.0),
                "{name}: {id} has hinted spans"
            );
        } else {
            assert!(
                numbers(svg, "data-sum").iter().any(|n| *n > 0.0),
                "{name}: {id} has a series with data"
            );
            assert!(
                svg.contains("<rect x=") && svg.contains("<title>0s–1s"),
                "{name}: {id} hover"
            );
        }
    }
    assert!(
        chart(dom, "error-rate").is_some(),
        "{name}: error chart always drawn"
    );
    let terminations = series["terminations"].as_array().unwrap();
    if terminations
        .iter()
        .any(|w| w["failed"].as_u64().unwrap_or(0) > 0)
    {
        let svg = chart(dom, "terminations").expect("terminations chart");
        assert!(
            numbers(svg, "data-bars-sum").iter().any(|n| *n > 0.0),
            "{name}: failures drawn"
        );
    }

    // The ingress replicas: requests by list position, every replica and every pod.
    if let Some(ingress) = summary["ingress"].as_object() {
        let section = element(dom, "<section id=\"ingress\">", "</section>");
        assert!(
            section.contains("list positions"),
            "{name}: ingress headline"
        );
        let positions = ingress["byPosition"].as_array().unwrap().len();
        assert!(
            section.contains(&format!("<td>#{positions}</td>")),
            "{name}: positions"
        );
        for r in ingress["replicas"].as_array().unwrap() {
            let replica = r["name"].as_str().unwrap();
            assert!(
                section.contains(&format!("<td>{replica}</td>")),
                "{name}: {replica}"
            );
        }
        for p in ingress["pods"].as_array().unwrap() {
            let pod = p["name"].as_str().unwrap();
            assert!(
                section.contains(&format!("<td>{pod}</td>")),
                "{name}: ingress {pod}"
            );
        }
    }

    // The hint events: identical ones in a row at one instant are one row with ×N, and the
    // rows with their counts are every recorded event.
    let events = summary["hints"]["events"].as_array().unwrap();
    if !events.is_empty() {
        let section = element(dom, "<section id=\"hint-events\">", "</section>");
        let rows = section.matches("<tr class=\"event\">").count();
        let repeated = numbers(section, "data-times");
        assert_eq!(
            rows - repeated.len() + repeated.iter().sum::<f64>() as usize,
            events.len(),
            "{name}: every event counted once"
        );
        let printed = |e: &Value| {
            (
                format!("{:.1}", e["tS"].as_f64().unwrap()),
                e["reason"].clone(),
                e["message"].clone(),
                e["type"].clone(),
            )
        };
        let distinct = 1 + events
            .windows(2)
            .filter(|w| printed(&w[0]) != printed(&w[1]))
            .count();
        assert_eq!(rows, distinct, "{name}: repeats collapsed");
    }

    // Count axes tick whole numbers.
    for id in ["answered-per-pod", "in-flight-per-pod", "queue-per-pod"] {
        if let Some(svg) = chart(dom, id) {
            for tick in svg.split("<text class=\"tick\"").skip(1) {
                let label = &tick[tick.find('>').unwrap() + 1..tick.find('<').unwrap()];
                assert!(
                    label.chars().all(|c| c.is_ascii_digit()),
                    "{name}: {id} tick {label}"
                );
            }
        }
    }

    let facts = element(dom, "<dl class=\"facts\">", "</dl>");
    assert!(
        facts.contains("harness run scenarios/"),
        "{name}: command to reproduce"
    );
    assert!(!dom.contains("<script"), "{name}: no scripts");
}

#[test]
fn every_shipped_scenarios_report_renders_in_chromium() {
    let keep = std::env::var_os("HARNESS_REPORT_SCREENSHOTS").map(PathBuf::from);
    let height: u32 = std::env::var("HARNESS_SCREENSHOT_HEIGHT")
        .ok()
        .and_then(|h| h.parse().ok())
        .unwrap_or(2400);
    let fixtures = fixtures();
    let scenarios: std::collections::BTreeSet<String> = fixtures
        .iter()
        .map(|f| {
            let s: Value =
                serde_json::from_str(&std::fs::read_to_string(f.join("summary.json")).unwrap())
                    .unwrap();
            s["scenario"].as_str().unwrap().to_string()
        })
        .collect();
    let shipped: std::collections::BTreeSet<String> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios"))
            .unwrap()
            .filter_map(|e| {
                let name = e.unwrap().file_name().into_string().unwrap();
                name.strip_suffix(".yaml").map(str::to_string)
            })
            .collect();
    assert_eq!(
        scenarios, shipped,
        "a recorded run of every shipped scenario"
    );

    for fixture in fixtures {
        let name = fixture.file_name().unwrap().to_string_lossy().to_string();
        let tmp = tempfile::tempdir().unwrap();
        let dir = match &keep {
            Some(root) => root.join(&name),
            None => tmp.path().join(&name),
        };
        std::fs::create_dir_all(&dir).unwrap();
        let dir = dir.canonicalize().unwrap();
        for file in ["summary.json", "timeline.jsonl"] {
            std::fs::copy(fixture.join(file), dir.join(file)).unwrap();
        }
        let out = Command::new(env!("CARGO_BIN_EXE_harness"))
            .arg("report")
            .arg(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{name}: harness report: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        for file in ["junit.xml", "report.md", "report.html"] {
            assert!(dir.join(file).is_file(), "{name}: {file}");
        }
        // The files of record are read, never rewritten.
        for file in ["summary.json", "timeline.jsonl"] {
            assert!(
                std::fs::read(dir.join(file)).unwrap()
                    == std::fs::read(fixture.join(file)).unwrap(),
                "{name}: {file} changed"
            );
        }
        let summary: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap())
                .unwrap();
        let page = dir.join("report.html");
        let dom = String::from_utf8(headless(&page, &["--dump-dom".to_string()])).unwrap();
        check_dom(&name, &dom, &summary);
        if keep.is_some() {
            let png = dir.join("report.png");
            headless(
                &page,
                &[
                    format!("--window-size=1280,{height}"),
                    format!("--screenshot={}", png.display()),
                ],
            );
            assert!(png.is_file(), "{name}: screenshot");
        }
    }
}

/// Where `summary` breaks the schema `harness schema summary` prints.
fn schema_errors(summary: &Value) -> Vec<String> {
    let schema = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["schema", "summary"])
        .output()
        .unwrap();
    let schema: Value = serde_json::from_slice(&schema.stdout).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    validator
        .iter_errors(summary)
        .map(|e| e.to_string())
        .collect()
}

/// A summary as a harness before the reconciled fields wrote it still validates against
/// today's schema, and `harness report` rebuilds the sidecar side and the per-pod series from
/// the timeline.
#[test]
fn a_summary_from_before_the_new_fields_still_renders() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs/topology-skew-incident");
    let mut summary: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture.join("summary.json")).unwrap())
            .unwrap();
    let obj = summary.as_object_mut().unwrap();
    obj.remove("unattributed");
    obj.remove("invocation");
    for pod in obj["pods"].as_array_mut().unwrap() {
        let pod = pod.as_object_mut().unwrap();
        for key in ["destination", "source", "loadBalancer"] {
            pod.remove(key);
        }
    }
    let series = obj["series"].as_object_mut().unwrap();
    for key in [
        "arrivalsPerPod",
        "inFlightPerPod",
        "queuePerPod",
        "errorsByKind",
        "hintsPerPod",
        "terminations",
        "lbFailedPerPod",
    ] {
        series.remove(key);
    }
    let errors = schema_errors(&summary);
    assert!(errors.is_empty(), "{errors:?}");

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("summary.json"), summary.to_string()).unwrap();
    std::fs::copy(
        fixture.join("timeline.jsonl"),
        dir.path().join("timeline.jsonl"),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .arg("report")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    for chart in [
        "arrivals-per-pod",
        "in-flight-per-pod",
        "hints-per-endpoint",
    ] {
        assert!(
            html.contains(&format!("data-chart=\"{chart}\"")),
            "{chart} from the timeline"
        );
    }
    assert!(
        html.contains("destination: the pod&#39;s sidecar"),
        "sidecar side from samples"
    );
    assert!(
        !html.contains("source: what callers got back"),
        "no source side to show"
    );
    let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(md.contains("| pod-1 | ap-northeast-2c |"), "{md}");

    // And a directory that is not a run is refused with exit 2, naming the file.
    let empty = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .arg("report")
        .arg(empty.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("summary.json"));
}

/// Every recorded summary matches the published schema.
#[test]
fn recorded_summaries_match_the_schema() {
    for fixture in fixtures() {
        let summary: Value =
            serde_json::from_str(&std::fs::read_to_string(fixture.join("summary.json")).unwrap())
                .unwrap();
        let errors = schema_errors(&summary);
        assert!(errors.is_empty(), "{}: {errors:?}", fixture.display());
    }
}

//! Every shipped scenario's report, rebuilt with `harness report` from run data recorded by
//! real runs (tests/fixtures/runs, see scripts/record-report-fixtures.sh) and rendered in a
//! real browser: headless Chromium loads report.html and dumps the DOM it built, and the test
//! checks that the page holds the verdict, every expectation, every pod on both sides, the
//! traffic matrix and the charts the run calls for, each with a series of non-zero data, the
//! hint events (repeats collapsed into one row with ×N, the files of record untouched). And the
//! pass/fail marks of report.html and compare.html are drawn without any font: Chromium lays
//! them out as inline SVG, and the rendered text holds no emoji.
//!
//! Needs Debian's `chromium` (`.ci/run` installs it; `HARNESS_CHROMIUM` names another
//! binary). With `HARNESS_REPORT_SCREENSHOTS=DIR` each rendered run directory is kept in
//! `DIR/<scenario>-<variant>/` with a `report.png` screenshot beside the reports
//! (`HARNESS_SCREENSHOT_HEIGHT` pixels tall, 2400 by default).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("summary.json").is_file())
        .collect();
    dirs.sort();
    dirs
}

fn chromium() -> String {
    if let Ok(bin) = std::env::var("HARNESS_CHROMIUM") {
        return bin;
    }
    for bin in ["chromium", "chromium-browser"] {
        if Command::new(bin)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return bin.to_string();
        }
    }
    panic!(
        "headless Chromium is needed to render the reports: `apt-get install chromium` \
         (.ci/run does), or set HARNESS_CHROMIUM to a Chromium binary"
    );
}

/// Runs Chromium headless on `page` with `args`, bounded to a minute.
fn headless(page: &Path, args: &[String]) -> Vec<u8> {
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new("timeout")
        .arg("60")
        .arg(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
            "--no-first-run",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "chromium failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

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

/// The element `<tag class="class" ...>…</tag>` (first one).
fn element<'a>(dom: &'a str, open: &str, close: &str) -> &'a str {
    let start = dom
        .find(open)
        .unwrap_or_else(|| panic!("no `{open}` in the rendered page"));
    let end = dom[start..].find(close).unwrap() + start;
    &dom[start..end]
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

/// Appended to a copy of a page: once laid out, it writes into `<pre id="probe">` one line per
/// inline-SVG mark (`svg.icon`: where it is, its label, its rendered size and its path's) and
/// one line listing every character of the rendered text (`innerText`) from the emoji and
/// symbol blocks: U+2600–U+27BF (✅ U+2705, ❌ U+274C, ⚠ U+26A0 among them) and
/// U+1F300–U+1FAFF.
const PROBE: &str = r#"<script>
(function () {
  var out = [];
  document.querySelectorAll('svg.icon').forEach(function (s) {
    var r = s.getBoundingClientRect();
    var p = s.querySelector('path');
    var b = p ? p.getBBox() : { width: 0, height: 0 };
    var where = s.closest('table.expectations') ? 'expectations' : (s.closest('header') ? 'header' : 'other');
    out.push(['icon', where, s.getAttribute('aria-label'), Math.round(r.width), Math.round(r.height), Math.round(b.width), Math.round(b.height)].join(' '));
  });
  var bad = [];
  for (var ch of document.body.innerText) {
    var c = ch.codePointAt(0);
    if ((c >= 0x2600 && c <= 0x27BF) || (c >= 0x1F300 && c <= 0x1FAFF)) bad.push('U+' + c.toString(16).toUpperCase());
  }
  out.push('emoji ' + bad.join(','));
  var pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = out.join('\n');
  document.body.appendChild(pre);
})();
</script>"#;

/// One mark as Chromium laid it out.
#[derive(Debug)]
struct Mark {
    place: String,
    label: String,
    /// Rendered width and height of the `<svg>`, and of its path's bounding box.
    size: (u32, u32),
    path: (u32, u32),
}

/// What the probe saw on `page`: the marks, and the emoji and symbols in the rendered text.
fn probe(page: &Path) -> (Vec<Mark>, Vec<String>) {
    let html = std::fs::read_to_string(page).unwrap();
    let probed = page.with_extension("probe.html");
    let body_end = html.rfind("</body>").unwrap_or(html.len());
    std::fs::write(
        &probed,
        format!("{}{PROBE}{}", &html[..body_end], &html[body_end..]),
    )
    .unwrap();
    let dom = String::from_utf8(headless(&probed, &["--dump-dom".to_string()])).unwrap();
    let lines = element(&dom, "<pre id=\"probe\">", "</pre>");
    let mut marks = Vec::new();
    let mut emoji = Vec::new();
    for line in lines["<pre id=\"probe\">".len()..].lines() {
        let words: Vec<&str> = line.split(' ').collect();
        match words.as_slice() {
            ["icon", place, label, w, h, pw, ph] => marks.push(Mark {
                place: (*place).to_string(),
                label: (*label).to_string(),
                size: (w.parse().unwrap(), h.parse().unwrap()),
                path: (pw.parse().unwrap(), ph.parse().unwrap()),
            }),
            ["emoji", found] => {
                emoji = found
                    .split(',')
                    .filter(|c| !c.is_empty())
                    .map(str::to_string)
                    .collect()
            }
            _ => panic!("probe line `{line}`"),
        }
    }
    // The text nodes of the DOM as Chromium built it, too (scripts and styles left out).
    let mut text = String::new();
    let mut rest = dom.as_str();
    while let Some(open) = rest.find('<') {
        text.push_str(&rest[..open]);
        rest = &rest[open..];
        for skip in ["<script", "<style"] {
            if rest.starts_with(skip) {
                let close = format!("</{}>", &skip[1..]);
                rest = &rest[rest.find(&close).unwrap_or(0)..];
            }
        }
        rest = &rest[rest.find('>').map_or(rest.len(), |i| i + 1)..];
    }
    text.push_str(rest);
    for c in text.chars() {
        let n = c as u32;
        if (0x2600..=0x27BF).contains(&n) || (0x1F300..=0x1FAFF).contains(&n) {
            emoji.push(format!("U+{n:X} in a text node"));
        }
    }
    (marks, emoji)
}

/// Asserts `marks` holds, at `place`, `pass` marks labelled "pass" and `fail` labelled "fail",
/// each drawn (its box and its path's box not empty).
fn assert_drawn(name: &str, marks: &[Mark], place: &str, pass: usize, fail: usize) {
    let here: Vec<&Mark> = marks.iter().filter(|m| m.place == place).collect();
    let count = |label: &str| here.iter().filter(|m| m.label == label).count();
    assert_eq!(
        (count("pass"), count("fail")),
        (pass, fail),
        "{name}: marks in {place}: {here:?}"
    );
    for m in here {
        assert!(
            m.size.0 >= 10 && m.size.1 >= 10 && m.path.0 >= 5 && m.path.1 >= 5,
            "{name}: a mark not drawn: {m:?}"
        );
    }
}

/// report.html and compare.html need no emoji or symbol font: headless Chromium draws their
/// pass/fail marks as inline SVG of real size, one per expectation (and per run in the
/// comparison), and their rendered text holds no emoji code point. The probe itself is shown
/// to catch a page that writes ✅/❌.
#[test]
fn pass_and_fail_marks_are_drawn_without_an_emoji_font() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs");
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path().canonicalize().unwrap();
    let mut runs = Vec::new();
    for name in ["topology-skew-fixed", "topology-skew-incident"] {
        let dir = tmp.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        for file in ["summary.json", "timeline.jsonl"] {
            std::fs::copy(root.join(name).join(file), dir.join(file)).unwrap();
        }
        let out = Command::new(env!("CARGO_BIN_EXE_harness"))
            .arg("report")
            .arg(&dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}: harness report");
        let summary: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap())
                .unwrap();
        let passed: Vec<bool> = summary["expectations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["passed"] == true)
            .collect();
        let held = passed.iter().filter(|p| **p).count();
        let (marks, emoji) = probe(&dir.join("report.html"));
        assert!(emoji.is_empty(), "{name}: report.html shows {emoji:?}");
        assert_drawn(name, &marks, "expectations", held, passed.len() - held);
        let banner = usize::from(summary["verdict"] == "pass");
        assert_drawn(name, &marks, "header", banner, 1 - banner);
        runs.push((dir, passed));
    }
    // Both sides of each expectation in the comparison of the two runs.
    let out_dir = tmp.join("compare");
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .arg("compare")
        .arg(&runs[0].0)
        .arg(&runs[1].0)
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "harness compare: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let held = runs.iter().flat_map(|r| &r.1).filter(|p| **p).count();
    let all = runs.iter().map(|r| r.1.len()).sum::<usize>();
    let (marks, emoji) = probe(&out_dir.join("compare.html"));
    assert!(emoji.is_empty(), "compare.html shows {emoji:?}");
    assert_drawn("compare", &marks, "expectations", held, all - held);

    // The probe sees emoji where a page writes them, and no marks where there are none.
    let emoji_page = tmp.join("emoji.html");
    std::fs::write(
        &emoji_page,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body><p>\u{2705} pass \u{274C} FAIL \u{26A0} \u{1F4C8}</p></body></html>",
    )
    .unwrap();
    let (marks, emoji) = probe(&emoji_page);
    assert!(marks.is_empty());
    let codes = ["U+2705", "U+274C", "U+26A0", "U+1F4C8"];
    let expected: Vec<String> = codes
        .iter()
        .map(|c| c.to_string())
        .chain(codes.iter().map(|c| format!("{c} in a text node")))
        .collect();
    assert_eq!(
        emoji, expected,
        "both the rendered text and the DOM's text nodes"
    );
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

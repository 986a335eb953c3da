//! The pass/fail marks of report.html and compare.html are drawn without any font: headless
//! Chromium lays them out as inline SVG, and the rendered text holds no emoji (the reports of
//! the recorded runs in tests/fixtures/runs, rebuilt with `harness report`, and a compare of
//! two of them). Needs Debian's `chromium` (`.ci/run` installs it; `HARNESS_CHROMIUM` names
//! another binary).

mod support;

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use support::chromium::{element, headless};

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

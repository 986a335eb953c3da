//! Headless Chromium for the report tests (Debian's `chromium`, or `HARNESS_CHROMIUM`), and
//! the recorded run directories they render (tests/fixtures/runs).

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("summary.json").is_file())
        .collect();
    dirs.sort();
    dirs
}

pub fn chromium() -> String {
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
pub fn headless(page: &Path, args: &[String]) -> Vec<u8> {
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

/// The element `<tag class="class" ...>…</tag>` (first one).
pub fn element<'a>(dom: &'a str, open: &str, close: &str) -> &'a str {
    let start = dom
        .find(open)
        .unwrap_or_else(|| panic!("no `{open}` in the rendered page"));
    let end = dom[start..].find(close).unwrap() + start;
    &dom[start..end]
}

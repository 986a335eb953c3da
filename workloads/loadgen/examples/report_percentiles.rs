//! Prints latency percentiles of loadgen JSON reports, recomputed from their full histograms, for
//! the ones a report does not carry (p95): one JSON object per file, on its own line, with
//! `samples`, `p50`, `p90`, `p95`, `p99`, `p999` and `max` in milliseconds. Used by `make bench`
//! (scripts/bench.sh).
//!
//! `cargo run --release -p loadgen --example report_percentiles -- report.json [more.json ...]`

use std::process::ExitCode;

fn percentiles(path: &str) -> Result<serde_json::Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let report: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{path}: not JSON: {e}"))?;
    let encoded = report
        .get("histogram")
        .and_then(|h| h.as_str())
        .unwrap_or_default();
    let ms = |us: u64| us as f64 / 1000.0;
    if encoded.is_empty() {
        return Ok(serde_json::json!({ "file": path, "samples": 0 }));
    }
    let h = loadgen::report::decode_histogram(encoded).map_err(|e| format!("{path}: {e}"))?;
    if h.is_empty() {
        return Ok(serde_json::json!({ "file": path, "samples": 0 }));
    }
    Ok(serde_json::json!({
        "file": path,
        "samples": h.len(),
        "p50": ms(h.value_at_quantile(0.50)),
        "p90": ms(h.value_at_quantile(0.90)),
        "p95": ms(h.value_at_quantile(0.95)),
        "p99": ms(h.value_at_quantile(0.99)),
        "p999": ms(h.value_at_quantile(0.999)),
        "max": ms(h.max()),
    }))
}

fn main() -> ExitCode {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        eprintln!("usage: report_percentiles REPORT.json [REPORT.json ...]");
        return ExitCode::from(2);
    }
    let mut failed = false;
    for file in &files {
        match percentiles(file) {
            Ok(v) => println!("{v}"),
            Err(e) => {
                eprintln!("report_percentiles: {e}");
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

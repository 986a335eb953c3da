//! The loadgen report reader the harness uses (`Report::from_json`), then what is done with a
//! report that reads: its invariants are checked, its latency histogram decoded, and it is
//! merged with itself. Any input reads or is refused with a located serde error; nothing
//! panics or hangs.

#![no_main]

use libfuzzer_sys::fuzz_target;
use loadgen::report::decode_histogram;
use loadgen::{Report, ReportExt, try_merge_reports};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Report::from_json(text) {
        Ok(report) => {
            let _ = report.check_invariants();
            let _ = decode_histogram(&report.histogram);
            let _ = try_merge_reports(&[report.clone(), report]);
        }
        Err(e) => {
            let message = e.to_string();
            assert!(
                message.contains(" line ") || e.line() > 0,
                "an unlocated refusal: {message}"
            );
        }
    }
});

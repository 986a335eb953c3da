//! The loadgen schedule file (`--schedule`: "OFFSET RPS" lines or JSON steps): any text parses
//! into valid steps or is refused with a message, and never panics or hangs. Parsed steps are
//! turned into the rate profile the scheduler follows.

#![no_main]

use libfuzzer_sys::fuzz_target;
use loadgen::profile::parse_schedule;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match parse_schedule(text) {
        Ok(steps) => {
            assert!(!steps.is_empty());
            for step in &steps {
                assert!(step.rps.is_finite() && step.rps >= 0.0, "{step:?}");
            }
        }
        Err(message) => assert!(!message.is_empty()),
    }
});

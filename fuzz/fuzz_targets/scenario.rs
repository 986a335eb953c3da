//! Scenario parsing and validation, base document and every variant: any text either loads or
//! is refused with diagnostics that each name the file, and never panics or hangs.

#![no_main]

use harness_core::scenario::{ScenarioErrors, load_scenario_str, validate_str};
use libfuzzer_sys::fuzz_target;

const FILE: &str = "fuzz.yaml";

fn check_located(errors: &ScenarioErrors) {
    assert!(
        !errors.diagnostics.is_empty(),
        "a refusal without a diagnostic"
    );
    for d in &errors.diagnostics {
        assert_eq!(d.file, FILE, "a diagnostic names another file: {d}");
        assert!(
            !d.message.is_empty(),
            "a diagnostic without a message: {d:?}"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let variants = match validate_str(text, FILE) {
        Ok(variants) => variants,
        Err(errors) => {
            check_located(&errors);
            Vec::new()
        }
    };
    match load_scenario_str(text, FILE, None) {
        Ok(_) => {}
        Err(errors) => check_located(&errors),
    }
    for variant in &variants {
        if let Err(errors) = load_scenario_str(text, FILE, Some(variant)) {
            check_located(&errors);
        }
    }
});

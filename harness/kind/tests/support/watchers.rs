//! What the watchers recorded, as the tests read it.

use harness_core::measure::EventKind;
use harness_kind::watch::Recorder;

/// The events recorded so far, in order, without their times.
pub fn recorded(recorder: &Recorder) -> Vec<EventKind> {
    recorder
        .lock()
        .events
        .iter()
        .map(|(_, e)| e.clone())
        .collect()
}

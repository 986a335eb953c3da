//! Time on the ground floor: the run's control-plane [`TimeScale`] (Kubernetes time against
//! wall time) and the [`RunClock`] every measurement of a run is on. Everything above (the
//! measurements, the verdict, the engine, the targets) reads time through these.

mod run_clock;
mod scale;

pub use run_clock::{RunClock, rfc3339_utc};
pub use scale::{InvalidTimeScale, TimeScale};

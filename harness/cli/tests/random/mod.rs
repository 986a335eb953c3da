//! Random valid scenarios: drawn (`spec`), written as scenario files (`render`), run and
//! checked (`check`). Used by `random_scenarios.rs` for the fixed-seed set in `make test` and
//! for `make soak`; `metamorphic.rs` reads run timelines with `check`'s helpers (so not every
//! item is used by every test crate that includes this module).

#![allow(dead_code)]

pub mod check;
pub mod render;
pub mod spec;

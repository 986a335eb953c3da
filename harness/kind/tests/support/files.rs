//! The repository's files as the kind tests read them: a path in it, a scenario file loaded
//! (a shipped one of scenarios/ or a fixture), and the test image list
//! (fixtures/images.json, fake content tags). Part of `support`, and included alone
//! (`#[path]`) by the tests that need nothing else of it.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use harness_core::scenario::{Scenario, load_scenario};
use harness_kind::images::Manifest;

/// The test image list, a path in the repository.
pub const IMAGES: &str = "harness/kind/tests/fixtures/images.json";

/// A path in the repository.
pub fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

/// The scenario file at `path` in the repository with `variant` (None: its base).
pub fn load(path: &str, variant: Option<&str>) -> Scenario {
    load_scenario(&repo(path), variant).unwrap()
}

/// [`IMAGES`], read.
pub fn images() -> Manifest {
    serde_json::from_str(&std::fs::read_to_string(repo(IMAGES)).unwrap()).unwrap()
}

//! Finding the workload binaries (flagsvc, sidecar, loadgen, loadbalancer): `HARNESS_BIN_DIR` if set, else the
//! directory of the running `harness` executable (cargo puts them side by side), else its parent
//! (when run from `target/<profile>/deps` by tests).

use std::path::{Path, PathBuf};

use crate::LocalError;

/// Paths of the workload binaries.
#[derive(Debug, Clone)]
pub struct WorkloadBins {
    pub flagsvc: PathBuf,
    pub sidecar: PathBuf,
    pub loadgen: PathBuf,
    pub loadbalancer: PathBuf,
}

impl WorkloadBins {
    /// Locates the binaries as the module doc describes.
    pub fn locate() -> Result<Self, LocalError> {
        let mut candidates = Vec::new();
        if let Some(dir) = std::env::var_os("HARNESS_BIN_DIR") {
            candidates.push(PathBuf::from(dir));
        } else if let Ok(exe) = std::env::current_exe()
            && let Some(dir) = exe.parent()
        {
            candidates.push(dir.to_path_buf());
            if let Some(parent) = dir.parent() {
                candidates.push(parent.to_path_buf());
            }
        }
        for dir in &candidates {
            if let Some(bins) = Self::in_dir(dir) {
                return Ok(bins);
            }
        }
        Err(LocalError::MissingBinaries {
            searched: candidates
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        })
    }

    /// The binaries in `dir`, if all of them are there.
    pub fn in_dir(dir: &Path) -> Option<Self> {
        let bins = Self {
            flagsvc: dir.join("flagsvc"),
            sidecar: dir.join("sidecar"),
            loadgen: dir.join("loadgen"),
            loadbalancer: dir.join("loadbalancer"),
        };
        [
            &bins.flagsvc,
            &bins.sidecar,
            &bins.loadgen,
            &bins.loadbalancer,
        ]
        .iter()
        .all(|p| p.is_file())
        .then_some(bins)
    }
}

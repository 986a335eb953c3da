//! The run's output directory, claimed before anything starts: created (a fresh one per run
//! when `--out` is not given, so two runs at once never share one), locked for the run (a
//! second run given the same `--out` is refused while the first holds it), and proven
//! writable with room to spare by writing a probe file. An unwritable, read-only or full
//! directory is an infrastructure error (exit 3) naming the path and the reason, raised before
//! any process is started.

use std::fs::{File, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail};

/// What the probe writes (and removes): a run writes its reports and the workloads' logs, and
/// a directory that cannot take this much will not take those.
pub const PROBE_BYTES: usize = 4 << 20;

/// How many fresh run ids are tried before giving up (each collision needs another run to
/// have created the same `results/<scenario>/<id>` within the same millisecond).
const FRESH_ATTEMPTS: usize = 16;

/// A claimed output directory; the lock is held until this is dropped (or the process dies:
/// the kernel releases it, so a killed run leaves no stale lock).
#[derive(Debug)]
pub struct OutDir {
    pub path: PathBuf,
    _lock: File,
}

/// Claims `path` (given with `--out`): it may exist (a rerun into the same directory), but
/// no other run may be using it.
pub fn claim_given(path: &Path) -> anyhow::Result<OutDir> {
    std::fs::create_dir_all(path)
        .map_err(|e| anyhow!("--out {}: cannot create the directory: {e}", path.display()))?;
    claim(path, "--out")
}

/// Creates and claims a fresh directory `parent/<id>`, asking `next_id` for another id while
/// the one it gave exists already. Returns the id used.
pub fn claim_fresh(
    parent: &Path,
    mut next_id: impl FnMut() -> String,
) -> anyhow::Result<(String, OutDir)> {
    std::fs::create_dir_all(parent).map_err(|e| {
        anyhow!(
            "output directory {}: cannot create it: {e} (or pass --out DIR)",
            parent.display()
        )
    })?;
    for _ in 0..FRESH_ATTEMPTS {
        let id = next_id();
        let path = parent.join(&id);
        match std::fs::create_dir(&path) {
            Ok(()) => return Ok((id, claim(&path, "output directory")?)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => bail!(
                "output directory {}: cannot create it: {e} (or pass --out DIR)",
                path.display()
            ),
        }
    }
    bail!(
        "output directory {}: {FRESH_ATTEMPTS} run ids in a row were taken; pass --out DIR",
        parent.display()
    )
}

fn claim(path: &Path, what: &str) -> anyhow::Result<OutDir> {
    let shown = path.display();
    if !path.is_dir() {
        bail!("{what} {shown}: not a directory");
    }
    // flock(2) on the directory itself: nothing is left behind, and a dead run's lock is gone.
    let lock = File::open(path).map_err(|e| anyhow!("{what} {shown}: cannot open: {e}"))?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => bail!(
            "{what} {shown}: another harness run is writing to it; wait for it or choose another --out"
        ),
        Err(TryLockError::Error(e)) => bail!("{what} {shown}: cannot lock: {e}"),
    }
    probe(path).map_err(|e| anyhow!("{what} {shown}: not writable: {e}"))?;
    Ok(OutDir {
        path: path.to_owned(),
        _lock: lock,
    })
}

/// Writes [`PROBE_BYTES`] to a file in `dir`, syncs it and removes it.
fn probe(dir: &Path) -> std::io::Result<()> {
    let file = dir.join(format!(".harness-probe-{}", std::process::id()));
    let result = (|| {
        let mut f = File::create(&file)?;
        let chunk = vec![0u8; 64 << 10];
        for _ in 0..PROBE_BYTES / chunk.len() {
            f.write_all(&chunk)?;
        }
        f.sync_all()
    })();
    let removed = std::fs::remove_file(&file);
    result?;
    // A probe that was written but cannot be removed leaves junk; say so rather than go on.
    match removed {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_claim_of_one_directory_is_refused_until_the_first_ends() {
        let dir = tempfile::tempdir().unwrap();
        let first = claim_given(dir.path()).unwrap();
        let err = claim_given(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("another harness run is writing to it"),
            "{err}"
        );
        drop(first);
        claim_given(dir.path()).unwrap();
        // The probe is gone.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn fresh_ids_skip_taken_directories() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("a")).unwrap();
        let mut ids = ["a", "b"].into_iter();
        let (id, out) = claim_fresh(dir.path(), || ids.next().unwrap().to_owned()).unwrap();
        assert_eq!(id, "b");
        assert_eq!(out.path, dir.path().join("b"));
    }

    #[test]
    fn a_path_under_a_file_names_the_path_and_reason() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), "x").unwrap();
        let out = dir.path().join("f").join("out");
        let err = claim_given(&out).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!(
                "--out {}: cannot create the directory: ",
                out.display()
            )),
            "{err}"
        );
        assert!(err.contains("Not a directory"), "{err}");
    }
}

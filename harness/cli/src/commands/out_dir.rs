//! The run's output directory, claimed before anything starts: created (a fresh one per run
//! when `--out` is not given, so two runs at once never share one), locked for the run (a
//! second run given the same `--out` is refused while the first holds it), and proven
//! writable with room to spare by writing a probe file. An unwritable, read-only or full
//! directory is an infrastructure error (exit 3) naming the path and the reason, raised before
//! any process is started.
//!
//! A given `--out` must be empty or new: a directory holding another run's results (its
//! [`MARKER`], or a `summary.json` of a run written before the marker existed) is refused
//! with exit 2 naming that run and its files, unless the user passes `--replace`, which deletes
//! every file of that run before this one starts. A directory holding anything else is refused
//! even with `--replace`: the harness deletes only what a harness run wrote.

use std::fs::{File, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail};

/// Written into every claimed directory: says that it holds a harness run's results, so a
/// later `--out` onto it is refused (or, with `--replace`, may delete them).
pub const MARKER: &str = ".harness-run";

/// Why a given `--out` was not claimed.
#[derive(Debug)]
pub enum ClaimError {
    /// It holds another run's results or other files (exit 2: the user's choice of directory).
    Occupied(String),
    /// It cannot be created, locked or written (exit 3).
    Unusable(anyhow::Error),
}

impl std::fmt::Display for ClaimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClaimError::Occupied(why) => f.write_str(why),
            ClaimError::Unusable(e) => write!(f, "{e:#}"),
        }
    }
}

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

/// Claims `path` (given with `--out`): new or empty, or — with `replace` — holding a finished
/// or cut-short harness run, whose files are then deleted. No other run may be using it.
pub fn claim_given(path: &Path, replace: bool) -> Result<OutDir, ClaimError> {
    std::fs::create_dir_all(path).map_err(|e| {
        ClaimError::Unusable(anyhow!(
            "--out {}: cannot create the directory: {e}",
            path.display()
        ))
    })?;
    let lock = lock(path, "--out").map_err(ClaimError::Unusable)?;
    let held = Contents::of(path).map_err(ClaimError::Unusable)?;
    match held.refusal(path, replace) {
        Some(why) => return Err(ClaimError::Occupied(why)),
        None if held.is_run() => held.delete(path).map_err(ClaimError::Unusable)?,
        None => {}
    }
    finish_claim(path, "--out", lock).map_err(ClaimError::Unusable)
}

/// What a directory given with `--out` holds.
struct Contents {
    /// Its entries' names, sorted.
    names: Vec<String>,
}

impl Contents {
    fn of(path: &Path) -> anyhow::Result<Contents> {
        let entries = std::fs::read_dir(path)
            .map_err(|e| anyhow!("--out {}: cannot list it: {e}", path.display()))?;
        let mut names = Vec::new();
        for entry in entries {
            let entry =
                entry.map_err(|e| anyhow!("--out {}: cannot list it: {e}", path.display()))?;
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
        names.sort();
        Ok(Contents { names })
    }

    /// Whether a harness run wrote it: its marker, or a `summary.json` of an older harness.
    fn is_run(&self) -> bool {
        self.names
            .iter()
            .any(|n| n == MARKER || n == "summary.json")
    }

    /// Why the directory cannot take this run, if it cannot.
    fn refusal(&self, path: &Path, replace: bool) -> Option<String> {
        if self.names.is_empty() || (replace && self.is_run()) {
            return None;
        }
        let shown = path.display();
        let listed = self.listed();
        if self.is_run() {
            let which = run_description(path).unwrap_or_else(|| "a run".to_owned());
            Some(format!(
                "--out {shown} holds the results of another run ({which}: {listed}); nothing was started and nothing was changed. Choose a new or empty --out, or pass --replace to delete that run's files first"
            ))
        } else if replace {
            Some(format!(
                "--out {shown} is not empty and holds no harness run ({listed}); --replace only deletes a harness run's results, so nothing was deleted: choose a new or empty directory"
            ))
        } else {
            Some(format!(
                "--out {shown} is not empty and holds no harness run ({listed}); nothing was started: choose a new or empty directory"
            ))
        }
    }

    /// The first few entries by name, and how many more.
    fn listed(&self) -> String {
        const SHOWN: usize = 5;
        let visible: Vec<&str> = self
            .names
            .iter()
            .filter(|n| *n != MARKER)
            .map(String::as_str)
            .collect();
        let mut text = visible
            .iter()
            .take(SHOWN)
            .copied()
            .collect::<Vec<_>>()
            .join(", ");
        if visible.len() > SHOWN {
            text.push_str(&format!(" and {} more", visible.len() - SHOWN));
        }
        if text.is_empty() {
            text = "no files yet".to_owned();
        }
        text
    }

    /// Deletes every entry, so nothing of the old run remains.
    fn delete(&self, path: &Path) -> anyhow::Result<()> {
        for name in &self.names {
            let entry = path.join(name);
            let removed = if entry.is_dir() && !entry.is_symlink() {
                std::fs::remove_dir_all(&entry)
            } else {
                std::fs::remove_file(&entry)
            };
            removed.map_err(|e| {
                anyhow!(
                    "--replace: cannot delete {} of the old run: {e}; the directory may now hold part of it",
                    entry.display()
                )
            })?;
        }
        Ok(())
    }
}

/// `run 20261129-000000-abcd of topology-skew[incident]`, from the old run's summary.json.
fn run_description(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path.join("summary.json")).ok()?;
    let summary: serde_json::Value = serde_json::from_str(&text).ok()?;
    let run_id = summary.get("runId")?.as_str()?;
    let scenario = summary.get("scenario")?.as_str()?;
    let variant = summary
        .get("variant")
        .and_then(|v| v.as_str())
        .map(|v| format!("[{v}]"))
        .unwrap_or_default();
    let partial = if summary.get("partial").and_then(|p| p.as_bool()) == Some(true) {
        ", partial"
    } else {
        ""
    };
    Some(format!("run {run_id} of {scenario}{variant}{partial}"))
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
    let lock = lock(path, what)?;
    finish_claim(path, what, lock)
}

/// flock(2) on the directory itself: nothing is left behind, and a dead run's lock is gone.
fn lock(path: &Path, what: &str) -> anyhow::Result<File> {
    let shown = path.display();
    if !path.is_dir() {
        bail!("{what} {shown}: not a directory");
    }
    let lock = File::open(path).map_err(|e| anyhow!("{what} {shown}: cannot open: {e}"))?;
    match lock.try_lock() {
        Ok(()) => Ok(lock),
        Err(TryLockError::WouldBlock) => bail!(
            "{what} {shown}: another harness run is writing to it; wait for it or choose another --out"
        ),
        Err(TryLockError::Error(e)) => bail!("{what} {shown}: cannot lock: {e}"),
    }
}

/// Proves the locked directory writable and marks it as a run's.
fn finish_claim(path: &Path, what: &str, lock: File) -> anyhow::Result<OutDir> {
    let shown = path.display();
    probe(path).map_err(|e| anyhow!("{what} {shown}: not writable: {e}"))?;
    std::fs::write(
        path.join(MARKER),
        "This directory holds the results of a harness run. `harness run --out DIR` refuses it; `--replace` deletes them first.\n",
    )
    .map_err(|e| anyhow!("{what} {shown}: not writable: {e}"))?;
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
        let first = claim_given(dir.path(), false).unwrap();
        let err = claim_given(dir.path(), true).unwrap_err().to_string();
        assert!(
            err.contains("another harness run is writing to it"),
            "{err}"
        );
        drop(first);
        claim_given(dir.path(), true).unwrap();
        // The probe is gone; the marker is all there is.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [MARKER]);
    }

    /// A user's stored CI baseline was overwritten by `--out` onto it. Now: refused, naming
    /// the run and its files, and nothing in it changes; `--replace` deletes every file of it.
    #[test]
    fn a_finished_run_is_refused_unless_replaced_and_then_nothing_of_it_remains() {
        let dir = tempfile::tempdir().unwrap();
        drop(claim_given(dir.path(), false).unwrap());
        let summary =
            r#"{"runId":"20261129-000000-abcd","scenario":"topology-skew","variant":"incident"}"#;
        std::fs::write(dir.path().join("summary.json"), summary).unwrap();
        std::fs::write(dir.path().join("loadgen-gen-a.json"), "{}").unwrap();
        std::fs::create_dir(dir.path().join("ingress")).unwrap();
        std::fs::write(dir.path().join("ingress/haproxy-0.cfg"), "x").unwrap();

        let err = claim_given(dir.path(), false).unwrap_err();
        assert!(matches!(err, ClaimError::Occupied(_)));
        let err = err.to_string();
        assert!(
            err.contains("holds the results of another run (run 20261129-000000-abcd of topology-skew[incident]: ingress, loadgen-gen-a.json, summary.json)"),
            "{err}"
        );
        assert!(err.contains("--replace"), "{err}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("summary.json")).unwrap(),
            summary,
            "refused: nothing changed"
        );

        let out = claim_given(dir.path(), true).unwrap();
        let names: Vec<_> = std::fs::read_dir(&out.path)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [MARKER], "nothing of the old run remains");
    }

    /// A directory of other files is never a run's: refused, and `--replace` deletes nothing.
    #[test]
    fn a_directory_of_other_files_is_refused_even_with_replace() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..7 {
            std::fs::write(dir.path().join(format!("notes-{i}.txt")), "mine").unwrap();
        }
        for replace in [false, true] {
            let err = claim_given(dir.path(), replace).unwrap_err();
            assert!(matches!(err, ClaimError::Occupied(_)));
            let err = err.to_string();
            assert!(
                err.contains("is not empty and holds no harness run (notes-0.txt, notes-1.txt, notes-2.txt, notes-3.txt, notes-4.txt and 2 more)"),
                "{err}"
            );
            assert_eq!(err.contains("nothing was deleted"), replace, "{err}");
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 7);
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
        let err = claim_given(&out, false).unwrap_err().to_string();
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

//! The pin table of third-party releases: `harness/kind/third-party.yaml`, built into the
//! binary ([`PinTable::builtin`]) and rewritten in place by `harness pins lock`
//! ([`lock_text`]). Each pin is a release URL, its version and the SHA-256 of the file there;
//! a pin whose hash is not recorded refuses the run ([`PinTable::require_locked`]).

use std::path::Path;

use serde::Deserialize;

/// The table's path in the repository (what `harness pins lock` rewrites by default).
pub const PIN_FILE: &str = "harness/kind/third-party.yaml";

/// The table as built into this binary.
const BUILTIN: &str = include_str!("../../third-party.yaml");

/// The schema line every pin file carries.
pub const SCHEMA: &str = "harness/third-party/v1";

/// One pinned release file.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pin {
    /// `keda`, `prometheus-operator`.
    pub name: String,
    /// The upstream release (`v2.21.1`).
    pub version: String,
    /// The release asset.
    pub url: String,
    /// Lower-case hex SHA-256 of the file at `url`; `None` until `harness pins lock` recorded it.
    pub sha256: Option<String>,
}

/// Every pin, in file order.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PinTable {
    pub schema: String,
    pub releases: Vec<Pin>,
}

/// Why a pin file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PinError {
    #[error("{file}: {reason}")]
    Invalid { file: String, reason: String },
    #[error(
        "the third-party release `{name}` {version} ({url}) has no sha256 recorded in {file}, so it cannot be verified and nothing was created; on a machine with internet run `harness pins lock` (it downloads every pinned URL and writes each file's sha256 into {file}), review the diff, commit it and rebuild the harness"
    )]
    NotLocked {
        name: String,
        version: String,
        url: String,
        file: String,
    },
    #[error("{file} has no pin named `{name}`; add it (name, version, url, sha256)")]
    Missing { name: String, file: String },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

fn is_hex_sha256(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

impl PinTable {
    /// The table built into this binary (from [`PIN_FILE`] at build time).
    pub fn builtin() -> Result<PinTable, PinError> {
        PinTable::parse(BUILTIN, PIN_FILE)
    }

    /// Reads a pin file.
    pub fn read(path: &Path) -> Result<PinTable, PinError> {
        let text = std::fs::read_to_string(path).map_err(|source| PinError::Io {
            context: format!("reading {}", path.display()),
            source,
        })?;
        PinTable::parse(&text, &path.display().to_string())
    }

    /// Parses and checks a pin file's text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<PinTable, PinError> {
        let invalid = |reason: String| PinError::Invalid {
            file: file.to_owned(),
            reason,
        };
        let table: PinTable = serde_saphyr::from_str(text).map_err(|e| invalid(e.to_string()))?;
        if table.schema != SCHEMA {
            return Err(invalid(format!(
                "schema is `{}`, expected `{SCHEMA}`",
                table.schema
            )));
        }
        for (i, pin) in table.releases.iter().enumerate() {
            let at = format!("releases[{i}] (`{}`)", pin.name);
            if pin.name.is_empty() || pin.version.is_empty() {
                return Err(invalid(format!("{at}: name and version must be set")));
            }
            if !(pin.url.starts_with("https://") || pin.url.starts_with("http://")) {
                return Err(invalid(format!(
                    "{at}.url `{}`: must be an http(s) URL",
                    pin.url
                )));
            }
            if let Some(sha) = &pin.sha256
                && !is_hex_sha256(sha)
            {
                return Err(invalid(format!(
                    "{at}.sha256 `{sha}`: must be 64 lower-case hex digits, or null until `harness pins lock` records it"
                )));
            }
            if table.releases[..i].iter().any(|p| p.name == pin.name) {
                return Err(invalid(format!("{at}: the name is used twice")));
            }
        }
        Ok(table)
    }

    /// The pin named `name`, with its hash recorded; refuses one without (naming `file`).
    pub fn require_locked(&self, name: &str, file: &str) -> Result<LockedPin, PinError> {
        let pin = self
            .releases
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| PinError::Missing {
                name: name.to_owned(),
                file: file.to_owned(),
            })?;
        match &pin.sha256 {
            Some(sha) => Ok(LockedPin {
                name: pin.name.clone(),
                version: pin.version.clone(),
                url: pin.url.clone(),
                sha256: sha.clone(),
            }),
            None => Err(PinError::NotLocked {
                name: pin.name.clone(),
                version: pin.version.clone(),
                url: pin.url.clone(),
                file: file.to_owned(),
            }),
        }
    }
}

/// A pin whose SHA-256 is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockedPin {
    pub name: String,
    pub version: String,
    pub url: String,
    pub sha256: String,
}

/// `text` (a pin file) with the `sha256:` line of each release in `hashes` (name → hex)
/// replaced; comments, order and every other line stay as they are.
pub fn lock_text(text: &str, hashes: &[(String, String)], file: &str) -> Result<String, PinError> {
    let mut out = String::with_capacity(text.len() + 64 * hashes.len());
    let mut current: Option<String> = None;
    let mut written = Vec::new();
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if let Some(name) = trimmed.strip_prefix("- name:") {
            current = Some(name.trim().trim_matches('"').to_owned());
        }
        let replaced = match (&current, trimmed.strip_prefix("sha256:")) {
            (Some(name), Some(_)) => hashes.iter().find(|(n, _)| n == name).map(|(_, hex)| {
                let indent = &line[..line.len() - trimmed.len()];
                let newline = if line.ends_with('\n') { "\n" } else { "" };
                written.push(name.clone());
                format!("{indent}sha256: {hex}{newline}")
            }),
            _ => None,
        };
        out.push_str(replaced.as_deref().unwrap_or(line));
    }
    if let Some((name, _)) = hashes.iter().find(|(n, _)| !written.contains(n)) {
        return Err(PinError::Invalid {
            file: file.to_owned(),
            reason: format!(
                "release `{name}` has no `sha256:` line to write its hash to; add `sha256: null` under it"
            ),
        });
    }
    // What was written must read back as the same table with the hashes in place.
    PinTable::parse(&out, file)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn the_builtin_table_parses_and_its_hashes_are_not_invented() {
        let table = PinTable::builtin().unwrap();
        let names: Vec<&str> = table.releases.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["keda", "prometheus-operator"]);
        // No internet where these pins were written: nothing is recorded until `pins lock`.
        let err = table.require_locked("keda", PIN_FILE).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("harness pins lock"), "{text}");
        assert!(text.contains(PIN_FILE), "{text}");
        assert!(text.contains("keda-2.21.1.yaml"), "{text}");
    }

    #[test]
    fn lock_text_writes_each_hash_under_its_release_and_keeps_comments() {
        let text = PinTable::builtin().map(|_| BUILTIN).unwrap();
        let locked = lock_text(
            text,
            &[("prometheus-operator".into(), SHA.into())],
            PIN_FILE,
        )
        .unwrap();
        let table = PinTable::parse(&locked, PIN_FILE).unwrap();
        assert_eq!(table.releases[0].sha256, None);
        assert_eq!(table.releases[1].sha256.as_deref(), Some(SHA));
        assert_eq!(
            locked
                .lines()
                .filter(|l| l.trim_start().starts_with('#'))
                .count(),
            BUILTIN
                .lines()
                .filter(|l| l.trim_start().starts_with('#'))
                .count()
        );
        let pin = table
            .require_locked("prometheus-operator", PIN_FILE)
            .unwrap();
        assert_eq!(pin.sha256, SHA);
    }

    #[test]
    fn bad_hashes_and_urls_are_refused_naming_the_field() {
        let bad = BUILTIN.replacen("    sha256: null", "    sha256: 12ab", 1);
        let err = PinTable::parse(&bad, "x.yaml").unwrap_err().to_string();
        assert!(
            err.contains("x.yaml: releases[0] (`keda`).sha256 `12ab`"),
            "{err}"
        );
        let bad = BUILTIN.replacen("    url: https://", "    url: ftp://", 1);
        let err = PinTable::parse(&bad, "x.yaml").unwrap_err().to_string();
        assert!(err.contains("releases[0] (`keda`).url"), "{err}");
        let missing = PinTable::builtin()
            .unwrap()
            .require_locked("nope", "x.yaml")
            .unwrap_err();
        assert!(missing.to_string().contains("no pin named `nope`"));
    }
}

//! The pin table of third-party releases and images: `harness/kind/third-party.yaml`, built
//! into the binary ([`PinTable::builtin`]) and rewritten in place by `harness pins lock`
//! ([`lock_text`], [`lock_digests_text`]). A release pin is a URL, its version and the SHA-256
//! of the file there; an image pin is a repository, its tag and the digest the tag resolved to.
//! A pin whose hash or digest is not recorded refuses the run ([`PinTable::require_locked`],
//! [`ImagePin::require_digest`]).

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

/// One pinned container image, run by tag and digest (`image:version@digest`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImagePin {
    /// `haproxy-ingress`.
    pub name: String,
    /// The tag (`v0.16.1`).
    pub version: String,
    /// The repository with its registry host (`quay.io/jcmoraisjr/haproxy-ingress`).
    pub image: String,
    /// The manifest digest the tag resolved to (`sha256:<64 hex>`); `None` until
    /// `harness pins lock` recorded it.
    pub digest: Option<String>,
}

impl ImagePin {
    /// `image:version`, what `harness pins lock` resolves.
    pub fn tagged(&self) -> String {
        format!("{}:{}", self.image, self.version)
    }

    /// The reference a pod runs, `image:version@digest`; refuses a pin without a digest
    /// (naming `file` and how to record it).
    pub fn require_digest(&self, file: &str) -> Result<String, PinError> {
        match &self.digest {
            Some(digest) => Ok(format!("{}@{digest}", self.tagged())),
            None => Err(PinError::ImageNotLocked {
                name: self.name.clone(),
                image: self.tagged(),
                file: file.to_owned(),
            }),
        }
    }
}

/// Every pin, in file order.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PinTable {
    pub schema: String,
    pub releases: Vec<Pin>,
    /// Container images (none in an older pin file).
    #[serde(default)]
    pub images: Vec<ImagePin>,
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
    #[error(
        "the image `{name}` ({image}) has no digest recorded in {file}, so the exact image cannot be pinned and nothing was created; on a machine with internet run `harness pins lock` (it resolves every pinned image tag to its digest over the registry's HTTP API and writes it into {file}), review the diff, commit it and rebuild the harness"
    )]
    ImageNotLocked {
        name: String,
        image: String,
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

/// A manifest digest as registries report it: `sha256:` and 64 lower-case hex digits.
pub fn is_sha256_digest(s: &str) -> bool {
    s.strip_prefix("sha256:").is_some_and(is_hex_sha256)
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
        for (i, pin) in table.images.iter().enumerate() {
            let at = format!("images[{i}] (`{}`)", pin.name);
            if pin.name.is_empty() || pin.version.is_empty() || pin.image.is_empty() {
                return Err(invalid(format!(
                    "{at}: name, version and image must be set"
                )));
            }
            if pin.image.contains('@')
                || pin
                    .image
                    .rsplit('/')
                    .next()
                    .is_some_and(|last| last.contains(':'))
            {
                return Err(invalid(format!(
                    "{at}.image `{}`: give the repository only (`registry/owner/name`); the tag goes in `version`, the digest in `digest`",
                    pin.image
                )));
            }
            if let Some(digest) = &pin.digest
                && !is_sha256_digest(digest)
            {
                return Err(invalid(format!(
                    "{at}.digest `{digest}`: must be `sha256:` and 64 lower-case hex digits, or null until `harness pins lock` records it"
                )));
            }
            if table.images[..i].iter().any(|p| p.name == pin.name) {
                return Err(invalid(format!("{at}: the name is used twice")));
            }
        }
        Ok(table)
    }

    /// The image pin named `name` (with or without its digest).
    pub fn image(&self, name: &str, file: &str) -> Result<&ImagePin, PinError> {
        self.images
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| PinError::Missing {
                name: name.to_owned(),
                file: file.to_owned(),
            })
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
    replace_field(text, "releases", "sha256", hashes, file)
}

/// `text` (a pin file) with the `digest:` line of each image in `digests` (name →
/// `sha256:…`) replaced; comments, order and every other line stay as they are.
pub fn lock_digests_text(
    text: &str,
    digests: &[(String, String)],
    file: &str,
) -> Result<String, PinError> {
    replace_field(text, "images", "digest", digests, file)
}

/// Replaces the `field:` line of each entry of the top-level list `list` named in `values`.
fn replace_field(
    text: &str,
    list: &str,
    field: &str,
    values: &[(String, String)],
    file: &str,
) -> Result<String, PinError> {
    let mut out = String::with_capacity(text.len() + 72 * values.len());
    let mut in_list = false;
    let mut current: Option<String> = None;
    let mut written = Vec::new();
    let prefix = format!("{field}:");
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        // A line without indentation (not a comment) starts a top-level key.
        if !line.starts_with([' ', '\t', '#', '\n', '\r']) && !line.starts_with("- ") {
            in_list = trimmed.starts_with(&format!("{list}:"));
            current = None;
        }
        if in_list && let Some(name) = trimmed.strip_prefix("- name:") {
            current = Some(name.trim().trim_matches('"').to_owned());
        }
        let replaced = match (&current, trimmed.strip_prefix(prefix.as_str())) {
            (Some(name), Some(_)) if in_list => {
                values.iter().find(|(n, _)| n == name).map(|(_, value)| {
                    let indent = &line[..line.len() - trimmed.len()];
                    let newline = if line.ends_with('\n') { "\n" } else { "" };
                    written.push(name.clone());
                    format!("{indent}{field}: {value}{newline}")
                })
            }
            _ => None,
        };
        out.push_str(replaced.as_deref().unwrap_or(line));
    }
    if let Some((name, _)) = values.iter().find(|(n, _)| !written.contains(n)) {
        return Err(PinError::Invalid {
            file: file.to_owned(),
            reason: format!(
                "{list} entry `{name}` has no `{field}:` line to write to; add `{field}: null` under it"
            ),
        });
    }
    // What was written must read back as the same table with the values in place.
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
        let image = table.image("haproxy-ingress", PIN_FILE).unwrap();
        assert_eq!(image.tagged(), "quay.io/jcmoraisjr/haproxy-ingress:v0.16.1");
        assert_eq!(image.digest, None);
        let err = image.require_digest(PIN_FILE).unwrap_err().to_string();
        assert!(
            err.contains("has no digest recorded in harness/kind/third-party.yaml"),
            "{err}"
        );
        assert!(err.contains("run `harness pins lock`"), "{err}");
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

    #[test]
    fn lock_digests_text_writes_each_digest_under_its_image_only() {
        let digest = format!("sha256:{SHA}");
        let locked = lock_digests_text(
            BUILTIN,
            &[("haproxy-ingress".into(), digest.clone())],
            PIN_FILE,
        )
        .unwrap();
        let table = PinTable::parse(&locked, PIN_FILE).unwrap();
        let image = table.image("haproxy-ingress", PIN_FILE).unwrap();
        assert_eq!(image.digest.as_deref(), Some(digest.as_str()));
        assert_eq!(
            image.require_digest(PIN_FILE).unwrap(),
            format!("quay.io/jcmoraisjr/haproxy-ingress:v0.16.1@{digest}")
        );
        // The releases are untouched, and only the one line changed.
        assert!(table.releases.iter().all(|p| p.sha256.is_none()));
        let changed = BUILTIN
            .lines()
            .zip(locked.lines())
            .filter(|(a, b)| a != b)
            .count();
        assert_eq!(changed, 1);
        // A release hash is not written into an image of the same name, nor the reverse.
        let err = lock_text(BUILTIN, &[("haproxy-ingress".into(), SHA.into())], PIN_FILE)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("releases entry `haproxy-ingress` has no `sha256:` line"),
            "{err}"
        );
        let err = lock_digests_text(BUILTIN, &[("keda".into(), digest)], PIN_FILE)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("images entry `keda` has no `digest:` line"),
            "{err}"
        );
    }

    #[test]
    fn bad_image_pins_are_refused_naming_the_field() {
        let bad = BUILTIN.replacen("    digest: null", "    digest: sha256:12ab", 1);
        let err = PinTable::parse(&bad, "x.yaml").unwrap_err().to_string();
        assert!(
            err.contains("x.yaml: images[0] (`haproxy-ingress`).digest `sha256:12ab`"),
            "{err}"
        );
        let bad = BUILTIN.replacen(
            "image: quay.io/jcmoraisjr/haproxy-ingress",
            "image: quay.io/jcmoraisjr/haproxy-ingress:v0.16.1",
            1,
        );
        let err = PinTable::parse(&bad, "x.yaml").unwrap_err().to_string();
        assert!(err.contains("images[0] (`haproxy-ingress`).image"), "{err}");
        assert!(err.contains("the tag goes in `version`"), "{err}");
        // A registry host with a port is not a tag.
        let ok = BUILTIN.replacen(
            "image: quay.io/jcmoraisjr/haproxy-ingress",
            "image: 127.0.0.1:5000/jcmoraisjr/haproxy-ingress",
            1,
        );
        assert!(PinTable::parse(&ok, "x.yaml").is_ok());
        // An older pin file without `images:` still parses.
        let old = "schema: harness/third-party/v1\nreleases: []\n";
        assert!(PinTable::parse(old, "x.yaml").unwrap().images.is_empty());
    }
}

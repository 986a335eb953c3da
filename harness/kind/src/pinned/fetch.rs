//! Downloading a pinned release file (reqwest, bounded in time and size), checking its
//! SHA-256 against the pin, and caching it by hash under the user's cache directory
//! (`$XDG_CACHE_HOME/harness/third-party`, else `~/.cache/harness/third-party`), so a second
//! run reads it from disk. A cached file is hashed again before use.

use harness_core::text::error_chain;
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::pins::LockedPin;

/// The largest release file accepted (prometheus-operator's bundle is a few MB).
pub const MAX_BYTES: usize = 64 * 1024 * 1024;
/// How long one download may take.
pub const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(180);

/// Why a release file could not be had.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("downloading {url}: {reason}")]
    Download { url: String, reason: String },
    #[error("downloading {url}: HTTP {status}")]
    Status { url: String, status: u16 },
    #[error("downloading {url}: larger than {max} bytes; is the URL a release file?", max = MAX_BYTES)]
    TooLarge { url: String },
    #[error(
        "{url} does not match its pin: expected sha256 {expected}, got {actual}; the release file changed upstream or the download was tampered with. Nothing was applied. If the new file is intended, record it with `harness pins lock` and review the diff"
    )]
    Mismatch {
        url: String,
        expected: String,
        actual: String,
    },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

/// The default cache directory.
pub fn default_cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from("target"));
    base.join("harness").join("third-party")
}

/// Downloads and verifies pinned files.
#[derive(Debug, Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    cache_dir: PathBuf,
}

impl Fetcher {
    /// A fetcher caching under `cache_dir`.
    pub fn new(cache_dir: impl Into<PathBuf>) -> Result<Self, FetchError> {
        let client = reqwest::Client::builder()
            .timeout(DOWNLOAD_TIMEOUT)
            .connect_timeout(Duration::from_secs(20))
            .user_agent(concat!("harness/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| FetchError::Download {
                url: String::new(),
                reason: format!("cannot build the HTTP client: {e}"),
            })?;
        Ok(Fetcher {
            client,
            cache_dir: cache_dir.into(),
        })
    }

    pub fn cache_dir(&self) -> &Path {
        &self.cache_dir
    }

    /// The HTTP client (bounded connect time), shared with the registry resolution.
    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// Where `pin`'s file is cached: named by its hash and the URL's last segment.
    pub fn cache_path(&self, pin: &LockedPin) -> PathBuf {
        let file = pin
            .url
            .rsplit('/')
            .next()
            .filter(|s| !s.is_empty())
            .unwrap_or("release");
        let safe: String = file
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        self.cache_dir.join(format!("{}-{safe}", pin.sha256))
    }

    /// The file of `pin`: from the cache when it is there and still matches, else downloaded,
    /// verified and cached. A mismatch is refused and nothing is cached.
    pub async fn fetch(&self, pin: &LockedPin) -> Result<Vec<u8>, FetchError> {
        let path = self.cache_path(pin);
        if let Ok(bytes) = std::fs::read(&path) {
            if sha256_hex(&bytes) == pin.sha256 {
                return Ok(bytes);
            }
            // A damaged cache entry: fetch it again.
            let _ = std::fs::remove_file(&path);
        }
        let bytes = self.download(&pin.url).await?;
        let actual = sha256_hex(&bytes);
        if actual != pin.sha256 {
            return Err(FetchError::Mismatch {
                url: pin.url.clone(),
                expected: pin.sha256.clone(),
                actual,
            });
        }
        self.store(&path, &bytes)?;
        Ok(bytes)
    }

    /// Downloads `url` (no verification: what `harness pins lock` hashes).
    pub async fn download(&self, url: &str) -> Result<Vec<u8>, FetchError> {
        let fail = |reason: String| FetchError::Download {
            url: url.to_owned(),
            reason,
        };
        let mut response = self
            .client
            .get(url)
            .send()
            .await
            .map_err(|e| fail(error_chain(&e)))?;
        let status = response.status().as_u16();
        if status != 200 {
            return Err(FetchError::Status {
                url: url.to_owned(),
                status,
            });
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| fail(error_chain(&e)))? {
            if bytes.len() + chunk.len() > MAX_BYTES {
                return Err(FetchError::TooLarge {
                    url: url.to_owned(),
                });
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(bytes)
    }

    /// Writes `bytes` to `path` through a temporary file in the same directory.
    fn store(&self, path: &Path, bytes: &[u8]) -> Result<(), FetchError> {
        let io = |context: String| move |source| FetchError::Io { context, source };
        std::fs::create_dir_all(&self.cache_dir)
            .map_err(io(format!("creating {}", self.cache_dir.display())))?;
        let mut tmp = tempfile::NamedTempFile::new_in(&self.cache_dir)
            .map_err(io(format!("writing into {}", self.cache_dir.display())))?;
        std::io::Write::write_all(&mut tmp, bytes)
            .map_err(io(format!("writing {}", path.display())))?;
        tmp.persist(path)
            .map_err(|e| e.error)
            .map_err(io(format!("writing {}", path.display())))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_a_known_text() {
        // FIPS 180-2 test vector "abc".
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn cache_paths_are_named_by_hash_and_file() {
        let f = Fetcher::new("/cache").unwrap();
        let pin = LockedPin {
            name: "keda".into(),
            version: "v1".into(),
            url: "https://example.invalid/download/v1/keda-1.yaml".into(),
            sha256: "ab".repeat(32),
        };
        assert_eq!(
            f.cache_path(&pin),
            PathBuf::from(format!("/cache/{}-keda-1.yaml", "ab".repeat(32)))
        );
    }
}

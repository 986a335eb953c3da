//! Resolving a pinned image tag to its manifest digest over a registry's HTTP API (v2), what
//! `harness pins lock` records for [`super::pins::ImagePin`]: `HEAD /v2/<repository>/manifests/<tag>`
//! with the manifest-list and manifest media types in `Accept`, answering a
//! `401` + `WWW-Authenticate: Bearer realm=…,service=…,scope=…` challenge with an anonymous
//! token from the realm (`GET <realm>?service=…&scope=…`, JSON `token` or `access_token`),
//! and reading the `Docker-Content-Digest` header of the `200`.
//!
//! Sources: the OCI distribution spec v1.1 (`spec.md`, "Pulling manifests": `HEAD` answers
//! like `GET` without a body; the digest is in `Docker-Content-Digest`), and the Docker
//! registry token authentication spec (distribution/distribution `docs/spec/auth/token.md`:
//! the challenge's `realm`, `service` and `scope`, the token response's `token` with
//! `access_token` as its OAuth 2.0 alias). The media types are the OCI image index and manifest
//! (`application/vnd.oci.image.index.v1+json`, `application/vnd.oci.image.manifest.v1+json`)
//! and Docker's manifest list and schema 2 manifest
//! (`application/vnd.docker.distribution.manifest.list.v2+json`,
//! `application/vnd.docker.distribution.manifest.v2+json`): asking for the lists first makes a
//! multi-architecture tag resolve to its index, the digest every node's runtime pulls by.
//!
//! A registry host without a dot or port is Docker Hub (`registry-1.docker.io`, with `library/`
//! before a single-segment name), as Docker resolves references. Loopback registries
//! (`localhost`, `127.0.0.0/8`, `[::1]`) are spoken to over plain HTTP, as the Docker daemon
//! treats them as insecure by default; every other one over HTTPS.
//!
//! The challenge is parsed by `http-auth` (RFC 7235); the requests are this module's own rather
//! than `oci-client`'s: that client asks `GET /v2/` for the challenge before the manifest
//! request (not the manifest's own `401`), drops a failed token round trip and carries on
//! unauthenticated (so "no token" and "no Bearer challenge" become a bare 401), and answers a
//! `HEAD` without `Docker-Content-Digest` by a `GET` whose body it hashes instead of refusing.

use harness_core::text::error_chain;
use std::net::IpAddr;
use std::time::Duration;

use super::pins::is_sha256_digest;

/// What `Accept` lists, indexes first.
pub const MANIFEST_ACCEPT: &str = "application/vnd.oci.image.index.v1+json, application/vnd.docker.distribution.manifest.list.v2+json, application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json";

/// How long one registry request may take.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// The largest token response read.
const MAX_TOKEN_BYTES: usize = 64 * 1024;

/// Why a tag could not be resolved.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("`{reference}` is not an image repository reference (`registry/owner/name`)")]
    BadReference { reference: String },
    #[error("resolving {reference}: {reason}")]
    Request { reference: String, reason: String },
    #[error(
        "resolving {reference}: HTTP {status} from {url}{hint}",
        hint = status_hint(*status)
    )]
    Status {
        reference: String,
        url: String,
        status: u16,
    },
    #[error(
        "resolving {reference}: the registry's 401 has no usable Bearer challenge ({challenge})"
    )]
    Challenge {
        reference: String,
        challenge: String,
    },
    #[error("resolving {reference}: the token service at {realm} answered without a token")]
    NoToken { reference: String, realm: String },
    #[error(
        "resolving {reference}: the registry's answer has no valid Docker-Content-Digest header (got `{got}`)"
    )]
    NoDigest { reference: String, got: String },
}

fn status_hint(status: u16) -> &'static str {
    match status {
        404 => {
            "; the tag or repository does not exist (check `version` and `image` in the pin file)"
        }
        401 | 403 => "; the repository is not public, and pins are resolved anonymously",
        _ => "",
    }
}

/// A repository on a registry: where `/v2/` lives and the repository's name there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repository {
    /// `https://quay.io`, `http://127.0.0.1:5000`.
    pub base_url: String,
    /// `jcmoraisjr/haproxy-ingress`.
    pub name: String,
}

fn is_loopback_host(host: &str) -> bool {
    let bare = host
        .rsplit_once(':')
        .filter(|(h, port)| !h.is_empty() && port.bytes().all(|b| b.is_ascii_digit()))
        .map_or(host, |(h, _)| h);
    let bare = bare.trim_start_matches('[').trim_end_matches(']');
    bare == "localhost" || bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

impl Repository {
    /// Splits `quay.io/jcmoraisjr/haproxy-ingress` (no tag, no digest) into registry and name.
    pub fn parse(reference: &str) -> Result<Repository, RegistryError> {
        let bad = || RegistryError::BadReference {
            reference: reference.to_owned(),
        };
        if reference.is_empty()
            || reference.contains('@')
            || reference.contains(char::is_whitespace)
        {
            return Err(bad());
        }
        let (host, name) = match reference.split_once('/') {
            Some((first, rest))
                if first.contains('.') || first.contains(':') || first == "localhost" =>
            {
                (first.to_owned(), rest.to_owned())
            }
            Some(_) => ("registry-1.docker.io".to_owned(), reference.to_owned()),
            None => (
                "registry-1.docker.io".to_owned(),
                format!("library/{reference}"),
            ),
        };
        if name.is_empty() || name.split('/').any(str::is_empty) || name.contains(':') {
            return Err(bad());
        }
        let scheme = if is_loopback_host(&host) {
            "http"
        } else {
            "https"
        };
        Ok(Repository {
            base_url: format!("{scheme}://{host}"),
            name,
        })
    }

    /// `HEAD` target of `tag`'s manifest.
    pub fn manifest_url(&self, tag: &str) -> String {
        format!("{}/v2/{}/manifests/{tag}", self.base_url, self.name)
    }
}

/// The parameters of a `WWW-Authenticate: Bearer …` challenge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BearerChallenge {
    pub realm: String,
    pub service: Option<String>,
    pub scope: Option<String>,
}

/// The first `Bearer` challenge with a `realm` in a `WWW-Authenticate` value, as RFC 7235
/// reads it (`http-auth`): quoted values may hold commas and escapes, parameter names are
/// compared without case, and a challenge after a syntax error is not read.
pub fn parse_bearer_challenge(header: &str) -> Option<BearerChallenge> {
    http_auth::parser::ChallengeParser::new(header)
        .map_while(Result::ok)
        .filter(|c| c.scheme.eq_ignore_ascii_case("bearer"))
        .find_map(|c| {
            let get = |k: &str| {
                c.params
                    .iter()
                    .find(|(key, _)| key.eq_ignore_ascii_case(k))
                    .map(|(_, v)| v.to_unescaped())
            };
            Some(BearerChallenge {
                realm: get("realm").filter(|r| !r.is_empty())?,
                service: get("service"),
                scope: get("scope"),
            })
        })
}

/// Resolves `repository:tag` (`repository` without tag, as in the pin) to its manifest
/// digest (`sha256:…`), anonymously.
pub async fn resolve_digest(
    client: &reqwest::Client,
    repository: &str,
    tag: &str,
) -> Result<String, RegistryError> {
    let reference = format!("{repository}:{tag}");
    let repo = Repository::parse(repository)?;
    let url = repo.manifest_url(tag);
    let request_error = |e: reqwest::Error| RegistryError::Request {
        reference: reference.clone(),
        reason: error_chain(&e),
    };
    let head = |token: Option<&str>| {
        let mut request = client
            .head(&url)
            .header(reqwest::header::ACCEPT, MANIFEST_ACCEPT)
            .timeout(REQUEST_TIMEOUT);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send()
    };
    let mut response = head(None).await.map_err(request_error)?;
    if response.status().as_u16() == 401 {
        let header = response
            .headers()
            .get(reqwest::header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let challenge =
            parse_bearer_challenge(&header).ok_or_else(|| RegistryError::Challenge {
                reference: reference.clone(),
                challenge: if header.is_empty() {
                    "no WWW-Authenticate header".to_owned()
                } else {
                    header.clone()
                },
            })?;
        let token = anonymous_token(client, &challenge, &repo, &reference).await?;
        response = head(Some(&token)).await.map_err(request_error)?;
    }
    let status = response.status().as_u16();
    if status != 200 {
        return Err(RegistryError::Status {
            reference,
            url,
            status,
        });
    }
    let got = response
        .headers()
        .get("docker-content-digest")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .trim()
        .to_owned();
    if !is_sha256_digest(&got) {
        return Err(RegistryError::NoDigest { reference, got });
    }
    Ok(got)
}

/// An anonymous pull token from the challenge's realm.
async fn anonymous_token(
    client: &reqwest::Client,
    challenge: &BearerChallenge,
    repo: &Repository,
    reference: &str,
) -> Result<String, RegistryError> {
    if !(challenge.realm.starts_with("https://") || challenge.realm.starts_with("http://")) {
        return Err(RegistryError::Challenge {
            reference: reference.to_owned(),
            challenge: format!("realm `{}` is not an http(s) URL", challenge.realm),
        });
    }
    let scope = challenge
        .scope
        .clone()
        .unwrap_or_else(|| format!("repository:{}:pull", repo.name));
    let mut query = vec![("scope", scope)];
    if let Some(service) = &challenge.service {
        query.insert(0, ("service", service.clone()));
    }
    let fail = |reason: String| RegistryError::Request {
        reference: reference.to_owned(),
        reason,
    };
    let mut response = client
        .get(&challenge.realm)
        .query(&query)
        .timeout(REQUEST_TIMEOUT)
        .send()
        .await
        .map_err(|e| fail(error_chain(&e)))?;
    let status = response.status().as_u16();
    if status != 200 {
        return Err(RegistryError::Status {
            reference: reference.to_owned(),
            url: challenge.realm.clone(),
            status,
        });
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| fail(error_chain(&e)))? {
        if body.len() + chunk.len() > MAX_TOKEN_BYTES {
            return Err(fail(format!(
                "the token response from {} is larger than {MAX_TOKEN_BYTES} bytes",
                challenge.realm
            )));
        }
        body.extend_from_slice(&chunk);
    }
    let json: serde_json::Value = serde_json::from_slice(&body).map_err(|e| {
        fail(format!(
            "the token response from {} is not JSON: {e}",
            challenge.realm
        ))
    })?;
    ["token", "access_token"]
        .iter()
        .find_map(|k| {
            json.get(k)
                .and_then(|v| v.as_str())
                .filter(|t| !t.is_empty())
        })
        .map(str::to_owned)
        .ok_or_else(|| RegistryError::NoToken {
            reference: reference.to_owned(),
            realm: challenge.realm.clone(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_split_into_registry_and_name() {
        let quay = Repository::parse("quay.io/jcmoraisjr/haproxy-ingress").unwrap();
        assert_eq!(quay.base_url, "https://quay.io");
        assert_eq!(
            quay.manifest_url("v0.16.1"),
            "https://quay.io/v2/jcmoraisjr/haproxy-ingress/manifests/v0.16.1"
        );
        let hub = Repository::parse("jcmoraisjr/haproxy-ingress").unwrap();
        assert_eq!(hub.base_url, "https://registry-1.docker.io");
        assert_eq!(hub.name, "jcmoraisjr/haproxy-ingress");
        assert_eq!(
            Repository::parse("haproxy").unwrap().name,
            "library/haproxy"
        );
        let local = Repository::parse("127.0.0.1:5000/owner/name").unwrap();
        assert_eq!(local.base_url, "http://127.0.0.1:5000");
        assert_eq!(
            Repository::parse("localhost/x").unwrap().base_url,
            "http://localhost"
        );
        assert_eq!(
            Repository::parse("[::1]:5000/x").unwrap().base_url,
            "http://[::1]:5000"
        );
        assert_eq!(
            Repository::parse("registry.example:5000/x")
                .unwrap()
                .base_url,
            "https://registry.example:5000"
        );
        for bad in [
            "",
            "quay.io/",
            "quay.io/a//b",
            "a/b:tag",
            "a/b@sha256:00",
            "a b",
        ] {
            assert!(Repository::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn bearer_challenges_parse_with_commas_in_quotes() {
        let c = parse_bearer_challenge(
            r#"Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:samalba/my-app:pull,push""#,
        )
        .unwrap();
        assert_eq!(c.realm, "https://auth.docker.io/token");
        assert_eq!(c.service.as_deref(), Some("registry.docker.io"));
        assert_eq!(
            c.scope.as_deref(),
            Some("repository:samalba/my-app:pull,push")
        );
        let c =
            parse_bearer_challenge(r#"bearer realm="https://quay.io/v2/auth", service=quay.io"#)
                .unwrap();
        assert_eq!(c.service.as_deref(), Some("quay.io"));
        assert_eq!(c.scope, None);
        assert!(parse_bearer_challenge(r#"Basic realm="x""#).is_none());
        assert!(parse_bearer_challenge(r#"Bearer service="x""#).is_none());
        assert!(parse_bearer_challenge("Bearer").is_none());
    }
}

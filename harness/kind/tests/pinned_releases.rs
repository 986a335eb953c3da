//! The pinned third-party releases against HTTP servers on 127.0.0.1: a release file
//! downloaded, verified and cached (a wrong hash refused naming URL, expected and actual),
//! `pins lock` writing each hash into the pin file, an unlocked pin refusing the run with how
//! to lock it, and a downloaded multi-document release applied in order by server-side apply
//! against a scripted API server, with the CRD `Established` and Deployment `Available` waits.
//! Image pins against a fake registry (registry HTTP API v2 with Bearer token auth): the tag
//! resolved to its `Docker-Content-Digest` through the 401 + anonymous token round trip, and
//! `pins lock` writing the digest into the pin file.

#[path = "support/registry_fake.rs"]
mod registry_fake;
mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use harness_kind::pinned::apply::{self, ApplyError, Waits};
use harness_kind::pinned::fetch::{FetchError, Fetcher, sha256_hex};
use harness_kind::pinned::registry::{self, MANIFEST_ACCEPT, RegistryError};
use harness_kind::pinned::{
    self, LockedPin, PinTable, ThirdPartyError, install_releases, lock_file, required_from,
};
use registry_fake::{FakeRegistry, RegistryMode};
use serde_json::{Value, json};
use support::api_server::{ApiServer, Reply, status};
use support::files::{load, repo};

fn fixture() -> String {
    std::fs::read_to_string(repo("harness/kind/tests/fixtures/release.yaml")).unwrap()
}

/// Serves the fixture at `/download/v1/release.yaml`, a second file at `/download/v1/other.yaml`.
async fn release_server() -> ApiServer {
    let text = fixture();
    ApiServer::start(move |seen| match seen.path() {
        "/download/v1/release.yaml" => Reply::Text(200, text.clone()),
        "/download/v1/other.yaml" => Reply::Text(200, "other\n".into()),
        _ => Reply::Text(404, "no such release".into()),
    })
    .await
}

fn pin(server: &ApiServer, file: &str, sha256: String) -> LockedPin {
    LockedPin {
        name: "fixture".into(),
        version: "v1".into(),
        url: format!("http://{}/download/v1/{file}", server.addr),
        sha256,
    }
}

#[tokio::test]
async fn a_release_is_downloaded_verified_and_cached() {
    let server = release_server().await;
    let cache = tempfile::tempdir().unwrap();
    let fetcher = Fetcher::new(cache.path()).unwrap();
    let want = fixture();
    let p = pin(&server, "release.yaml", sha256_hex(want.as_bytes()));
    let bytes = fetcher.fetch(&p).await.unwrap();
    assert_eq!(bytes, want.as_bytes());
    let cached = fetcher.cache_path(&p);
    assert_eq!(std::fs::read(&cached).unwrap(), want.as_bytes());
    // The second time from the cache: still one request.
    assert_eq!(fetcher.fetch(&p).await.unwrap(), want.as_bytes());
    assert_eq!(server.seen().len(), 1);
    // A damaged cache entry is fetched again.
    std::fs::write(&cached, "tampered").unwrap();
    assert_eq!(fetcher.fetch(&p).await.unwrap(), want.as_bytes());
    assert_eq!(server.seen().len(), 2);
}

#[tokio::test]
async fn a_wrong_hash_is_refused_naming_url_expected_and_actual() {
    let server = release_server().await;
    let cache = tempfile::tempdir().unwrap();
    let fetcher = Fetcher::new(cache.path()).unwrap();
    let expected = "0".repeat(64);
    let p = pin(&server, "release.yaml", expected.clone());
    let err = fetcher.fetch(&p).await.unwrap_err();
    let actual = sha256_hex(fixture().as_bytes());
    match &err {
        FetchError::Mismatch {
            url,
            expected: e,
            actual: a,
        } => {
            assert_eq!(url, &p.url);
            assert_eq!(e, &expected);
            assert_eq!(a, &actual);
        }
        other => panic!("not a mismatch: {other}"),
    }
    let text = err.to_string();
    assert!(
        text.contains(&p.url) && text.contains(&expected) && text.contains(&actual),
        "{text}"
    );
    assert!(!fetcher.cache_path(&p).exists(), "nothing is cached");
    // A missing file says its status.
    let gone = pin(&server, "gone.yaml", expected);
    let err = fetcher.fetch(&gone).await.unwrap_err().to_string();
    assert!(err.contains("gone.yaml: HTTP 404"), "{err}");
}

fn pin_file(server: &ApiServer, second: &str) -> String {
    format!(
        "# pins for the test\nschema: harness/third-party/v1\nreleases:\n  # the fixture\n  - name: fixture\n    version: v1\n    url: http://{0}/download/v1/release.yaml\n    sha256: null\n  - name: other\n    version: v2\n    url: http://{0}/download/v1/{second}\n    sha256: null\n",
        server.addr
    )
}

#[tokio::test]
async fn pins_lock_writes_each_files_hash_into_the_pin_file() {
    let server = release_server().await;
    let dir = tempfile::tempdir().unwrap();
    let fetcher = Fetcher::new(dir.path().join("cache")).unwrap();
    let path = dir.path().join("third-party.yaml");
    std::fs::write(&path, pin_file(&server, "other.yaml")).unwrap();
    let report = lock_file(&path, &fetcher).await.unwrap();
    assert!(report.images.is_empty());
    let hashes = report.releases;
    let fixture_sha = sha256_hex(fixture().as_bytes());
    let other_sha = sha256_hex(b"other\n");
    assert_eq!(
        hashes,
        [
            ("fixture".to_owned(), fixture_sha.clone()),
            ("other".to_owned(), other_sha.clone())
        ]
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("# pins for the test\n") && text.contains("  # the fixture\n"));
    let table = PinTable::parse(&text, "third-party.yaml").unwrap();
    let fixture_pin = table.require_locked("fixture", "third-party.yaml").unwrap();
    assert_eq!(fixture_pin.sha256, fixture_sha);
    assert_eq!(
        table.releases[1].sha256.as_deref(),
        Some(other_sha.as_str())
    );
    // The locked pin then downloads and verifies.
    assert_eq!(
        fetcher.fetch(&fixture_pin).await.unwrap(),
        fixture().as_bytes()
    );

    // A failed download writes nothing.
    let before = pin_file(&server, "gone.yaml");
    std::fs::write(&path, &before).unwrap();
    let err = lock_file(&path, &fetcher).await.unwrap_err().to_string();
    assert!(err.contains("gone.yaml: HTTP 404"), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
}

#[test]
fn an_unlocked_pin_refuses_the_run_and_says_how_to_lock_it() {
    let scenario = load("scenarios/autoscaler-blind-spot.yaml", None);
    let err = pinned::required_releases(&scenario)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("has no sha256 recorded in harness/kind/third-party.yaml"),
        "{err}"
    );
    assert!(err.contains("run `harness pins lock`"), "{err}");
    assert!(err.contains("nothing was created"), "{err}");
    // A scenario without an autoscaler needs no release.
    let plain = load("scenarios/topology-skew.yaml", None);
    assert!(pinned::required_releases(&plain).unwrap().is_empty());
    // Locked pins pass, in install order.
    let sha = "a".repeat(64);
    let text = format!(
        "schema: harness/third-party/v1\nreleases:\n  - {{name: keda, version: v1, url: https://x.invalid/k.yaml, sha256: {sha}}}\n  - {{name: prometheus-operator, version: v2, url: https://x.invalid/b.yaml, sha256: {sha}}}\n"
    );
    let table = PinTable::parse(&text, "t.yaml").unwrap();
    let names: Vec<String> = required_from(&table, "t.yaml")
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(names, ["prometheus-operator", "keda"]);
}

/// Echoes an applied object back as the API server would.
fn echo(body: &str) -> Reply {
    let mut v: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    v["metadata"]["resourceVersion"] = json!("2");
    Reply::Json(200, v)
}

fn crd(established: bool) -> Value {
    let docs = apply::split(&fixture(), "release.yaml").unwrap();
    let mut crd = docs[1].clone();
    crd["status"] = json!({ "conditions": [
        { "type": "NamesAccepted", "status": "True" },
        { "type": "Established", "status": if established { "True" } else { "False" } },
    ]});
    crd
}

fn deployment(available: bool) -> Value {
    let docs = apply::split(&fixture(), "release.yaml").unwrap();
    let mut d = docs[4].clone();
    d["status"] = json!({ "conditions": [
        { "type": "Available", "status": if available { "True" } else { "False" } },
    ]});
    d
}

#[tokio::test]
async fn a_downloaded_release_is_applied_in_order_then_waited_for() {
    let releases = release_server().await;
    let crd_reads = Arc::new(AtomicUsize::new(0));
    let reads = crd_reads.clone();
    let api = ApiServer::start(move |seen| match (seen.method.as_str(), seen.path()) {
        ("PATCH", _) => echo(&seen.body),
        ("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.test") => {
            // Established from the second read on.
            let n = reads.fetch_add(1, Ordering::SeqCst);
            Reply::Json(200, crd(n >= 1))
        }
        ("GET", "/apis/apps/v1/namespaces/fixture/deployments/fixture-operator") => {
            Reply::Json(200, deployment(true))
        }
        _ => status(404, "NotFound", "not scripted"),
    })
    .await;
    let cache = tempfile::tempdir().unwrap();
    let fetcher = Fetcher::new(cache.path()).unwrap();
    let p = pin(&releases, "release.yaml", sha256_hex(fixture().as_bytes()));
    let waits = Waits {
        limit: Duration::from_secs(30),
        every: Duration::from_millis(10),
    };
    let applied = install_releases(&api.client(), &fetcher, &[p], waits)
        .await
        .unwrap();
    let names: Vec<String> = applied.iter().map(|r| r.to_string()).collect();
    assert_eq!(
        names,
        [
            "Namespace fixture",
            "CustomResourceDefinition widgets.example.test",
            "ServiceAccount fixture/fixture-operator",
            "ClusterRole fixture-operator",
            "Deployment fixture/fixture-operator",
            "APIService v1beta1.external.metrics.k8s.io",
        ]
    );
    let calls = api.calls();
    let patches: Vec<&str> = calls
        .iter()
        .filter(|c| c.method == "PATCH")
        .map(|c| c.path())
        .collect();
    assert_eq!(
        patches,
        [
            "/api/v1/namespaces/fixture",
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.test",
            "/api/v1/namespaces/fixture/serviceaccounts/fixture-operator",
            "/apis/rbac.authorization.k8s.io/v1/clusterroles/fixture-operator",
            "/apis/apps/v1/namespaces/fixture/deployments/fixture-operator",
            "/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.external.metrics.k8s.io",
        ]
    );
    for c in calls.iter().filter(|c| c.method == "PATCH") {
        assert_eq!(c.query("fieldManager").as_deref(), Some("harness"));
        assert_eq!(c.query("force").as_deref(), Some("true"));
        assert_eq!(
            c.content_type.as_deref(),
            Some("application/apply-patch+yaml")
        );
    }
    // The body is the release's object as it was in the file.
    assert_eq!(
        calls[4].json()["spec"]["template"]["spec"]["containers"][0]["image"],
        "example.test/operator:v1"
    );
    // Every object is applied before any wait; the CRD was read until Established, then the
    // Deployment.
    let order: Vec<(&str, &str)> = calls
        .iter()
        .map(|c| (c.method.as_str(), c.path().rsplit('/').next().unwrap_or("")))
        .collect();
    let first_get = order.iter().position(|(m, _)| *m == "GET").unwrap();
    assert_eq!(first_get, 6);
    assert_eq!(crd_reads.load(Ordering::SeqCst), 2);
    assert_eq!(order.last().unwrap(), &("GET", "fixture-operator"));
}

#[tokio::test]
async fn waits_are_bounded_and_name_what_never_became_ready() {
    let api = ApiServer::start(|seen| match (seen.method.as_str(), seen.path()) {
        ("PATCH", _) => echo(&seen.body),
        ("GET", p) if p.contains("customresourcedefinitions") => Reply::Json(200, crd(false)),
        ("GET", p) if p.contains("deployments") => Reply::Json(200, deployment(false)),
        _ => status(404, "NotFound", "not scripted"),
    })
    .await;
    let waits = Waits {
        limit: Duration::from_millis(100),
        every: Duration::from_millis(10),
    };
    let client = api.client();
    let err = apply::wait_established(&client, &["widgets.example.test".into()], waits)
        .await
        .unwrap_err();
    assert!(matches!(err, ApplyError::Timeout { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("CustomResourceDefinitions (condition Established) not ready after 0s: widgets.example.test"),
        "{err}"
    );
    let err = apply::wait_available(
        &client,
        &[("fixture".into(), "fixture-operator".into())],
        waits,
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(err.contains("Deployment fixture/fixture-operator"), "{err}");

    // An object the API server refuses stops the install, naming it.
    let refusing =
        ApiServer::start(|_| status(403, "Forbidden", "cannot patch clusterroles")).await;
    let docs = apply::split(&fixture(), "release.yaml").unwrap();
    let err = apply::install(&refusing.client(), &docs, waits)
        .await
        .unwrap_err();
    let text = ThirdPartyError::from(err).to_string();
    assert!(
        text.starts_with("applying Namespace fixture: HTTP 403"),
        "{text}"
    );
}

const DIGEST: &str = "sha256:4f3b2a1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a";

#[tokio::test]
async fn an_image_tag_resolves_to_its_digest_through_the_token_round_trip() {
    let fake = FakeRegistry::start(RegistryMode::BearerToken, DIGEST).await;
    let client = reqwest::Client::new();
    let repository = format!("{}/jcmoraisjr/haproxy-ingress", fake.addr);
    let digest = registry::resolve_digest(&client, &repository, "v0.16.1")
        .await
        .unwrap();
    assert_eq!(digest, DIGEST);
    let seen = fake.seen();
    let lines: Vec<String> = seen
        .iter()
        .map(|r| {
            format!(
                "{} {} auth={}",
                r.method,
                r.uri,
                r.authorization.as_deref().unwrap_or("-")
            )
        })
        .collect();
    assert_eq!(
        lines,
        [
            "HEAD /v2/jcmoraisjr/haproxy-ingress/manifests/v0.16.1 auth=-".to_owned(),
            "GET /token?service=fake-registry&scope=repository%3Ajcmoraisjr%2Fhaproxy-ingress%3Apull auth=-".to_owned(),
            format!(
                "HEAD /v2/jcmoraisjr/haproxy-ingress/manifests/v0.16.1 auth=Bearer {}",
                registry_fake::TOKEN
            ),
        ]
    );
    // Both manifest requests ask for indexes first, then single manifests.
    for r in seen.iter().filter(|r| r.method == "HEAD") {
        assert_eq!(r.accept.as_deref(), Some(MANIFEST_ACCEPT));
    }
    assert!(MANIFEST_ACCEPT.starts_with("application/vnd.oci.image.index.v1+json"));
}

#[tokio::test]
async fn registry_failures_say_what_went_wrong() {
    let client = reqwest::Client::new();
    // An open registry answers without a challenge.
    let open = FakeRegistry::start(RegistryMode::Open, DIGEST).await;
    let repo = format!("{}/owner/name", open.addr);
    assert_eq!(
        registry::resolve_digest(&client, &repo, "v1")
            .await
            .unwrap(),
        DIGEST
    );
    assert_eq!(open.seen().len(), 1);
    // A missing tag is a 404 naming the reference and what to check.
    let err = registry::resolve_digest(&client, &repo, "missing")
        .await
        .unwrap_err();
    assert!(
        matches!(err, RegistryError::Status { status: 404, .. }),
        "{err}"
    );
    let text = err.to_string();
    assert!(
        text.contains(&format!("resolving {repo}:missing: HTTP 404")),
        "{text}"
    );
    assert!(text.contains("check `version` and `image`"), "{text}");
    // A token service that answers without a token.
    let tokenless = FakeRegistry::start(RegistryMode::TokenWithoutToken, DIGEST).await;
    let repo = format!("{}/owner/name", tokenless.addr);
    let err = registry::resolve_digest(&client, &repo, "v1")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("answered without a token"), "{err}");
    // A 401 without a Bearer challenge.
    let basic = FakeRegistry::start(RegistryMode::BasicOnly, DIGEST).await;
    let repo = format!("{}/owner/name", basic.addr);
    let err = registry::resolve_digest(&client, &repo, "v1")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("no usable Bearer challenge"), "{err}");
    // A 200 without a digest header.
    let digestless = FakeRegistry::start(RegistryMode::NoDigestHeader, DIGEST).await;
    let repo = format!("{}/owner/name", digestless.addr);
    let err = registry::resolve_digest(&client, &repo, "v1")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("no valid Docker-Content-Digest header (got ``)"),
        "{err}"
    );
}

#[tokio::test]
async fn pins_lock_writes_each_images_digest_into_the_pin_file() {
    let fake = FakeRegistry::start(RegistryMode::BearerToken, DIGEST).await;
    let dir = tempfile::tempdir().unwrap();
    let fetcher = Fetcher::new(dir.path().join("cache")).unwrap();
    let path = dir.path().join("third-party.yaml");
    let before = format!(
        "schema: harness/third-party/v1\nreleases: []\nimages:\n  # the controller\n  - name: haproxy-ingress\n    version: v0.16.1\n    image: {}/jcmoraisjr/haproxy-ingress\n    digest: null\n",
        fake.addr
    );
    std::fs::write(&path, &before).unwrap();
    let report = lock_file(&path, &fetcher).await.unwrap();
    assert_eq!(
        report.images,
        [("haproxy-ingress".to_owned(), DIGEST.to_owned())]
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        text,
        before.replace("digest: null", &format!("digest: {DIGEST}"))
    );
    let table = PinTable::parse(&text, "third-party.yaml").unwrap();
    let image = table.image("haproxy-ingress", "third-party.yaml").unwrap();
    assert_eq!(
        image.require_digest("third-party.yaml").unwrap(),
        format!("{}/jcmoraisjr/haproxy-ingress:v0.16.1@{DIGEST}", fake.addr)
    );

    // A failed resolution writes nothing.
    let missing = before.replace("v0.16.1", "missing");
    std::fs::write(&path, &missing).unwrap();
    let err = lock_file(&path, &fetcher).await.unwrap_err().to_string();
    assert!(err.contains("HTTP 404"), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), missing);
}

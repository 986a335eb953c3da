//! Third-party components the kind target installs from their own pinned upstream releases:
//! the pin table ([`pins`], `harness/kind/third-party.yaml`), the verified download and cache
//! ([`fetch`]), the server-side apply of a release's objects with the readiness waits
//! ([`apply`]), and the tag-to-digest resolution of pinned images ([`registry`]). No
//! third-party manifest is copied into this repository.
//!
//! # The metrics pipeline behind the real HorizontalPodAutoscaler
//!
//! **KEDA** (its single-file release `keda-<version>.yaml`) with its `prometheus` scaler, and
//! **Prometheus** run by **prometheus-operator** (its `bundle.yaml` release asset), scraping
//! the sidecars and the generators through PodMonitors the harness renders
//! ([`crate::manifests::autoscaler`]). Why this pair:
//!
//! - The HPA is Kubernetes' own: KEDA's operator turns a `ScaledObject` into a plain
//!   `autoscaling/v2` HorizontalPodAutoscaler on an External metric with an `AverageValue`
//!   target, and its metrics API server answers `external.metrics.k8s.io` with the value of a
//!   PromQL query. The HPA controller (kube-controller-manager, with the scenario's sync period
//!   and tolerance) does the arithmetic: `ceil(total / target)` replicas, stabilization and
//!   policies from `behavior`, which the ScaledObject passes through unchanged
//!   (`spec.advanced.horizontalPodAutoscalerConfig.behavior`).
//! - One query per side says exactly what the scenario means: the rate of
//!   `sidecar_admitted_total` (destination) or `loadgen_attempted_total` (source) summed over
//!   the namespace. prometheus-adapter would need its rule language and a Prometheus installed
//!   anyway, and has no single-file release to pin: two single-file releases, both applied as
//!   they are, are the fewest moving parts that give a real HPA on a request rate.
//! - Both are maintained CNCF projects with versioned release assets, so the pin is a URL, a
//!   version and a SHA-256.
//!
//! Installed in this order: prometheus-operator, then KEDA; the run waits for each release's
//! CRDs to be Established and its Deployments to be Available (bounded), then applies its own
//! objects.

pub mod apply;
pub mod fetch;
pub mod pins;
pub mod registry;

use harness_core::scenario::model::Scenario;

pub use pins::{ImagePin, LockedPin, PIN_FILE, PinError, PinTable};

/// The releases the autoscaler needs, in install order.
pub const AUTOSCALER_RELEASES: [&str; 2] = ["prometheus-operator", "keda"];

/// The pinned releases `scenario` needs on kind, each with its hash: empty for a scenario
/// without an autoscaler; an error, before anything is created, when a needed pin has no
/// sha256 recorded (the message says how to record it). The table is the built-in one
/// (`KindTarget::with_third_party` gives another).
pub fn required_releases(scenario: &Scenario) -> Result<Vec<LockedPin>, PinError> {
    if scenario.service.autoscaler.is_none() {
        return Ok(Vec::new());
    }
    required_from(&PinTable::builtin()?, PIN_FILE)
}

/// [`required_releases`] against a given table (tests, or a table read from `file`).
pub fn required_from(table: &PinTable, file: &str) -> Result<Vec<LockedPin>, PinError> {
    AUTOSCALER_RELEASES
        .iter()
        .map(|name| table.require_locked(name, file))
        .collect()
}

/// Why a third-party release could not be installed.
#[derive(Debug, thiserror::Error)]
pub enum ThirdPartyError {
    #[error(transparent)]
    Pins(#[from] PinError),
    #[error(transparent)]
    Fetch(#[from] fetch::FetchError),
    #[error(transparent)]
    Apply(#[from] apply::ApplyError),
    #[error(transparent)]
    Registry(#[from] registry::RegistryError),
    #[error("{url}: the release file is not UTF-8 text")]
    NotText { url: String },
}

/// Downloads (or reads from the cache), verifies and installs each pinned release in order:
/// every object server-side applied, then its CRDs Established and its Deployments Available.
pub async fn install_releases(
    client: &kube::Client,
    fetcher: &fetch::Fetcher,
    pins: &[LockedPin],
    waits: apply::Waits,
) -> Result<Vec<apply::ObjectRef>, ThirdPartyError> {
    let mut applied = Vec::new();
    for pin in pins {
        let bytes = fetcher.fetch(pin).await?;
        let text = String::from_utf8(bytes).map_err(|_| ThirdPartyError::NotText {
            url: pin.url.clone(),
        })?;
        let docs = apply::split(&text, &pin.url)?;
        applied.extend(apply::install(client, &docs, waits).await?);
    }
    Ok(applied)
}

/// What `harness pins lock` recorded, in file order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LockReport {
    /// (release name, sha256 hex of its file).
    pub releases: Vec<(String, String)>,
    /// (image name, manifest digest `sha256:…` its tag resolved to).
    pub images: Vec<(String, String)>,
}

/// `harness pins lock`: downloads every release of the pin file at `path` and hashes it,
/// resolves every image's tag to its manifest digest over the registry's HTTP API
/// ([`registry::resolve_digest`]), and writes each SHA-256 and digest into the file (comments
/// and order kept). Nothing is written when a download or a resolution fails.
pub async fn lock_file(
    path: &std::path::Path,
    fetcher: &fetch::Fetcher,
) -> Result<LockReport, ThirdPartyError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| PinError::Io {
        context: format!("reading {file}"),
        source,
    })?;
    let table = PinTable::parse(&text, &file)?;
    let mut report = LockReport::default();
    for pin in &table.releases {
        let bytes = fetcher.download(&pin.url).await?;
        report
            .releases
            .push((pin.name.clone(), fetch::sha256_hex(&bytes)));
    }
    for image in &table.images {
        let digest =
            registry::resolve_digest(fetcher.client(), &image.image, &image.version).await?;
        report.images.push((image.name.clone(), digest));
    }
    let locked = pins::lock_text(&text, &report.releases, &file)?;
    let locked = pins::lock_digests_text(&locked, &report.images, &file)?;
    std::fs::write(path, locked).map_err(|source| PinError::Io {
        context: format!("writing {file}"),
        source,
    })?;
    Ok(report)
}

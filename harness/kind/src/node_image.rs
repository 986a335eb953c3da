//! The kind node image a created cluster runs (`harness run --target kind --node-image IMAGE`,
//! the matrix axis `kind.nodeImage=IMG1,IMG2`), which fixes the cluster's Kubernetes version:
//! its form and the oldest Kubernetes the kind target supports, what a scenario needs beyond
//! that floor, and the version the run then observes on its Nodes.
//!
//! - Form: `kindest/node:vMAJOR.MINOR.PATCH`, optionally pinned as
//!   `kindest/node:vMAJOR.MINOR.PATCH@sha256:<64 hex digits>`. kind's documentation asks for
//!   the digest: "Please include the `@sha256:` image digest from the image in the release
//!   notes" (kubernetes-sigs/kind `site/content/docs/user/working-offline.md`, "Using a
//!   pre-built node image"); a tag can be pushed again, a digest cannot. An image without one
//!   is used with a warning. kind supports a node image "with the kind version they were
//!   released with (and best effort with other releases)" (`site/content/docs/design/node-image.md`);
//!   [`crate::pins::NODE_IMAGE`] is the image of the kind release the harness requires.
//! - Floor, [`MIN_KUBERNETES`] = v1.31.0: the run's Service may set `spec.trafficDistribution`
//!   (feature gate `ServiceTrafficDistribution`: alpha and off in 1.30, beta and on by default
//!   from 1.31, GA in 1.33), and its pods may have a `sleep` preStop hook
//!   (`PodLifecycleSleepAction`: alpha 1.29, beta and on by default from 1.30, GA 1.34); both
//!   from kubernetes/kubernetes `pkg/features/kube_features.go` (v1.34). A field behind a gate
//!   that is off is dropped by the API server, so an older cluster would run another scenario
//!   than the file says, silently; it is refused instead.
//! - Per scenario: `trafficDistribution: PreferSameZone` or `PreferSameNode` needs v1.34
//!   (`PreferSameTrafficDistribution`: alpha 1.33, beta and on by default from 1.34).
//! - The local target's models are ports of v1.34 ([`kube_model::KUBERNETES_VERSION`]): on
//!   another version the model check compares the real controller with v1.34's algorithm.

use std::collections::BTreeMap;

use harness_core::report::KubernetesInfo;
use harness_core::scenario::model::{Routing, Scenario, TrafficDistribution};
use k8s_openapi::api::core::v1::Node;

use crate::pins::{self, Version};

/// The repository of kind's node images.
pub const REPOSITORY: &str = "kindest/node";

/// The oldest Kubernetes the kind target runs (see the module documentation).
pub const MIN_KUBERNETES: Version = Version::new(1, 31, 0);

/// The first Kubernetes with `PreferSameZone`/`PreferSameNode` on by default.
pub const PREFER_SAME_MIN_KUBERNETES: Version = Version::new(1, 34, 0);

/// A checked kind node image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeImage {
    reference: String,
    kubernetes: Version,
    digest: Option<String>,
}

/// Why a text is not a node image the kind target runs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NodeImageError {
    #[error(
        "`{0}` is not a kind node image: use {REPOSITORY}:vMAJOR.MINOR.PATCH, best pinned by digest as {REPOSITORY}:vMAJOR.MINOR.PATCH@sha256:<64 hex digits> (each kind release's notes list its images with their digests)"
    )]
    Form(String),
    #[error(
        "`{image}` runs Kubernetes v{version}, older than v{MIN_KUBERNETES}, the oldest the kind target runs: it relies on spec.trafficDistribution (on by default from 1.31) and preStop sleep hooks (from 1.30), which older API servers drop; choose a {REPOSITORY} image of v{MIN_KUBERNETES} or newer"
    )]
    TooOld { image: String, version: Version },
}

impl NodeImage {
    /// Parses and checks `text` (form and [`MIN_KUBERNETES`]).
    pub fn parse(text: &str) -> Result<NodeImage, NodeImageError> {
        let form = || NodeImageError::Form(text.to_owned());
        let tag_and_digest = text
            .strip_prefix(REPOSITORY)
            .and_then(|rest| rest.strip_prefix(":v"))
            .ok_or_else(form)?;
        let (tag, digest) = match tag_and_digest.split_once('@') {
            Some((tag, digest)) => {
                let hex = digest.strip_prefix("sha256:").ok_or_else(form)?;
                let valid = hex.len() == 64
                    && hex
                        .bytes()
                        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
                if !valid {
                    return Err(form());
                }
                (tag, Some(digest.to_owned()))
            }
            None => (tag_and_digest, None),
        };
        let parts: Vec<&str> = tag.split('.').collect();
        let numbers: Vec<u64> = parts
            .iter()
            .filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            .filter_map(|p| p.parse().ok())
            .collect();
        let [major, minor, patch] = numbers[..] else {
            return Err(form());
        };
        if parts.len() != 3 {
            return Err(form());
        }
        let kubernetes = Version::new(major, minor, patch);
        if kubernetes < MIN_KUBERNETES {
            return Err(NodeImageError::TooOld {
                image: text.to_owned(),
                version: kubernetes,
            });
        }
        Ok(NodeImage {
            reference: text.to_owned(),
            kubernetes,
            digest,
        })
    }

    /// The pinned image ([`pins::NODE_IMAGE`]).
    pub fn pinned() -> NodeImage {
        NodeImage::parse(pins::NODE_IMAGE).expect("pins::NODE_IMAGE is a valid node image")
    }

    /// The image as given to `kind create cluster --image`.
    pub fn reference(&self) -> &str {
        &self.reference
    }

    /// The Kubernetes version of the image's tag.
    pub fn kubernetes(&self) -> Version {
        self.kubernetes
    }

    /// `sha256:...`, when pinned by digest.
    pub fn digest(&self) -> Option<&str> {
        self.digest.as_deref()
    }

    /// `v1.33.1`.
    pub fn version_label(&self) -> String {
        format!("v{}", self.kubernetes)
    }

    /// `v1-33-1`: the version as a part of a kind cluster name (`[a-z0-9.-]`, no dots, which
    /// would end up in the node containers' host names).
    pub fn name_part(&self) -> String {
        format!(
            "v{}-{}-{}",
            self.kubernetes.major, self.kubernetes.minor, self.kubernetes.patch
        )
    }

    /// What to tell the user before using this image, if anything.
    pub fn warning(&self) -> Option<String> {
        self.digest.is_none().then(|| {
            format!(
                "node image {} has no @sha256 digest: the tag may point at another image tomorrow; kind's docs ask to include the digest listed in its release notes ({REPOSITORY}:{}@sha256:...)",
                self.reference,
                self.version_label()
            )
        })
    }
}

impl std::fmt::Display for NodeImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reference)
    }
}

/// What `scenario` needs of Kubernetes beyond [`MIN_KUBERNETES`] that `image` lacks, one
/// sentence each (empty: it can run).
pub fn refusals(scenario: &Scenario, image: &NodeImage) -> Vec<String> {
    let mut out = Vec::new();
    if let Routing::TrafficDistribution(
        d @ (TrafficDistribution::PreferSameZone | TrafficDistribution::PreferSameNode),
    ) = scenario.service.routing
        && image.kubernetes() < PREFER_SAME_MIN_KUBERNETES
    {
        out.push(format!(
            "service.trafficDistribution {}: Kubernetes v{PREFER_SAME_MIN_KUBERNETES} or newer has it on by default (feature gate PreferSameTrafficDistribution), the node image {image} runs v{}",
            crate::manifests::traffic_distribution_value(d),
            image.kubernetes()
        ));
    }
    out
}

/// The Kubernetes the run's Nodes report (`status.nodeInfo.kubeletVersion`), with the node
/// image the harness created the cluster with (`None` for a cluster it did not create). The
/// version is the lowest when the kubelets differ (a cluster half-way through an upgrade).
pub fn observed<'a>(
    nodes: impl IntoIterator<Item = &'a Node>,
    node_image: Option<&str>,
) -> KubernetesInfo {
    let mut kubelet_versions: BTreeMap<String, u32> = BTreeMap::new();
    for node in nodes {
        let version = node
            .status
            .as_ref()
            .and_then(|s| s.node_info.as_ref())
            .map(|i| i.kubelet_version.trim())
            .filter(|v| !v.is_empty());
        if let Some(v) = version {
            *kubelet_versions.entry(v.to_owned()).or_default() += 1;
        }
    }
    let version = kubelet_versions
        .keys()
        .min_by_key(|v| Version::find_in(v))
        .cloned();
    KubernetesInfo {
        version,
        source: KubernetesInfo::OBSERVED.to_owned(),
        node_image: node_image.map(str::to_owned),
        kubelet_versions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness_core::testing::one_node_scenario;

    const DIGEST: &str = "sha256:44e222ee2132dab25ff87301682f89eb82c7880ea3a1bf543bfe9708fd08d67d";

    #[test]
    fn the_form_is_kindest_node_with_a_full_version_and_an_optional_digest() {
        let pinned = NodeImage::parse(&format!("kindest/node:v1.34.11@{DIGEST}")).unwrap();
        assert_eq!(pinned.kubernetes(), Version::new(1, 34, 11));
        assert_eq!(pinned.digest(), Some(DIGEST));
        assert_eq!(pinned.warning(), None);
        assert_eq!(pinned.name_part(), "v1-34-11");
        assert_eq!(NodeImage::pinned(), pinned, "the pin is valid");
        let tagged = NodeImage::parse("kindest/node:v1.33.1").unwrap();
        assert_eq!(tagged.version_label(), "v1.33.1");
        let warning = tagged.warning().unwrap();
        assert!(
            warning.contains("no @sha256 digest") && warning.contains("release notes"),
            "{warning}"
        );
        for bad in [
            "nginx:1.27",
            "kindest/node",
            "kindest/node:latest",
            "kindest/node:1.33.1",
            "kindest/node:v1.33",
            "kindest/node:v1.33.1.2",
            "kindest/node:v1..1",
            "kindest/node:v1.33.1-rc.0",
            "docker.io/kindest/node:v1.33.1",
            "kindest/node:v1.33.1@sha256:abc",
            "kindest/node:v1.33.1@md5:44e222ee2132dab25ff87301682f89eb82c7880ea3a1bf543bfe9708fd08d67d",
            "kindest/node:v1.33.1@sha256:44E222EE2132DAB25FF87301682F89EB82C7880EA3A1BF543BFE9708FD08D67D",
        ] {
            let err = NodeImage::parse(bad).unwrap_err();
            assert_eq!(err, NodeImageError::Form(bad.into()), "{bad}");
            assert!(
                err.to_string()
                    .contains("kindest/node:vMAJOR.MINOR.PATCH@sha256:"),
                "{err}"
            );
        }
    }

    #[test]
    fn kubernetes_older_than_the_floor_is_refused_saying_why() {
        assert!(NodeImage::parse("kindest/node:v1.31.0").is_ok());
        let err = NodeImage::parse("kindest/node:v1.30.13").unwrap_err();
        assert_eq!(
            err,
            NodeImageError::TooOld {
                image: "kindest/node:v1.30.13".into(),
                version: Version::new(1, 30, 13)
            }
        );
        let text = err.to_string();
        assert!(
            text.contains("v1.30.13")
                && text.contains("v1.31.0")
                && text.contains("trafficDistribution"),
            "{text}"
        );
    }

    #[test]
    fn prefer_same_zone_needs_1_34() {
        let s = one_node_scenario(
            &[
                "replicas: 1",
                "serviceTime: { fixed: 5ms }",
                "routing: { trafficDistribution: PreferSameZone }",
            ],
            r#"load:
  duration: 1m
  generators: [{ name: g, zone: z, rate: 10 }]
"#,
        );
        let old = NodeImage::parse("kindest/node:v1.33.4").unwrap();
        let refused = refusals(&s, &old);
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert!(
            refused[0]
                .starts_with("service.trafficDistribution PreferSameZone: Kubernetes v1.34.0")
                && refused[0].contains("v1.33.4"),
            "{refused:?}"
        );
        assert!(refusals(&s, &NodeImage::pinned()).is_empty());
    }

    fn node(version: Option<&str>) -> Node {
        serde_json::from_value(serde_json::json!({
            "metadata": { "name": "n" },
            "status": version.map(|v| serde_json::json!({ "nodeInfo": {
                "kubeletVersion": v, "architecture": "amd64", "bootID": "", "containerRuntimeVersion": "",
                "kernelVersion": "", "kubeProxyVersion": "", "machineID": "", "operatingSystem": "linux",
                "osImage": "", "systemUUID": "" } }))
        }))
        .unwrap()
    }

    #[test]
    fn the_observed_version_is_the_lowest_kubelet_and_counts_each() {
        let nodes = [
            node(Some("v1.34.0")),
            node(Some("v1.33.1")),
            node(Some("v1.34.0")),
            node(None),
        ];
        let info = observed(&nodes, Some("kindest/node:v1.34.0"));
        assert_eq!(info.version.as_deref(), Some("v1.33.1"));
        assert_eq!(info.source, "nodes");
        assert_eq!(
            info.kubelet_versions,
            BTreeMap::from([("v1.33.1".into(), 1), ("v1.34.0".into(), 2)])
        );
        assert_eq!(info.node_image.as_deref(), Some("kindest/node:v1.34.0"));
        let none = observed(&[node(None)], None);
        assert_eq!((none.version, none.node_image), (None, None));
        // Ordered by version, not by text: v1.9 is older than v1.10.
        let info = observed(&[node(Some("v1.10.0")), node(Some("v1.9.3"))], None);
        assert_eq!(info.version.as_deref(), Some("v1.9.3"));
    }
}

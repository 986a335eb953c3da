//! What the kind target is pinned to, with where each value comes from.
//!
//! - The node image is the Kubernetes v1.34 image published with kind v0.33.0 (release notes of
//!   kubernetes-sigs/kind v0.33.0, "Images pre-built for this release"; that release's default,
//!   `pkg/apis/config/defaults/image.go` after kind PR #4248, is
//!   `kindest/node:v1.37.0@sha256:a1ed56cfb0e7b93589bdf97c8cd566405a265939e3620fc4f5de89adff580ae5`).
//!   v1.34 because the local target's control-plane models are ports of Kubernetes v1.34, so a
//!   kind run compares the real controllers with the very code the models were ported from.
//! - kind generates kubeadm `v1beta3` config for Kubernetes 1.23 to 1.35 and `v1beta4` from
//!   1.36.0 (kind v0.32.0 release notes; kind PR #4173, `pkg/cluster/internal/kubeadm/config.go`).
//!   With this image kind uses v1beta3, where `extraArgs`/`kubeletExtraArgs` are maps; the
//!   harness writes its patches without `apiVersion` and in that map form, which kind v0.32.0+
//!   also converts to v1beta4's `name`/`value` list when the image is 1.36 or newer
//!   (`pkg/internal/patch/kubeadm_merge.go`, `mergeExtraArgs`). So the config works with either.
//! - kind itself must be at least v0.33.0: node images are only guaranteed with the kind release
//!   they were built for, and images from v0.32.0 on need kind v0.32.0+ for `kind load`
//!   (kind v0.32.0 release notes).

/// The node image every kind node runs, pinned by digest.
pub const NODE_IMAGE: &str =
    "kindest/node:v1.34.11@sha256:44e222ee2132dab25ff87301682f89eb82c7880ea3a1bf543bfe9708fd08d67d";

/// The Kubernetes version of [`NODE_IMAGE`].
pub const KUBERNETES_VERSION: &str = "v1.34.11";

/// The kind release [`NODE_IMAGE`] was published with: the oldest kind the harness drives.
pub const MIN_KIND_VERSION: Version = Version::new(0, 33, 0);

/// The oldest Docker Engine (server) the harness drives: the one its image builds and container
/// tests run against in CI.
pub const MIN_DOCKER_ENGINE_VERSION: Version = Version::new(20, 10, 0);

/// kind's kubeadm config API for a Kubernetes version (kind `pkg/cluster/internal/kubeadm/config.go`,
/// `Config`): v1beta4 from 1.36.0, v1beta3 from 1.23.0, older APIs before.
pub fn kubeadm_api_for(kubernetes: Version) -> &'static str {
    if kubernetes >= Version::new(1, 36, 0) {
        "kubeadm.k8s.io/v1beta4"
    } else if kubernetes >= Version::new(1, 23, 0) {
        "kubeadm.k8s.io/v1beta3"
    } else if kubernetes >= Version::new(1, 15, 0) {
        "kubeadm.k8s.io/v1beta2"
    } else {
        "kubeadm.k8s.io/v1beta1"
    }
}

/// A `major.minor.patch` version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
}

impl Version {
    pub const fn new(major: u64, minor: u64, patch: u64) -> Self {
        Self {
            major,
            minor,
            patch,
        }
    }

    /// The first `[v]MAJOR.MINOR[.PATCH]` in `text` (`kind v0.33.0 go1.24 linux/amd64`,
    /// `20.10.24+dfsg1`, `28.2.2`); pre-release and build suffixes are ignored.
    pub fn find_in(text: &str) -> Option<Version> {
        let bytes = text.as_bytes();
        (0..bytes.len())
            .filter(|&i| bytes[i].is_ascii_digit() && (i == 0 || !bytes[i - 1].is_ascii_digit()))
            .filter(|&i| i == 0 || matches!(bytes[i - 1], b'v' | b' ' | b'\t' | b'\n' | b'"'))
            .find_map(|i| Self::parse_prefix(&text[i..]))
    }

    fn parse_prefix(text: &str) -> Option<Version> {
        let end = text
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(text.len());
        let mut parts = text[..end].split('.').filter(|p| !p.is_empty());
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        let patch = parts.next().map_or(Some(0), |p| p.parse().ok())?;
        Some(Version::new(major, minor, patch))
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_found_in_tool_output() {
        assert_eq!(
            Version::find_in("kind v0.33.0 go1.25.1 linux/amd64"),
            Some(Version::new(0, 33, 0))
        );
        assert_eq!(
            Version::find_in("kind v0.34.0-alpha+9b1a go1.25 linux/arm64"),
            Some(Version::new(0, 34, 0))
        );
        assert_eq!(
            Version::find_in("20.10.24+dfsg1"),
            Some(Version::new(20, 10, 24))
        );
        assert_eq!(Version::find_in("28.2"), Some(Version::new(28, 2, 0)));
        assert_eq!(Version::find_in("no version here"), None);
    }

    #[test]
    fn the_pinned_image_uses_kubeadm_v1beta3() {
        let k8s = Version::find_in(KUBERNETES_VERSION).unwrap();
        assert_eq!(kubeadm_api_for(k8s), "kubeadm.k8s.io/v1beta3");
        assert!(NODE_IMAGE.contains(KUBERNETES_VERSION));
        assert_eq!(
            kubeadm_api_for(Version::new(1, 36, 0)),
            "kubeadm.k8s.io/v1beta4"
        );
        assert_eq!(
            kubeadm_api_for(Version::new(1, 35, 9)),
            "kubeadm.k8s.io/v1beta3"
        );
    }
}

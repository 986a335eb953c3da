//! The first contact with a cluster the harness did not create (`--allow-existing-cluster`),
//! before anything is created there: the API server's version (`GET /version`) against the
//! kind target's floor and what the scenario needs of it, and — when the server cannot be
//! asked — which server (URL, kubeconfig context), what failed (connection refused, TLS, 401,
//! 403, a timeout) and what to do about it.

use harness_core::scenario::model::{Routing, Scenario, TrafficDistribution};

use crate::node_image::{MIN_KUBERNETES, PREFER_SAME_MIN_KUBERNETES};
use crate::pins::Version;

/// The API server as the kubeconfig names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    /// `https://127.0.0.1:6443`; empty when the client was given without its configuration.
    pub url: String,
    pub context: String,
}

impl std::fmt::Display for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.url.is_empty() {
            write!(f, "the API server of context `{}`", self.context)
        } else {
            write!(
                f,
                "the API server {} (context `{}`)",
                self.url, self.context
            )
        }
    }
}

/// Why the API server's version could not be learnt.
#[derive(Debug, thiserror::Error)]
pub enum PreflightError {
    /// The request failed: `what` happened, `todo` says what to do.
    #[error("{server}: {what}; {todo}")]
    Unanswered {
        server: Server,
        what: String,
        todo: String,
    },
    /// The server answered something that is not a version.
    #[error("{server}: `/version` answered `{answer}`, which names no Kubernetes version")]
    NoVersion { server: Server, answer: String },
}

/// The server's Kubernetes version (`GET /version`).
pub async fn server_version(
    client: &kube::Client,
    server: &Server,
) -> Result<Version, PreflightError> {
    let info = client
        .apiserver_version()
        .await
        .map_err(|e| unanswered(server, &e))?;
    Version::find_in(&info.git_version)
        .or_else(|| {
            let minor: String = info
                .minor
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            Version::find_in(&format!("{}.{minor}", info.major))
        })
        .ok_or_else(|| PreflightError::NoVersion {
            server: server.clone(),
            answer: info.git_version.clone(),
        })
}

/// What a failed request means for the user: what failed and what to do.
pub fn unanswered(server: &Server, error: &kube::Error) -> PreflightError {
    let (what, todo) = classify(error);
    PreflightError::Unanswered {
        server: server.clone(),
        what,
        todo,
    }
}

/// (what failed, what to do) for a kube-rs error.
pub fn classify(error: &kube::Error) -> (String, String) {
    if let kube::Error::Api(status) = error {
        return match status.code {
            401 => (
                format!("HTTP 401 unauthorized: {}", status.message),
                "the kubeconfig's credentials were refused: refresh them (an expired token or certificate?) or choose another --context".to_owned(),
            ),
            403 => (
                format!("HTTP 403 forbidden: {}", status.message),
                "these credentials lack a permission the run needs: docs/kind-target.md#rbac-for-a-shared-cluster lists every one, and `harness run ... --check-access` asks the server about each before a run".to_owned(),
            ),
            code => (
                format!("HTTP {code}: {}", status.message),
                "is the cluster healthy?".to_owned(),
            ),
        };
    }
    let chain = chain_text(error);
    let lower = chain.to_lowercase();
    let (what, todo) = if lower.contains("connection refused") {
        (
            "connection refused: nothing listens there",
            "is the cluster running (`kind get clusters`, `docker ps`), and is this the kubeconfig and context you meant (--kubeconfig, --context)?",
        )
    } else if lower.contains("certificate") || lower.contains("tls") || lower.contains("ssl") {
        (
            "TLS failed: the server's certificate is not one the kubeconfig's certificate-authority-data trusts",
            "the kubeconfig may belong to an older cluster of the same address: `kind export kubeconfig --name NAME` writes a fresh one",
        )
    } else if lower.contains("timed out") || lower.contains("timeout") || lower.contains("elapsed")
    {
        (
            "no answer in time",
            "is the address reachable from here (a VPN, a firewall, a paused container)?",
        )
    } else if lower.contains("dns") || lower.contains("resolve") || lower.contains("lookup") {
        (
            "the server's host name does not resolve",
            "check the kubeconfig's `server:` for this context",
        )
    } else {
        (
            "the request failed",
            "check the kubeconfig's `server:` for this context and that the cluster runs",
        )
    };
    (format!("{what} ({chain})"), todo.to_owned())
}

/// The error and its sources, joined: kube-rs' own message ("client error (Connect)") says
/// little without the cause under it.
fn chain_text(error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![error.to_string()];
    let mut source = error.source();
    while let Some(e) = source {
        let text = e.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = e.source();
    }
    parts.join(": ")
}

/// What `scenario` cannot have of a cluster running `version` (`whose`: "the cluster of
/// context `x`"), one sentence each: the kind target's floor, and `PreferSameZone` /
/// `PreferSameNode`, on by default from v1.34.
pub fn version_refusals(scenario: &Scenario, version: Version, whose: &str) -> Vec<String> {
    let mut out = Vec::new();
    if version < MIN_KUBERNETES {
        out.push(format!(
            "{whose} runs Kubernetes v{version}, older than v{MIN_KUBERNETES}, the oldest the kind target runs (the Ingress, EndpointSlice hints and probes it relies on); nothing was created there"
        ));
    }
    if let Routing::TrafficDistribution(
        d @ (TrafficDistribution::PreferSameZone | TrafficDistribution::PreferSameNode),
    ) = scenario.service.routing
        && version < PREFER_SAME_MIN_KUBERNETES
    {
        out.push(format!(
            "service.trafficDistribution {}: {whose} runs Kubernetes v{version}; it is on by default from v{PREFER_SAME_MIN_KUBERNETES} (v1.33 has it only behind the alpha feature gate PreferSameTrafficDistribution); nothing was created there",
            crate::manifests::traffic_distribution_value(d)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(routing: &str) -> Scenario {
        harness_core::testing::one_node_scenario(
            &["replicas: 1", "serviceTime: { fixed: 1ms }", routing],
            "load:\n  duration: 10s\n  generators: [{ name: g, zone: z, rate: 1 }]\n",
        )
    }

    #[test]
    fn the_floor_and_prefer_same_zone_are_checked_against_the_servers_version() {
        let plain = scenario("routing: { topologyMode: Auto }");
        let whose = "the cluster of context `staging`";
        assert!(version_refusals(&plain, Version::new(1, 31, 0), whose).is_empty());
        let old = version_refusals(&plain, Version::new(1, 30, 4), whose);
        assert_eq!(old.len(), 1);
        assert!(
            old[0].starts_with(
                "the cluster of context `staging` runs Kubernetes v1.30.4, older than v1.31.0"
            ),
            "{old:?}"
        );
        let same_zone = scenario("routing: { trafficDistribution: PreferSameZone }");
        let refused = version_refusals(&same_zone, Version::new(1, 33, 2), whose);
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert!(refused[0].starts_with("service.trafficDistribution PreferSameZone: the cluster of context `staging` runs Kubernetes v1.33.2"), "{refused:?}");
        assert!(version_refusals(&same_zone, Version::new(1, 34, 0), whose).is_empty());
    }
}

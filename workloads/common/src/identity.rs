//! The pod identity every response carries (`x-pod`, `x-node`, `x-zone`), read from the
//! environment the way a Downward API would provide it.

use http::{HeaderMap, HeaderValue};
use workload_contract::identity;

/// Header naming the pod that produced a response; the load generator attributes by it.
pub const POD_HEADER: &str = "x-pod";
/// Header naming the node the pod runs on.
pub const NODE_HEADER: &str = "x-node";
/// Header naming the zone of that node.
pub const ZONE_HEADER: &str = "x-zone";

/// Who is answering: pod, node and zone names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub pod: String,
    pub node: String,
    pub zone: String,
}

impl Identity {
    /// Reads `POD_NAME`, `NODE_NAME` and `ZONE`; a plain run (none set) is `local`/`local`/`local`.
    pub fn from_env() -> Self {
        Self::from_lookup(|key| std::env::var(key).ok())
    }

    /// Like [`Identity::from_env`] with an injectable lookup (tests).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let get = |key: &str| {
            lookup(key)
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| "local".to_string())
        };
        Self {
            pod: get(identity::POD_NAME),
            node: get(identity::NODE_NAME),
            zone: get(identity::ZONE),
        }
    }

    /// Pre-encoded header values, so the hot path only clones them.
    pub fn headers(&self) -> IdentityHeaders {
        let value = |s: &str| {
            HeaderValue::from_str(s).unwrap_or_else(|_| HeaderValue::from_static("invalid"))
        };
        IdentityHeaders {
            pod: value(&self.pod),
            node: value(&self.node),
            zone: value(&self.zone),
        }
    }
}

/// The three identity headers, ready to insert into responses.
#[derive(Debug, Clone)]
pub struct IdentityHeaders {
    pod: HeaderValue,
    node: HeaderValue,
    zone: HeaderValue,
}

impl IdentityHeaders {
    /// Sets `x-pod`, `x-node` and `x-zone` on `headers`.
    pub fn apply(&self, headers: &mut HeaderMap) {
        headers.insert(POD_HEADER, self.pod.clone());
        headers.insert(NODE_HEADER, self.node.clone());
        headers.insert(ZONE_HEADER, self.zone.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_to_local_when_unset_or_empty() {
        let id = Identity::from_lookup(|k| (k == "ZONE").then(String::new));
        assert_eq!(id.pod, "local");
        assert_eq!(id.zone, "local");
    }

    #[test]
    fn headers_carry_the_names() {
        let id = Identity::from_lookup(|k| Some(format!("{k}-v")));
        let mut map = HeaderMap::new();
        id.headers().apply(&mut map);
        assert_eq!(map[POD_HEADER], "POD_NAME-v");
        assert_eq!(map[NODE_HEADER], "NODE_NAME-v");
        assert_eq!(map[ZONE_HEADER], "ZONE-v");
    }
}

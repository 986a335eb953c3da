//! How a workload learns which pod it is: three environment variables, as a Downward API would
//! set them.

/// The pod's name.
pub const POD_NAME: &str = "POD_NAME";
/// The node's name.
pub const NODE_NAME: &str = "NODE_NAME";
/// The node's `topology.kubernetes.io/zone`.
pub const ZONE: &str = "ZONE";

/// The environment that gives a workload its identity.
pub fn env(pod: &str, node: &str, zone: &str) -> Vec<(String, String)> {
    vec![
        (POD_NAME.to_owned(), pod.to_owned()),
        (NODE_NAME.to_owned(), node.to_owned()),
        (ZONE.to_owned(), zone.to_owned()),
    ]
}

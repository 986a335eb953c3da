//! Header handling shared by the proxies (the sidecar, and the harness's load balancer).

use http::header::{self, HeaderMap, HeaderName};

/// The standard hop-by-hop headers, lowercase: never forwarded, whatever `Connection` says.
pub const HOP_BY_HOP: [&str; 8] = [
    "connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "upgrade",
    "keep-alive",
    "proxy-connection",
];

/// True when `name` (any case) is one of [`HOP_BY_HOP`]; for proxies that work on raw heads.
pub fn is_hop_by_hop(name: &str) -> bool {
    HOP_BY_HOP
        .iter()
        .any(|h| h.len() == name.len() && h.eq_ignore_ascii_case(name))
}

/// Removes the headers that describe one connection rather than the message (RFC 9110
/// §7.6.1): those named in `Connection`, and the standard hop-by-hop ones. `transfer-encoding`
/// is left to hyper, which frames each side's message by it.
pub fn strip_hop_by_hop(headers: &mut HeaderMap) {
    let named: Vec<HeaderName> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|name| HeaderName::from_bytes(name.trim().as_bytes()).ok())
        .collect();
    for name in named {
        headers.remove(name);
    }
    for name in HOP_BY_HOP {
        headers.remove(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    #[test]
    fn removes_hop_by_hop_and_connection_named_headers_only() {
        let mut h = HeaderMap::new();
        h.insert(
            header::CONNECTION,
            HeaderValue::from_static("keep-alive, x-trace"),
        );
        h.insert("keep-alive", HeaderValue::from_static("timeout=5"));
        h.insert("x-trace", HeaderValue::from_static("1"));
        h.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
        h.insert(
            header::TRANSFER_ENCODING,
            HeaderValue::from_static("chunked"),
        );
        h.insert("x-pod", HeaderValue::from_static("pod-1"));
        strip_hop_by_hop(&mut h);
        let left: Vec<&str> = h.keys().map(|k| k.as_str()).collect();
        assert_eq!(left, vec!["transfer-encoding", "x-pod"]);
    }
}

//! The line a workload prints first on stdout once its listeners are bound, so whoever
//! started it with port 0 learns the ports: `listening http=127.0.0.1:41234 admin=...`.

use std::collections::BTreeMap;
use std::net::SocketAddr;

/// The line for these (key, address) pairs, in order.
pub fn line(addrs: &[(&str, SocketAddr)]) -> String {
    let mut out = String::from("listening");
    for (key, addr) in addrs {
        out.push_str(&format!(" {key}={addr}"));
    }
    out
}

/// The addresses of a `listening` line by key; `None` when the line is not one.
pub fn parse(line: &str) -> Option<BTreeMap<String, SocketAddr>> {
    let rest = line.trim().strip_prefix("listening ")?;
    let mut out = BTreeMap::new();
    for pair in rest.split_whitespace() {
        let (key, value) = pair.split_once('=')?;
        out.insert(key.to_string(), value.parse().ok()?);
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip() {
        let http: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let admin: SocketAddr = "127.0.0.1:9090".parse().unwrap();
        let text = line(&[("http", http), ("admin", admin)]);
        assert_eq!(text, "listening http=127.0.0.1:8080 admin=127.0.0.1:9090");
        let addrs = parse(&text).unwrap();
        assert_eq!((addrs["http"], addrs["admin"]), (http, admin));
        assert!(parse("listening http=nope").is_none());
        assert!(parse("ready").is_none());
    }
}

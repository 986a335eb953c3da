//! One replica's HAProxy configuration as text: a frontend on the replica's listener, the
//! Service's backend with the rendered servers in order under the version's balance
//! algorithm, the runtime API's stats socket (`level admin`, what the controller's dynamic
//! updates use) and `hard-stop-after` so that a reload's old worker cannot linger. Empty
//! slots (v0.16) are rendered `disabled` on a placeholder address, as haproxy-ingress does.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use super::{Balance, ServerEntry, SlotPlan};

/// The backend's name in every rendered configuration.
pub const BACKEND: &str = "svc";
/// Where an empty slot points until the runtime API fills it.
pub const EMPTY_SLOT_ADDR: &str = "127.0.0.1:1";

/// A server line: its name, where it listens on this machine, and the endpoint it stands
/// for (`None`: an empty slot).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedServer {
    pub name: String,
    pub endpoint: Option<(ServerEntry, SocketAddr)>,
}

impl RenderedServer {
    /// v0.16's slot names: `srv001`, `srv002`, …
    pub fn slot_name(slot: usize) -> String {
        format!("srv{:03}", slot + 1)
    }
}

/// Servers named after their pods (`backend-server-naming: pod`), in render order.
pub fn named_servers(
    servers: &[ServerEntry],
    addr_of: impl Fn(&ServerEntry) -> Option<SocketAddr>,
) -> Vec<RenderedServer> {
    servers
        .iter()
        .filter_map(|s| {
            addr_of(s).map(|addr| RenderedServer {
                name: s.pod.clone(),
                endpoint: Some((s.clone(), addr)),
            })
        })
        .collect()
}

/// Slot servers (`srvNNN`) of a v0.16 plan; a slot whose pod has no address stays empty.
pub fn slot_servers(
    plan: &SlotPlan,
    addr_of: impl Fn(&ServerEntry) -> Option<SocketAddr>,
) -> Vec<RenderedServer> {
    plan.slots
        .iter()
        .enumerate()
        .map(|(i, slot)| RenderedServer {
            name: RenderedServer::slot_name(i),
            endpoint: slot
                .as_ref()
                .and_then(|s| addr_of(s).map(|addr| (s.clone(), addr))),
        })
        .collect()
}

/// What one replica's configuration says.
#[derive(Debug, Clone)]
pub struct ReplicaConfig<'a> {
    /// For the header comment: `ingress-0, haproxy-ingress v0.6, render 3`.
    pub title: String,
    pub listen: SocketAddr,
    pub stats_socket: &'a Path,
    pub balance: Balance,
    pub servers: &'a [RenderedServer],
    /// `timeout server` (the callers' request timeout).
    pub server_timeout: Duration,
}

/// The configuration file's text.
pub fn render_config(c: &ReplicaConfig<'_>) -> String {
    let mut out = String::new();
    let ms = |d: Duration| d.as_millis().max(1);
    let _ = writeln!(out, "# {}", c.title);
    let _ = writeln!(out, "global");
    let _ = writeln!(
        out,
        "    stats socket {} mode 600 level admin",
        c.stats_socket.display()
    );
    let _ = writeln!(out, "    hard-stop-after 10s");
    let _ = writeln!(out, "    nbthread 1");
    let _ = writeln!(out);
    let _ = writeln!(out, "defaults");
    let _ = writeln!(out, "    mode http");
    let _ = writeln!(out, "    timeout connect 2s");
    let _ = writeln!(out, "    timeout client 60s");
    let _ = writeln!(out, "    timeout server {}ms", ms(c.server_timeout));
    let _ = writeln!(out, "    timeout http-keep-alive 60s");
    let _ = writeln!(out);
    let _ = writeln!(out, "frontend http");
    let _ = writeln!(out, "    bind {}", c.listen);
    let _ = writeln!(out, "    default_backend {BACKEND}");
    let _ = writeln!(out);
    let _ = writeln!(out, "backend {BACKEND}");
    let _ = writeln!(out, "    balance {}", c.balance.haproxy_keyword());
    for s in c.servers {
        match &s.endpoint {
            Some((entry, addr)) => {
                let _ = writeln!(
                    out,
                    "    server {} {addr} # {} {}",
                    s.name,
                    entry.pod,
                    entry.key()
                );
            }
            None => {
                let _ = writeln!(out, "    server {} {EMPTY_SLOT_ADDR} disabled", s.name);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::plan_slots;
    use super::*;
    use std::net::Ipv4Addr;

    #[test]
    fn servers_are_listed_in_render_order_and_empty_slots_disabled() {
        let entries: Vec<ServerEntry> = (0..3)
            .map(|i| ServerEntry {
                pod: format!("pod-{i}"),
                ip: Ipv4Addr::new(10, 244, 0, 2 + i),
                port: 8080,
            })
            .collect();
        let addr = |e: &ServerEntry| {
            (e.pod != "pod-2")
                .then(|| SocketAddr::from(([127, 0, 0, 1], 4000 + u16::from(e.ip.octets()[3]))))
        };
        let named = named_servers(&entries, addr);
        assert_eq!(named.len(), 2, "pod-2 has no address yet");
        let socket = Path::new("/tmp/x.sock");
        let text = render_config(&ReplicaConfig {
            title: "t".into(),
            listen: "127.0.0.1:9000".parse().unwrap(),
            stats_socket: socket,
            balance: Balance::RoundRobin,
            servers: &named,
            server_timeout: Duration::from_secs(5),
        });
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| l.trim_start().starts_with("server "))
            .collect();
        assert_eq!(
            lines,
            [
                "    server pod-0 127.0.0.1:4002 # pod-0 10.244.0.2:8080",
                "    server pod-1 127.0.0.1:4003 # pod-1 10.244.0.3:8080"
            ]
        );
        assert!(text.contains("balance roundrobin"));
        assert!(text.contains("stats socket /tmp/x.sock mode 600 level admin"));

        let slots = slot_servers(&plan_slots(&entries, 4), addr);
        let text = render_config(&ReplicaConfig {
            balance: Balance::RandomTwo,
            servers: &slots,
            ..ReplicaConfig {
                title: "t".into(),
                listen: "127.0.0.1:9000".parse().unwrap(),
                stats_socket: socket,
                balance: Balance::RoundRobin,
                servers: &[],
                server_timeout: Duration::from_secs(5),
            }
        });
        assert!(text.contains("balance random(2)"));
        assert!(text.contains("    server srv003 127.0.0.1:1 disabled"));
        assert!(text.contains("    server srv004 127.0.0.1:1 disabled"));
        assert!(text.contains("    server srv001 127.0.0.1:4002 # pod-0"));
    }
}

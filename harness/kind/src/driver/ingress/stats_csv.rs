//! HAProxy's statistics in CSV (what `GET /;csv` on haproxy-ingress' `listen stats` serves):
//! the servers of one backend, in the order HAProxy holds them, which is the order the
//! controller rendered them into `haproxy.cfg` (runtime-API updates change a server in place).
//!
//! Format: HAProxy management guide, section 9.1 "CSV format" (the same in 2.6 and in 2.8, the
//! HAProxy v0.16.1 embeds): the first line is the header `# pxname,svname,...`, then one line
//! per proxy and server; `pxname` is the proxy (backend) name, `svname` the server name or
//! `FRONTEND`/`BACKEND` for the proxy's own aggregate lines, `status` the server's state (`UP`,
//! `DOWN`, `no check`, `MAINT`, `DRAIN`, ...), `addr` its `address:port` — filled only when
//! the stats page has `stats show-legends` (HAProxy `src/stats.c`: the `addr` field is set
//! under `flags & STAT_SHLGNDS`), which haproxy-ingress' template sets in `listen stats`
//! (rootfs/etc/templates/haproxy/haproxy.tmpl, section "Stats"). Columns are found by their
//! header name, not their position, so fields added by later HAProxy versions do not move them.
//!
//! Empty slots: haproxy-ingress v0.16 pre-allocates servers for dynamic scaling; an empty one
//! is rendered `disabled` at `127.0.0.1:1023` (pkg/haproxy/types/backend.go,
//! `AddEmptyEndpoint`), and the runtime API puts a freed slot back into maintenance at that
//! address (pkg/haproxy/dynupdate.go, `execDisableEndpoint`: `state maint`, `addr 127.0.0.1
//! port 1023`, `weight 0`), keeping the server's name. Such a slot is shown `MAINT` and is not
//! part of the list.

/// One server line of a backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatsServer {
    /// `svname`.
    pub name: String,
    /// `addr` (`ip:port`), when reported.
    pub addr: Option<String>,
    /// `status`.
    pub status: String,
}

pub use crate::manifests::ingress::EMPTY_SLOT_ADDR;

impl StatsServer {
    /// A server taking part in balancing: not in maintenance (a disabled or emptied slot) and
    /// not parked at the empty-slot address.
    pub fn is_listed(&self) -> bool {
        !self.status.starts_with("MAINT") && self.addr.as_deref() != Some(EMPTY_SLOT_ADDR)
    }

    /// The IP of `addr` (without the port; IPv6 brackets removed).
    pub fn ip(&self) -> Option<&str> {
        let addr = self.addr.as_deref()?;
        let (host, _port) = addr.rsplit_once(':')?;
        Some(host.trim_start_matches('[').trim_end_matches(']'))
    }
}

/// Why a stats CSV could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StatsCsvError {
    #[error("the stats CSV has no header line `# pxname,svname,...`")]
    NoHeader,
    #[error("the stats CSV header has no `{0}` column")]
    NoColumn(&'static str),
    #[error(
        "the stats CSV has no backend `{backend}` (is the Ingress rendered for this Service?); \
         its proxies: {}",
        if seen.is_empty() { "none".to_owned() } else { seen.join(", ") }
    )]
    NoBackend { backend: String, seen: Vec<String> },
}

/// Every server line of `backend`, in order (including empty slots; see
/// [`StatsServer::is_listed`]).
pub fn backend_servers(csv: &str, backend: &str) -> Result<Vec<StatsServer>, StatsCsvError> {
    let mut lines = csv.lines().filter(|l| !l.trim().is_empty());
    let header = lines
        .next()
        .and_then(|l| l.strip_prefix('#'))
        .ok_or(StatsCsvError::NoHeader)?;
    let columns: Vec<&str> = header.split(',').map(str::trim).collect();
    let column = |name: &'static str| {
        columns
            .iter()
            .position(|c| *c == name)
            .ok_or(StatsCsvError::NoColumn(name))
    };
    let (px, sv, status) = (column("pxname")?, column("svname")?, column("status")?);
    let addr = column("addr").ok();
    let mut servers = Vec::new();
    let mut seen_backend = false;
    let mut proxies: Vec<String> = Vec::new();
    for line in lines {
        let fields: Vec<&str> = line.split(',').collect();
        let field = |i: usize| fields.get(i).copied().unwrap_or("");
        if field(px) != backend {
            if !field(px).is_empty() && !proxies.iter().any(|p| p == field(px)) {
                proxies.push(field(px).to_owned());
            }
            continue;
        }
        seen_backend = true;
        let name = field(sv);
        if name == "BACKEND" || name == "FRONTEND" {
            continue;
        }
        servers.push(StatsServer {
            name: name.to_owned(),
            addr: addr.map(field).filter(|a| !a.is_empty()).map(str::to_owned),
            status: field(status).to_owned(),
        });
    }
    if seen_backend {
        Ok(servers)
    } else {
        Err(StatsCsvError::NoBackend {
            backend: backend.to_owned(),
            seen: proxies,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: &str = "# pxname,svname,qcur,status,weight,addr,\n\
        stats,FRONTEND,,OPEN,,,\n\
        ns_svc_8080,flagsvc-a,0,UP,1,10.244.1.5:8080,\n\
        ns_svc_8080,srv002,0,MAINT,1,127.0.0.1:1023,\n\
        ns_svc_8080,flagsvc-b,0,no check,1,10.244.2.7:8080,\n\
        ns_svc_8080,BACKEND,0,UP,2,,\n";

    #[test]
    fn the_servers_come_in_order_and_empty_slots_are_not_listed() {
        let servers = backend_servers(CSV, "ns_svc_8080").unwrap();
        let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["flagsvc-a", "srv002", "flagsvc-b"]);
        let listed: Vec<&str> = servers
            .iter()
            .filter(|s| s.is_listed())
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(listed, ["flagsvc-a", "flagsvc-b"]);
        assert_eq!(servers[2].ip(), Some("10.244.2.7"));
    }

    #[test]
    fn a_slot_freed_through_the_runtime_api_keeps_its_pod_name_and_is_not_listed() {
        // `execDisableEndpoint` leaves the server's name (here a pod's, with
        // `backend-server-naming: pod`) and moves it to maintenance at the placeholder.
        let csv = "# pxname,svname,status,addr,\n\
            ns_svc_8081,flagsvc-a,UP,10.244.1.5:8081,\n\
            ns_svc_8081,flagsvc-b,MAINT,127.0.0.1:1023,\n\
            ns_svc_8081,flagsvc-c,UP,10.244.2.9:8081,\n";
        let servers = backend_servers(csv, "ns_svc_8081").unwrap();
        let listed: Vec<&str> = servers
            .iter()
            .filter(|s| s.is_listed())
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(listed, ["flagsvc-a", "flagsvc-c"]);
        // Parked at the placeholder but not (yet) shown in maintenance: still not listed.
        let parked = StatsServer {
            name: "srv004".into(),
            addr: Some(EMPTY_SLOT_ADDR.into()),
            status: "no check".into(),
        };
        assert!(!parked.is_listed());
        // Without `stats show-legends` there is no address: only the status decides.
        let no_addr = StatsServer {
            name: "flagsvc-d".into(),
            addr: None,
            status: "UP".into(),
        };
        assert!(no_addr.is_listed());
        assert_eq!(no_addr.ip(), None);
    }

    #[test]
    fn bad_input_says_what_is_missing() {
        assert_eq!(
            backend_servers("pxname,svname\n", "b"),
            Err(StatsCsvError::NoHeader)
        );
        assert_eq!(
            backend_servers("# pxname,svname\n", "b"),
            Err(StatsCsvError::NoColumn("status"))
        );
        let missing = backend_servers(CSV, "other_svc_80").unwrap_err();
        assert_eq!(
            missing,
            StatsCsvError::NoBackend {
                backend: "other_svc_80".into(),
                seen: vec!["stats".into(), "ns_svc_8080".into()],
            }
        );
        assert!(
            missing
                .to_string()
                .ends_with("its proxies: stats, ns_svc_8080"),
            "{missing}"
        );
    }
}

//! The order of a backend's servers as each controller version renders it (see the module
//! above for the sources). Endpoints come in with their modelled pod IP; ties cannot happen
//! (one endpoint per pod IP).

use std::net::Ipv4Addr;

use rand::Rng;
use rand::seq::SliceRandom;

use super::{ControllerSettings, Ordering};

/// One ready endpoint of the Service as the controller sees it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ServerEntry {
    /// The pod behind the endpoint (`backend-server-naming: pod` names the server after it).
    pub pod: String,
    /// The pod's IP (modelled: the pod network the local target stands for).
    pub ip: Ipv4Addr,
    /// The target port.
    pub port: u16,
}

impl ServerEntry {
    /// `IP:port`, the key of the v0.6 template's map.
    pub fn key(&self) -> String {
        format!("{}:{}", self.ip, self.port)
    }
}

/// The servers in the order `settings` renders them. `rng` is used only by the orderings that
/// shuffle (a new permutation each call: each call is one render that reloads HAProxy).
pub fn render_order(
    settings: &ControllerSettings,
    endpoints: &[ServerEntry],
    rng: &mut impl Rng,
) -> Vec<ServerEntry> {
    let mut out = endpoints.to_vec();
    match settings.ordering() {
        Ordering::TemplateMapKeys => out.sort_by_key(ServerEntry::key),
        Ordering::ShuffledPerReload => out.shuffle(rng),
        // `LessEndpointAddress`: bytes.Compare on the IP *string*.
        Ordering::EndpointsObject => out.sort_by_key(|e| e.ip.to_string()),
        // haproxy-ingress `sortEndpoints("ip")` (pkg/haproxy/types/backend.go, the same in the
        // v0.11-era and v0.16-era copies): `sort.Slice` with `ep[i].IP < ep[j].IP`, Go's `<` on
        // the IP *string*, byte-wise. One endpoint per IP: no ties, so stability is moot.
        Ordering::ByIp => out.sort_by_key(|e| e.ip.to_string()),
        Ordering::ByName => out.sort_by(|a, b| a.pod.cmp(&b.pod)),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{ControllerVersion, SortEndpointsBy};
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::SmallRng;

    fn entry(pod: &str, last: u8) -> ServerEntry {
        ServerEntry {
            pod: pod.into(),
            ip: Ipv4Addr::new(10, 244, 1, last),
            port: 8080,
        }
    }

    /// Pods as the EndpointSlice lists them (creation order), IPs with one and two digits so
    /// that string and numeric order differ.
    fn endpoints() -> Vec<ServerEntry> {
        vec![
            entry("pod-0", 9),
            entry("pod-1", 10),
            entry("pod-2", 2),
            entry("pod-3", 30),
        ]
    }

    fn settings(version: ControllerVersion) -> ControllerSettings {
        ControllerSettings {
            version,
            sort_backends: false,
            sort_endpoints_by: None,
            slots_increment: 8,
            balance_algorithm: None,
        }
    }

    fn pods(list: &[ServerEntry]) -> Vec<&str> {
        list.iter().map(|e| e.pod.as_str()).collect()
    }

    #[test]
    fn v0_6_renders_the_template_maps_sorted_keys_whatever_the_go_code_shuffled() {
        let mut rng = SmallRng::seed_from_u64(1);
        let s = settings(ControllerVersion::V0_6);
        // "10.244.1.10:8080" < "10.244.1.2:8080" < "10.244.1.30:8080" < "10.244.1.9:8080".
        let first = render_order(&s, &endpoints(), &mut rng);
        assert_eq!(pods(&first), ["pod-1", "pod-2", "pod-3", "pod-0"]);
        // Every render, every replica: the same list (the Go-side shuffle never shows).
        let mut reversed = endpoints();
        reversed.reverse();
        for _ in 0..20 {
            assert_eq!(render_order(&s, &reversed, &mut rng), first);
        }
    }

    #[test]
    fn v0_7_shuffles_on_every_reload_unless_sort_backends() {
        let mut rng = SmallRng::seed_from_u64(7);
        let s = settings(ControllerVersion::V0_7);
        let firsts: std::collections::BTreeSet<String> = (0..40)
            .map(|_| render_order(&s, &endpoints(), &mut rng)[0].pod.clone())
            .collect();
        assert_eq!(
            firsts.len(),
            4,
            "each pod comes first in some render: {firsts:?}"
        );
        let sorted = ControllerSettings {
            sort_backends: true,
            ..s
        };
        let a = render_order(&sorted, &endpoints(), &mut rng);
        assert_eq!(pods(&a), ["pod-1", "pod-2", "pod-3", "pod-0"]);
        assert_eq!(render_order(&sorted, &endpoints(), &mut rng), a);
    }

    #[test]
    fn v0_8_keeps_the_endpoints_objects_order_which_kubernetes_sorts_by_ip_string() {
        let mut rng = SmallRng::seed_from_u64(2);
        let s = settings(ControllerVersion::V0_8);
        let list = render_order(&s, &endpoints(), &mut rng);
        assert_eq!(pods(&list), ["pod-1", "pod-2", "pod-3", "pod-0"]);
        let by_name = ControllerSettings {
            sort_backends: true,
            ..s
        };
        assert_eq!(
            pods(&render_order(&by_name, &endpoints(), &mut rng)),
            ["pod-0", "pod-1", "pod-2", "pod-3"]
        );
    }

    #[test]
    fn v0_11_sort_endpoints_by_each_value() {
        let mut rng = SmallRng::seed_from_u64(3);
        let with = |by| ControllerSettings {
            sort_endpoints_by: Some(by),
            ..settings(ControllerVersion::V0_11)
        };
        let order = |by, rng: &mut SmallRng| {
            pods(&render_order(&with(by), &endpoints(), rng))
                .into_iter()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            order(SortEndpointsBy::Endpoint, &mut rng),
            ["pod-1", "pod-2", "pod-3", "pod-0"]
        );
        // As strings, as Go's `<` on the IP field compares them: "…1.10" < "…1.2" < "…1.30"
        // < "…1.9" (numerically it would be .2 < .9 < .10 < .30).
        assert_eq!(
            order(SortEndpointsBy::Ip, &mut rng),
            ["pod-1", "pod-2", "pod-3", "pod-0"]
        );
        assert_eq!(
            order(SortEndpointsBy::Name, &mut rng),
            ["pod-0", "pod-1", "pod-2", "pod-3"]
        );
        let shuffled: std::collections::BTreeSet<Vec<String>> = (0..30)
            .map(|_| order(SortEndpointsBy::Random, &mut rng))
            .collect();
        assert!(
            shuffled.len() > 5,
            "random gives many orders: {}",
            shuffled.len()
        );
        // `--sort-endpoints-by` wins over `--sort-backends`.
        let both = ControllerSettings {
            sort_backends: true,
            ..with(SortEndpointsBy::Ip)
        };
        assert_eq!(
            pods(&render_order(&both, &endpoints(), &mut rng)),
            ["pod-1", "pod-2", "pod-3", "pod-0"]
        );
    }

    #[test]
    fn v0_16_balances_random_two_over_runtime_api_slots() {
        let s = settings(ControllerVersion::V0_16);
        assert_eq!(s.balance().haproxy_keyword(), "random(2)");
        assert!(s.dynamic_slots());
        assert_eq!(
            settings(ControllerVersion::V0_11)
                .balance()
                .haproxy_keyword(),
            "roundrobin"
        );
        assert!(!settings(ControllerVersion::V0_11).dynamic_slots());
        let mut rng = SmallRng::seed_from_u64(4);
        assert_eq!(
            pods(&render_order(&s, &endpoints(), &mut rng)),
            ["pod-1", "pod-2", "pod-3", "pod-0"]
        );
    }
}

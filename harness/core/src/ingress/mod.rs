//! The HAProxy ingress controller model (jcmoraisjr/haproxy-ingress): which servers a
//! replica's HAProxy configuration lists for the Service, in which order, under which balance
//! algorithm, and how an endpoint change reaches HAProxy (a reload, or the runtime API into
//! pre-allocated server slots), per controller version. Pure: the local target renders these
//! into real `haproxy` configurations and lets HAProxy do the balancing (a fresh process starts
//! round-robin at the first server of its list; that is the incident, and it is not modelled
//! here).
//!
//! Sources, per version (haproxy-ingress `CHANGELOG.md` and
//! `docs/content/en/docs/configuration/command-line.md`, sections `sort-backends` and
//! `sort-endpoints-by`):
//! - `v0.6`: the Go code shuffled the endpoints, but the template ranged over a map keyed by
//!   the endpoint's `IP:port`, and Go's `text/template` visits a map's keys in sorted order
//!   (`text/template` docs: "If the value is a map and the keys are of basic type with a
//!   defined order, the elements will be visited in sorted key order"): the rendered list is
//!   sorted by `IP:port` as a string (the Skyscanner write-up, docs/incidents.md §2).
//! - `v0.7`: "Fix sort-backends behavior" (PR #247): without `--sort-backends` the endpoints
//!   are shuffled on every reload; with it they are sorted.
//! - `v0.8`: the shuffle is gone: endpoints "stay in the same order found in the Kubernetes'
//!   endpoint objects" — which Kubernetes sorts by IP, byte-wise
//!   (`pkg/api/v1/endpoints/util.go`, `LessEndpointAddress` in `SortSubsets`).
//! - `v0.11`: `--sort-endpoints-by=endpoint|ip|name|random` (PR #678); `random` shuffles on
//!   every reload.
//! - `v0.16`: the default balance algorithm becomes `random(2)` (PR #1282); endpoint changes
//!   go through HAProxy's runtime API into pre-allocated server slots (`dynamic-scaling`,
//!   `backend-server-slots-increment`), and only a change that needs more slots reloads.
//!
//! The `balance-algorithm` configuration key (Backend scope, no "Since": every release line
//! has it; `docs/content/en/docs/configuration/keys.md`, section "Balance algorithm") takes
//! any HAProxy algorithm and overrides the version's default; the model renders the two
//! defaults, `roundrobin` and `random(2)`.

pub mod config;
mod order;
mod pod_network;
mod slots;

pub use order::{ServerEntry, render_order};
pub use pod_network::PodNetwork;
pub use slots::{SlotChange, SlotPlan, SlotUpdate, plan_slots, update_slots};

use std::fmt;

/// A haproxy-ingress release line whose endpoint handling differs from the one before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ControllerVersion {
    V0_6,
    V0_7,
    V0_8,
    V0_11,
    V0_16,
}

impl ControllerVersion {
    /// The name used in scenario files (`v0.6`).
    pub fn as_str(self) -> &'static str {
        match self {
            ControllerVersion::V0_6 => "v0.6",
            ControllerVersion::V0_7 => "v0.7",
            ControllerVersion::V0_8 => "v0.8",
            ControllerVersion::V0_11 => "v0.11",
            ControllerVersion::V0_16 => "v0.16",
        }
    }
}

impl ControllerVersion {
    /// The `balance-algorithm` default: `random(2)` from v0.16 (PR #1282), `roundrobin`
    /// before.
    pub fn default_balance(self) -> Balance {
        match self {
            ControllerVersion::V0_16 => Balance::RandomTwo,
            _ => Balance::RoundRobin,
        }
    }
}

impl fmt::Display for ControllerVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `--sort-endpoints-by` (v0.11 and later).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SortEndpointsBy {
    /// The order of the Kubernetes Endpoints object (the default; `ep` is an alias).
    Endpoint,
    /// By IP and port of the destination.
    Ip,
    /// By server name (here: `backend-server-naming: pod`, the pod's name).
    Name,
    /// Shuffled every time HAProxy is reloaded.
    Random,
}

impl SortEndpointsBy {
    pub fn as_str(self) -> &'static str {
        match self {
            SortEndpointsBy::Endpoint => "endpoint",
            SortEndpointsBy::Ip => "ip",
            SortEndpointsBy::Name => "name",
            SortEndpointsBy::Random => "random",
        }
    }
}

/// HAProxy's `balance` for the Service's backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Balance {
    /// `balance roundrobin`, the default up to v0.15.
    RoundRobin,
    /// `balance random(2)`: power of two random choices (the default from v0.16, PR #1282).
    RandomTwo,
}

impl Balance {
    /// The `balance` line's argument.
    pub fn haproxy_keyword(self) -> &'static str {
        match self {
            Balance::RoundRobin => "roundrobin",
            Balance::RandomTwo => "random(2)",
        }
    }
}

/// The controller's settings that decide the rendered backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControllerSettings {
    pub version: ControllerVersion,
    /// `--sort-backends` (v0.7 and later; under v0.11+ `--sort-endpoints-by` takes
    /// precedence).
    pub sort_backends: bool,
    /// `--sort-endpoints-by` (v0.11 and later); `None`: not given.
    pub sort_endpoints_by: Option<SortEndpointsBy>,
    /// `backend-server-slots-increment` (v0.16 dynamic updates): servers are allocated in
    /// multiples of this.
    pub slots_increment: u32,
    /// The `balance-algorithm` configuration key; `None`: not given, the version's default.
    pub balance_algorithm: Option<Balance>,
}

impl ControllerSettings {
    /// The balance algorithm the backend is rendered with: `balance-algorithm` when given,
    /// else the version's default.
    pub fn balance(&self) -> Balance {
        self.balance_algorithm
            .unwrap_or_else(|| self.version.default_balance())
    }

    /// Whether endpoint changes go through the runtime API into server slots (v0.16).
    pub fn dynamic_slots(&self) -> bool {
        self.version == ControllerVersion::V0_16
    }

    /// How the rendered list is ordered.
    pub fn ordering(&self) -> Ordering {
        use ControllerVersion::*;
        match self.version {
            V0_6 => Ordering::TemplateMapKeys,
            V0_7 if self.sort_backends => Ordering::TemplateMapKeys,
            V0_7 => Ordering::ShuffledPerReload,
            V0_8 if self.sort_backends => Ordering::ByName,
            V0_8 => Ordering::EndpointsObject,
            V0_11 | V0_16 => match (self.sort_endpoints_by, self.sort_backends) {
                (Some(SortEndpointsBy::Endpoint), _) | (None, false) => Ordering::EndpointsObject,
                (Some(SortEndpointsBy::Ip), _) => Ordering::ByIp,
                (Some(SortEndpointsBy::Name), _) | (None, true) => Ordering::ByName,
                (Some(SortEndpointsBy::Random), _) => Ordering::ShuffledPerReload,
            },
        }
    }
}

/// The order of the rendered server list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ordering {
    /// `text/template` ranging over a map keyed by `IP:port`: sorted as strings (v0.6).
    TemplateMapKeys,
    /// A new random permutation on every render that reloads HAProxy.
    ShuffledPerReload,
    /// The Endpoints object's order: Kubernetes sorts addresses by IP, byte-wise.
    EndpointsObject,
    /// By IP as a string, byte-wise (`--sort-endpoints-by=ip`: Go's `<` on the endpoint's IP
    /// string in haproxy-ingress' `sortEndpoints`); `10.244.1.10` comes before `10.244.1.9`.
    ByIp,
    /// By server name.
    ByName,
}

impl Ordering {
    /// The name `summary.json` records (`byIp`).
    pub fn as_str(self) -> &'static str {
        match self {
            Ordering::TemplateMapKeys => "templateMapKeys",
            Ordering::ShuffledPerReload => "shuffledPerReload",
            Ordering::EndpointsObject => "endpointsObject",
            Ordering::ByIp => "byIp",
            Ordering::ByName => "byName",
        }
    }

    /// Whether a render with unchanged endpoints can still change the order.
    pub fn shuffles(self) -> bool {
        self == Ordering::ShuffledPerReload
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(
        version: ControllerVersion,
        balance_algorithm: Option<Balance>,
    ) -> ControllerSettings {
        ControllerSettings {
            version,
            sort_backends: false,
            sort_endpoints_by: None,
            slots_increment: 8,
            balance_algorithm,
        }
    }

    #[test]
    fn balance_is_the_versions_default_unless_balance_algorithm_is_given() {
        use ControllerVersion::*;
        for version in [V0_6, V0_7, V0_8, V0_11] {
            assert_eq!(
                settings(version, None).balance(),
                Balance::RoundRobin,
                "{version}"
            );
            assert_eq!(
                settings(version, Some(Balance::RandomTwo)).balance(),
                Balance::RandomTwo,
                "{version}"
            );
        }
        assert_eq!(settings(V0_16, None).balance(), Balance::RandomTwo);
        let roundrobin = settings(V0_16, Some(Balance::RoundRobin));
        assert_eq!(roundrobin.balance(), Balance::RoundRobin);
        assert_eq!(roundrobin.balance().haproxy_keyword(), "roundrobin");
        // The override changes the algorithm only: v0.16 keeps its runtime-API slots.
        assert!(roundrobin.dynamic_slots());
        assert_eq!(roundrobin.ordering(), settings(V0_16, None).ordering());
    }
}

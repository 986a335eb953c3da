//! `zoneNetwork` on kind, as `tc` commands in the kind node containers: pure (the commands and
//! the bookkeeping of what is in place); [`crate::driver`] runs them with `docker exec NODE tc
//! ...` ([`crate::lifecycle::tc`]). kind nodes are privileged containers whose `eth0` is their
//! interface on the kind Docker network: every packet from a node, or from a pod on it, to
//! another node or a pod there leaves through it (kindnet routes each node's pod CIDR via that
//! node's address), with the destination pod's own address (kube-proxy has already translated a
//! ClusterIP before routing). So a fault between zones A and B is, in every node container of
//! zone A, a netem qdisc for the packets whose destination is a node or pod address of zone B,
//! and the same in zone B's nodes for A's addresses: symmetric, each way delayed once, a round
//! trip twice.
//!
//! The layout in a node (`tc` from iproute2, which kind's node images carry: kind's
//! `images/base/Dockerfile` installs `iproute2` in its "Installing Packages" step,
//! kubernetes-sigs/kind commit a7c62c4):
//!
//! ```text
//! tc qdisc add dev eth0 root handle 1: prio bands <3 + zones> priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1
//! tc qdisc add dev eth0 parent 1:<band> handle <band>0: netem limit 10000 delay 20ms 2ms loss 1%
//! tc filter add dev eth0 parent 1: protocol ip prio <band> u32 match ip dst <address>/32 flowid 1:<band>
//! tc filter add dev eth0 parent 1: protocol ip prio <band> u32 match ip dst <pod CIDR> flowid 1:<band>
//! ```
//!
//! - The root `prio` qdisc keeps bands 1–3 and Linux's default priomap, so unmatched packets
//!   are queued as before, in order; band `4 + i` (hex in class ids: `1:4` … `1:10`) is the
//!   scenario's zone `i` (file order), the same band in every node: a node's packets towards
//!   zone `i` go there. `prio` has at most 16 bands, hence at most 13 zones.
//! - Each band with a fault holds a netem qdisc (handle `<band>0:`): `delay D J` (J uniform
//!   either side, netem's default distribution) and `loss P%`, or `loss 100%` for a partition
//!   (SYNs are dropped: connections time out, they are not refused). `limit 10000` packets
//!   (netem's default, 1000, would drop at 50 000 packets a second through a 20 ms delay).
//! - The filters of a band share its priority, so `tc filter del dev eth0 parent 1: protocol ip
//!   prio <band>` removes them all.
//! - `clear` removes the band's filters and netem qdisc, or, when the node has no other fault,
//!   the root qdisc (`tc qdisc del dev eth0 root`), which puts the interface back as it was.
//!   Teardown does the latter in every node where the root may still be in place, tolerating
//!   the errors that say there is none ([`already_clean`]).

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;
use std::time::Duration;

use harness_core::scenario::model::{Link, ZoneFault, ZoneNetworkChange};

/// The kind node container's interface on the kind Docker network.
pub const DEVICE: &str = "eth0";
/// Packets a netem qdisc may hold (those waiting out their delay).
pub const NETEM_LIMIT: u32 = 10_000;
/// Linux's default priomap (`sch_prio.c`, `prio2band`): TOS priorities to bands 1–3.
pub const PRIOMAP: [u8; 16] = [1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1];
/// `prio`'s most bands (`TCQ_PRIO_BANDS`).
pub const MAX_BANDS: usize = 16;
/// The most zones the layout has a band for (3 bands are the default's).
pub const MAX_ZONES: usize = MAX_BANDS - 3;

/// One `tc` command line's arguments (after `tc`).
pub type TcArgs = Vec<String>;

fn args(words: &[&str]) -> TcArgs {
    words.iter().map(|w| (*w).to_owned()).collect()
}

/// Which band each zone's destinations use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    zones: Vec<String>,
}

impl Layout {
    /// The layout for the scenario's `zones` (file order); `None` beyond [`MAX_ZONES`].
    pub fn new(zones: &[String]) -> Option<Layout> {
        (zones.len() <= MAX_ZONES).then(|| Layout {
            zones: zones.to_vec(),
        })
    }

    /// Bands of the root qdisc: the default three and one per zone.
    pub fn bands(&self) -> usize {
        3 + self.zones.len()
    }

    /// The band of packets towards `zone` (1-based, as `tc` numbers classes).
    pub fn band(&self, zone: &str) -> Option<u8> {
        let i = self.zones.iter().position(|z| z == zone)?;
        u8::try_from(4 + i).ok()
    }

    pub fn zones(&self) -> &[String] {
        &self.zones
    }

    /// `qdisc add dev eth0 root handle 1: prio bands N priomap ...`.
    pub fn add_root(&self) -> TcArgs {
        let mut out = args(&[
            "qdisc", "add", "dev", DEVICE, "root", "handle", "1:", "prio",
        ]);
        out.extend(["bands".to_owned(), self.bands().to_string()]);
        out.push("priomap".to_owned());
        out.extend(PRIOMAP.iter().map(u8::to_string));
        out
    }
}

/// `1:<band>` (hex, as `tc` reads class ids).
fn class(band: u8) -> String {
    format!("1:{band:x}")
}

/// `<band>0:` (hex): the band's netem qdisc.
fn netem_handle(band: u8) -> String {
    format!("{band:x}0:")
}

/// A duration as `tc` reads it: `20ms`, or `1500us` when not whole milliseconds.
pub fn tc_time(d: Duration) -> String {
    if d.as_micros().is_multiple_of(1000) {
        format!("{}ms", d.as_millis())
    } else {
        format!("{}us", d.as_micros())
    }
}

/// Parts per million as a percentage `tc` reads: 5000 → `0.5%`, 10000 → `1%`.
pub fn percent(ppm: u32) -> String {
    let (whole, frac) = (ppm / 10_000, ppm % 10_000);
    if frac == 0 {
        format!("{whole}%")
    } else {
        let digits = format!("{frac:04}");
        format!("{whole}.{}%", digits.trim_end_matches('0'))
    }
}

/// `qdisc add dev eth0 parent 1:<band> handle <band>0: netem limit 10000 ...` for `fault`
/// (`None` for `Clear`, which adds nothing).
pub fn add_netem(band: u8, fault: ZoneFault) -> Option<TcArgs> {
    let mut out = args(&["qdisc", "add", "dev", DEVICE, "parent"]);
    out.extend([class(band), "handle".into(), netem_handle(band)]);
    out.extend(["netem".into(), "limit".into(), NETEM_LIMIT.to_string()]);
    match fault {
        ZoneFault::Degrade {
            delay,
            jitter,
            loss_ppm,
        } => {
            if !delay.is_zero() {
                out.extend(["delay".into(), tc_time(delay)]);
                if !jitter.is_zero() {
                    out.push(tc_time(jitter));
                }
            }
            if loss_ppm > 0 {
                out.extend(["loss".into(), percent(loss_ppm)]);
            }
        }
        ZoneFault::Partition => out.extend(["loss".into(), "100%".into()]),
        ZoneFault::Clear => return None,
    }
    Some(out)
}

/// `filter add dev eth0 parent 1: protocol ip prio <band> u32 match ip dst <range> flowid
/// 1:<band>`.
pub fn add_filter(band: u8, range: &str) -> TcArgs {
    let mut out = args(&[
        "filter", "add", "dev", DEVICE, "parent", "1:", "protocol", "ip",
    ]);
    out.extend(["prio".into(), band.to_string(), "u32".into()]);
    out.extend(["match".into(), "ip".into(), "dst".into(), range.to_owned()]);
    out.extend(["flowid".into(), class(band)]);
    out
}

/// `filter del dev eth0 parent 1: protocol ip prio <band>`: every filter of the band.
pub fn del_filters(band: u8) -> TcArgs {
    let mut out = args(&[
        "filter", "del", "dev", DEVICE, "parent", "1:", "protocol", "ip",
    ]);
    out.extend(["prio".into(), band.to_string()]);
    out
}

/// `qdisc del dev eth0 parent 1:<band> handle <band>0:`: the band's netem qdisc.
pub fn del_netem(band: u8) -> TcArgs {
    let mut out = args(&["qdisc", "del", "dev", DEVICE, "parent"]);
    out.extend([class(band), "handle".into(), netem_handle(band)]);
    out
}

/// `qdisc del dev eth0 root`: the interface as it was.
pub fn del_root() -> TcArgs {
    args(&["qdisc", "del", "dev", DEVICE, "root"])
}

/// Whether a failed `tc qdisc del dev eth0 root` (or its `docker exec`) says there is nothing
/// to remove: no root qdisc of ours (iproute2 with the kernel's extended ack: "Cannot delete
/// qdisc with handle of zero", older: "RTNETLINK answers: No such file or directory"), or no
/// running container to remove it from.
pub fn already_clean(stderr: &str) -> bool {
    [
        "Cannot delete qdisc with handle of zero",
        "No such file or directory",
        "No such container",
        "is not running",
    ]
    .iter()
    .any(|m| stderr.contains(m))
}

/// A node container that takes part in the faults: its zone and its addresses (its own as a
/// `/32`, then its pod CIDRs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub node: String,
    pub zone: String,
    pub ranges: Vec<String>,
}

impl Member {
    /// `node` in `zone` at `addresses` with pod CIDRs `pod_cidrs` (IPv4 ones only: the
    /// filters match `protocol ip`).
    pub fn new(node: &str, zone: &str, addresses: &[Ipv4Addr], pod_cidrs: &[String]) -> Member {
        let ranges = addresses
            .iter()
            .map(|a| format!("{a}/32"))
            .chain(pod_cidrs.iter().filter(|c| is_ipv4_cidr(c)).cloned())
            .collect();
        Member {
            node: node.to_owned(),
            zone: zone.to_owned(),
            ranges,
        }
    }
}

/// `a.b.c.d/n` with `n` ≤ 32.
pub fn is_ipv4_cidr(text: &str) -> bool {
    let Some((addr, bits)) = text.split_once('/') else {
        return false;
    };
    addr.parse::<Ipv4Addr>().is_ok() && bits.parse::<u8>().is_ok_and(|b| b <= 32)
}

/// `docker inspect`'s `--format` for [`parse_addresses`]: the name, then each network's IPv4
/// address.
pub const INSPECT_FORMAT: &str =
    "{{.Name}}{{range .NetworkSettings.Networks}} {{.IPAddress}}{{end}}";

/// Container name → IPv4 addresses, from `docker inspect --format INSPECT_FORMAT ...` (one
/// line a container, its name with Docker's leading `/`).
pub fn parse_addresses(stdout: &str) -> BTreeMap<String, Vec<Ipv4Addr>> {
    stdout
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let name = words.next()?.trim_start_matches('/').to_owned();
            let addresses = words.filter_map(|w| w.parse().ok()).collect();
            Some((name, addresses))
        })
        .collect()
}

/// The `tc` commands for one node container, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeCommands {
    pub node: String,
    pub commands: Vec<TcArgs>,
}

/// What is in place in the nodes, so that `clear` and teardown undo exactly that.
#[derive(Debug, Clone)]
pub struct ZoneNet {
    layout: Layout,
    /// Nodes whose root qdisc may be the harness's (teardown deletes it).
    rooted: BTreeSet<String>,
    /// Node → the bands with a fault in it.
    active: BTreeMap<String, BTreeSet<u8>>,
    /// Link → the (node, band) pairs its fault set.
    links: BTreeMap<Link, Vec<(String, u8)>>,
}

impl ZoneNet {
    pub fn new(layout: Layout) -> ZoneNet {
        ZoneNet {
            layout,
            rooted: BTreeSet::new(),
            active: BTreeMap::new(),
            links: BTreeMap::new(),
        }
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The commands that carry out `change` among `members` (the nodes taking part now),
    /// node by node in name order, and the bookkeeping of it. A side with no member, or whose
    /// other side has no address, gets nothing.
    pub fn apply(&mut self, change: &ZoneNetworkChange, members: &[Member]) -> Vec<NodeCommands> {
        let mut out: BTreeMap<String, Vec<TcArgs>> = BTreeMap::new();
        for l in change.links(self.layout.zones()) {
            if change.fault == ZoneFault::Clear {
                for (node, band) in self.links.remove(&l).unwrap_or_default() {
                    let commands = out.entry(node.clone()).or_default();
                    let bands = self.active.entry(node.clone()).or_default();
                    bands.remove(&band);
                    if bands.is_empty() {
                        self.active.remove(&node);
                        self.rooted.remove(&node);
                        commands.push(del_root());
                    } else {
                        commands.push(del_filters(band));
                        commands.push(del_netem(band));
                    }
                }
                continue;
            }
            let mut set = Vec::new();
            for (side, other) in [(&l.0, &l.1), (&l.1, &l.0)] {
                let Some(band) = self.layout.band(other) else {
                    continue;
                };
                let ranges: Vec<&String> = members
                    .iter()
                    .filter(|m| m.zone == *other)
                    .flat_map(|m| &m.ranges)
                    .collect();
                if ranges.is_empty() {
                    continue;
                }
                for member in members.iter().filter(|m| m.zone == *side) {
                    let node = &member.node;
                    let commands = out.entry(node.clone()).or_default();
                    if self.rooted.insert(node.clone()) {
                        commands.push(self.layout.add_root());
                    }
                    commands.extend(add_netem(band, change.fault));
                    commands.extend(ranges.iter().map(|r| add_filter(band, r)));
                    self.active.entry(node.clone()).or_default().insert(band);
                    set.push((node.clone(), band));
                }
            }
            self.links.insert(l, set);
        }
        out.into_iter()
            .map(|(node, commands)| NodeCommands { node, commands })
            .collect()
    }

    /// A node whose commands failed part-way: its root qdisc may be in place whatever the
    /// bookkeeping says, so teardown removes it.
    pub fn failed(&mut self, node: &str) {
        self.rooted.insert(node.to_owned());
    }

    /// The nodes whose root qdisc teardown removes ([`del_root`] in each).
    pub fn rooted(&self) -> impl Iterator<Item = &String> {
        self.rooted.iter()
    }

    /// `node`'s root qdisc was removed (or found absent).
    pub fn cleaned(&mut self, node: &str) {
        self.rooted.remove(node);
        self.active.remove(node);
        self.links
            .values_mut()
            .for_each(|set| set.retain(|(n, _)| n != node));
    }

    /// Whether any fault is in place.
    pub fn any(&self) -> bool {
        !self.rooted.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness_core::scenario::model::ZoneScope;

    fn zones(names: &[&str]) -> Vec<String> {
        names.iter().map(|z| (*z).to_owned()).collect()
    }

    fn line(args: &TcArgs) -> String {
        format!("tc {}", args.join(" "))
    }

    fn lines(commands: &[NodeCommands]) -> Vec<(String, Vec<String>)> {
        commands
            .iter()
            .map(|c| (c.node.clone(), c.commands.iter().map(line).collect()))
            .collect()
    }

    fn change(from: &str, to: Option<&str>, fault: ZoneFault) -> ZoneNetworkChange {
        ZoneNetworkChange {
            from: from.into(),
            to: to.map_or(ZoneScope::All, |z| ZoneScope::Zone(z.into())),
            fault,
        }
    }

    fn members() -> Vec<Member> {
        let ip = |s: &str| s.parse::<Ipv4Addr>().unwrap();
        vec![
            Member::new(
                "k-worker",
                "a",
                &[ip("172.18.0.3")],
                &["10.244.1.0/24".into()],
            ),
            Member::new(
                "k-worker2",
                "b",
                &[ip("172.18.0.4")],
                &["10.244.2.0/24".into()],
            ),
            Member::new(
                "k-worker3",
                "c",
                &[ip("172.18.0.5")],
                &["10.244.3.0/24".into(), "fd00:10:244:3::/64".into()],
            ),
        ]
    }

    #[test]
    fn faults_are_written_in_both_zones_and_cleared_band_by_band() {
        let mut net = ZoneNet::new(Layout::new(&zones(&["a", "b", "c"])).unwrap());
        let slow = ZoneFault::Degrade {
            delay: Duration::from_millis(20),
            jitter: Duration::from_millis(2),
            loss_ppm: 10_000,
        };
        let root = "tc qdisc add dev eth0 root handle 1: prio bands 6 priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1";
        assert_eq!(
            lines(&net.apply(&change("a", None, slow), &members())),
            [
                (
                    "k-worker".to_owned(),
                    vec![
                        root.to_owned(),
                        "tc qdisc add dev eth0 parent 1:5 handle 50: netem limit 10000 delay 20ms 2ms loss 1%".into(),
                        "tc filter add dev eth0 parent 1: protocol ip prio 5 u32 match ip dst 172.18.0.4/32 flowid 1:5".into(),
                        "tc filter add dev eth0 parent 1: protocol ip prio 5 u32 match ip dst 10.244.2.0/24 flowid 1:5".into(),
                        "tc qdisc add dev eth0 parent 1:6 handle 60: netem limit 10000 delay 20ms 2ms loss 1%".into(),
                        // The IPv6 pod CIDR is left out: the filters match IPv4.
                        "tc filter add dev eth0 parent 1: protocol ip prio 6 u32 match ip dst 172.18.0.5/32 flowid 1:6".into(),
                        "tc filter add dev eth0 parent 1: protocol ip prio 6 u32 match ip dst 10.244.3.0/24 flowid 1:6".into(),
                    ]
                ),
                (
                    "k-worker2".to_owned(),
                    vec![
                        root.to_owned(),
                        "tc qdisc add dev eth0 parent 1:4 handle 40: netem limit 10000 delay 20ms 2ms loss 1%".into(),
                        "tc filter add dev eth0 parent 1: protocol ip prio 4 u32 match ip dst 172.18.0.3/32 flowid 1:4".into(),
                        "tc filter add dev eth0 parent 1: protocol ip prio 4 u32 match ip dst 10.244.1.0/24 flowid 1:4".into(),
                    ]
                ),
                (
                    "k-worker3".to_owned(),
                    vec![
                        root.to_owned(),
                        "tc qdisc add dev eth0 parent 1:4 handle 40: netem limit 10000 delay 20ms 2ms loss 1%".into(),
                        "tc filter add dev eth0 parent 1: protocol ip prio 4 u32 match ip dst 172.18.0.3/32 flowid 1:4".into(),
                        "tc filter add dev eth0 parent 1: protocol ip prio 4 u32 match ip dst 10.244.1.0/24 flowid 1:4".into(),
                    ]
                ),
            ]
        );
        // Clearing a–b: k-worker keeps its fault towards c, k-worker2 has none left.
        assert_eq!(
            lines(&net.apply(&change("b", Some("a"), ZoneFault::Clear), &members())),
            [
                (
                    "k-worker".to_owned(),
                    vec![
                        "tc filter del dev eth0 parent 1: protocol ip prio 5".to_owned(),
                        "tc qdisc del dev eth0 parent 1:5 handle 50:".into(),
                    ]
                ),
                (
                    "k-worker2".to_owned(),
                    vec!["tc qdisc del dev eth0 root".to_owned()]
                ),
            ]
        );
        // A partition of b and c: a new band in k-worker3, whose root is in place; k-worker2's
        // root is added again.
        assert_eq!(
            lines(&net.apply(
                &change("c", Some("b"), ZoneFault::Partition),
                &members()
            )),
            [
                (
                    "k-worker2".to_owned(),
                    vec![
                        root.to_owned(),
                        "tc qdisc add dev eth0 parent 1:6 handle 60: netem limit 10000 loss 100%".into(),
                        "tc filter add dev eth0 parent 1: protocol ip prio 6 u32 match ip dst 172.18.0.5/32 flowid 1:6".into(),
                        "tc filter add dev eth0 parent 1: protocol ip prio 6 u32 match ip dst 10.244.3.0/24 flowid 1:6".into(),
                    ]
                ),
                (
                    "k-worker3".to_owned(),
                    vec![
                        "tc qdisc add dev eth0 parent 1:5 handle 50: netem limit 10000 loss 100%".into(),
                        "tc filter add dev eth0 parent 1: protocol ip prio 5 u32 match ip dst 172.18.0.4/32 flowid 1:5".into(),
                        "tc filter add dev eth0 parent 1: protocol ip prio 5 u32 match ip dst 10.244.2.0/24 flowid 1:5".into(),
                    ]
                ),
            ]
        );
        let rooted: Vec<&String> = net.rooted().collect();
        assert_eq!(rooted, ["k-worker", "k-worker2", "k-worker3"]);
        for node in ["k-worker", "k-worker2", "k-worker3"] {
            net.cleaned(node);
        }
        assert!(!net.any());
        // Nothing active any more: a clear finds nothing to undo.
        assert!(
            net.apply(&change("a", None, ZoneFault::Clear), &members())
                .is_empty()
        );
    }

    #[test]
    fn a_side_without_addresses_gets_nothing_and_failures_are_cleaned_up() {
        let mut net = ZoneNet::new(Layout::new(&zones(&["a", "b"])).unwrap());
        let only_a = &members()[..1];
        assert!(
            net.apply(&change("a", Some("b"), ZoneFault::Partition), only_a)
                .is_empty()
        );
        assert!(!net.any());
        net.failed("k-worker");
        assert_eq!(net.rooted().collect::<Vec<_>>(), ["k-worker"]);
    }

    #[test]
    fn values_are_written_as_tc_reads_them() {
        assert_eq!(percent(5_000), "0.5%");
        assert_eq!(percent(10_000), "1%");
        assert_eq!(percent(1), "0.0001%");
        assert_eq!(percent(123_400), "12.34%");
        assert_eq!(tc_time(Duration::from_millis(20)), "20ms");
        assert_eq!(tc_time(Duration::from_micros(1500)), "1500us");
        let loss_only = ZoneFault::Degrade {
            delay: Duration::ZERO,
            jitter: Duration::ZERO,
            loss_ppm: 20_000,
        };
        assert_eq!(
            add_netem(10, loss_only).unwrap().join(" "),
            "qdisc add dev eth0 parent 1:a handle a0: netem limit 10000 loss 2%"
        );
        assert_eq!(add_netem(4, ZoneFault::Clear), None);
        let many: Vec<String> = (0..MAX_ZONES).map(|i| format!("z{i}")).collect();
        let layout = Layout::new(&many).unwrap();
        assert_eq!((layout.bands(), layout.band("z12")), (16, Some(16)));
        assert_eq!(add_filter(16, "10.0.0.0/8")[16], "1:10");
        let too_many: Vec<String> = (0..=MAX_ZONES).map(|i| format!("z{i}")).collect();
        assert!(Layout::new(&too_many).is_none());
    }

    #[test]
    fn addresses_come_from_docker_inspect_and_cleanup_errors_are_told_apart() {
        let parsed = parse_addresses("/k-worker 172.18.0.3\n/k-worker2 172.18.0.4 \n/k-cp\n");
        assert_eq!(
            parsed["k-worker"],
            vec!["172.18.0.3".parse::<Ipv4Addr>().unwrap()]
        );
        assert_eq!(parsed["k-worker2"].len(), 1);
        assert!(parsed["k-cp"].is_empty());
        assert!(is_ipv4_cidr("10.244.1.0/24") && !is_ipv4_cidr("10.244.1.0/33"));
        assert!(!is_ipv4_cidr("fd00::/64") && !is_ipv4_cidr("10.244.1.0"));
        // What iproute2 6.1 and Docker 20.10 print (checked on real containers).
        assert!(already_clean(
            "Error: Cannot delete qdisc with handle of zero.\n"
        ));
        assert!(already_clean(
            "RTNETLINK answers: No such file or directory\n"
        ));
        assert!(already_clean(
            "Error response from daemon: No such container: k-worker\n"
        ));
        assert!(already_clean(
            "Error response from daemon: Container 67c9 is not running\n"
        ));
        assert!(!already_clean(
            "RTNETLINK answers: Operation not permitted\n"
        ));
    }
}

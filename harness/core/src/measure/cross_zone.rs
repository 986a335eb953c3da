//! Traffic between zones: the traffic matrix with bytes (origin zone → pod → responses and
//! bytes, from the generators' per-second rows), its split into same-zone and cross-zone
//! traffic by the answering pod's zone, the estimated monthly cost of the cross-zone bytes at
//! the measured rate, and the zone-sliced metrics: `crossZoneShare`, and `errorRate` and
//! `latencyP99` by origin or destination zone.
//!
//! A response is *attributed* when its `x-pod` names a pod of the run (one of `RunData.pods`,
//! whose zone is known); responses with no pod or an unknown one (`unknown`, `(other)`, a load
//! balancer's own 502) are *unzoned*: neither same- nor cross-zone.

use std::collections::BTreeMap;
use std::ops::AddAssign;

use hdrhistogram::Histogram;
use workload_contract::loadgen::report::ByteCounts;

use super::{Measured, RunData, Window};
use crate::scenario::model::ZoneSlice;

/// 30 days, the month of the estimate.
pub const SECONDS_PER_MONTH: f64 = 30.0 * 86_400.0;
/// A GB as the clouds price it: 10^9 bytes.
pub const BYTES_PER_GB: f64 = 1e9;

/// Responses and bytes of one origin zone at one pod (a cell of the traffic matrix), or of
/// any group of cells.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Traffic {
    pub requests: u64,
    pub bytes: ByteCounts,
}

impl AddAssign for Traffic {
    fn add_assign(&mut self, o: Traffic) {
        self.requests += o.requests;
        self.bytes += o.bytes;
    }
}

/// Origin zone → pod → traffic.
pub type TrafficMatrix = BTreeMap<String, BTreeMap<String, Traffic>>;

/// The traffic matrix over `window` (the second a request was intended in; an SSE stream's
/// bytes by the second they crossed): every generator's rows, by the generator's zone.
pub fn traffic_matrix(run: &RunData, window: Window) -> TrafficMatrix {
    let mut m = TrafficMatrix::new();
    for (g, second, row) in run.load_seconds() {
        if !window.has_second(second) {
            continue;
        }
        let zone = m.entry(g.zone.clone()).or_default();
        for (pod, n) in &row.by_backend {
            zone.entry(pod.clone()).or_default().requests += n;
        }
        for (pod, bytes) in &row.bytes_by_backend {
            zone.entry(pod.clone()).or_default().bytes += *bytes;
        }
    }
    m
}

/// Each pod of the run and its zone.
pub fn pod_zones(run: &RunData) -> BTreeMap<String, String> {
    run.pods
        .iter()
        .map(|p| (p.name.clone(), p.zone.clone()))
        .collect()
}

/// A traffic matrix split by whether the answering pod was in its caller's zone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ZoneSplit {
    /// Answered by a pod in the caller's zone.
    pub same: Traffic,
    /// Answered by a pod in another zone.
    pub cross: Traffic,
    /// Answered by no pod of the run (no `x-pod`, an unknown one): no zone to compare.
    pub unzoned: Traffic,
}

impl ZoneSplit {
    /// Responses attributed to a pod of the run: same-zone plus cross-zone.
    pub fn attributed(&self) -> u64 {
        self.same.requests + self.cross.requests
    }

    /// Cross-zone responses over attributed ones; `None` without any.
    pub fn share(&self) -> Option<f64> {
        let attributed = self.attributed();
        (attributed > 0).then(|| self.cross.requests as f64 / attributed as f64)
    }

    /// Everything in the matrix.
    pub fn total(&self) -> Traffic {
        let mut t = self.same;
        t += self.cross;
        t += self.unzoned;
        t
    }
}

/// Splits `matrix` by each pod's zone (`zones`: pod → zone) against its origin zone.
pub fn split(matrix: &TrafficMatrix, zones: &BTreeMap<String, String>) -> ZoneSplit {
    let mut s = ZoneSplit::default();
    for (origin, pods) in matrix {
        for (pod, traffic) in pods {
            let side = match zones.get(pod) {
                Some(zone) if zone == origin => &mut s.same,
                Some(_) => &mut s.cross,
                None => &mut s.unzoned,
            };
            *side += *traffic;
        }
    }
    s
}

/// The estimated cost over a month (30 days) of `bytes` measured over `seconds`, at
/// `price_per_gb` US dollars per GB (10^9 bytes): the measured rate, extrapolated. `None`
/// when nothing was measured over time.
pub fn monthly_cost_usd(bytes: u64, seconds: f64, price_per_gb: f64) -> Option<f64> {
    (seconds > 0.0)
        .then(|| bytes as f64 / seconds * SECONDS_PER_MONTH / BYTES_PER_GB * price_per_gb)
}

/// `12.3 kB`, `4.1 MB`, `2.00 GB`: decimal units, as the clouds price them.
pub fn bytes_text(bytes: u64) -> String {
    let b = bytes as f64;
    let units = [(1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")];
    for (size, unit) in units {
        if b >= size {
            let v = b / size;
            return if v >= 100.0 {
                format!("{v:.0} {unit}")
            } else if v >= 10.0 {
                format!("{v:.1} {unit}")
            } else {
                format!("{v:.2} {unit}")
            };
        }
    }
    format!("{bytes} B")
}

/// `$0.0042`, `$1.23`, `$1,234`: a dollar amount with the digits that matter (two
/// significant ones below a cent).
pub fn usd_text(usd: f64) -> String {
    if usd >= 1000.0 {
        format!("${}", crate::text::thousands(usd.round() as u64))
    } else if usd >= 0.01 || usd <= 0.0 {
        format!("${:.2}", usd.max(0.0))
    } else {
        let digits = (1 - usd.log10().floor() as i64).clamp(2, 12) as usize;
        format!("${usd:.digits$}")
    }
}

/// The generators `slice` keeps (those in its origin zone, or all).
fn callers<'a>(
    run: &'a RunData,
    slice: &'a ZoneSlice,
) -> impl Iterator<Item = &'a super::GeneratorRun> + 'a {
    run.generators
        .iter()
        .filter(|g| slice.origin.as_ref().is_none_or(|z| *z == g.zone))
}

/// Whether a pod named by `x-pod` is in `slice`'s destination zone (any pod when it has none).
fn answered_in(zones: &BTreeMap<String, String>, slice: &ZoneSlice, pod: &str) -> bool {
    match &slice.destination {
        None => true,
        Some(z) => zones.get(pod) == Some(z),
    }
}

/// Words for the slice: `callers in a`, `pods in b`, `callers in a, pods in b`.
fn slice_text(slice: &ZoneSlice) -> String {
    let mut parts = Vec::new();
    if let Some(z) = &slice.origin {
        parts.push(format!("callers in {z}"));
    }
    if let Some(z) = &slice.destination {
        parts.push(format!("pods in {z}"));
    }
    parts.join(", ")
}

/// `crossZoneShare`: of the responses attributed to a pod of the run in `window` (by `slice`'s
/// callers, from `slice`'s pods), the share answered by a pod outside the caller's zone.
pub fn cross_zone_share(run: &RunData, window: Window, slice: &ZoneSlice) -> Measured {
    let zones = pod_zones(run);
    let mut matrix = TrafficMatrix::new();
    for (origin, pods) in traffic_matrix(run, window) {
        if slice.origin.as_ref().is_some_and(|z| *z != origin) {
            continue;
        }
        let kept: BTreeMap<String, Traffic> = pods
            .into_iter()
            .filter(|(pod, _)| answered_in(&zones, slice, pod))
            .collect();
        matrix.insert(origin, kept);
    }
    let s = split(&matrix, &zones);
    let within = if slice.is_whole() {
        String::new()
    } else {
        format!(" ({})", slice_text(slice))
    };
    Measured {
        value: s.share(),
        evidence: if s.attributed() == 0 {
            format!("no responses attributed to a pod of the run{within}")
        } else {
            format!(
                "{} of {} attributed responses{within} answered by a pod in another zone than \
                 the caller's ({} same-zone; {} named no pod of the run)",
                s.cross.requests,
                s.attributed(),
                s.same.requests,
                s.unzoned.requests
            )
        },
    }
}

/// `errorRate` by destination zone (and origin zone, if `slice` has one): the non-2xx
/// responses of the pods in the zone over their responses, in `window`. Transport errors name
/// no pod per second, so they are not in it.
pub fn error_rate_by_destination(run: &RunData, window: Window, slice: &ZoneSlice) -> Measured {
    let zones = pod_zones(run);
    let (mut answered, mut failed) = (0u64, 0u64);
    for (g, second, row) in run.load_seconds() {
        if !window.has_second(second) || slice.origin.as_ref().is_some_and(|z| *z != g.zone) {
            continue;
        }
        for (pod, n) in &row.by_backend {
            if answered_in(&zones, slice, pod) {
                answered += n;
                failed += row.non_2xx_by_backend.get(pod).copied().unwrap_or(0);
            }
        }
    }
    Measured {
        value: (answered > 0).then(|| failed as f64 / answered as f64),
        evidence: format!(
            "{failed} of {answered} responses from {} were not 2xx (transport errors name no \
             pod and are left out)",
            slice_text(slice)
        ),
    }
}

/// A view of `run` with only the generators in `origin`: every generator-side metric on it is
/// that zone's callers' own.
pub fn with_origin(run: &RunData, origin: &str) -> RunData {
    RunData {
        generators: run
            .generators
            .iter()
            .filter(|g| g.zone == origin)
            .cloned()
            .collect(),
        ..run.clone()
    }
}

/// Decodes a histogram as loadgen writes it (HdrHistogram V2 + DEFLATE, base64).
pub fn decode_histogram(text: &str) -> Result<Histogram<u64>, String> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|e| format!("histogram is not base64: {e}"))?;
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| format!("histogram does not decode: {e:?}"))
}

/// `latencyP99` by destination zone: the per-pod latency histograms of the pods in the zone
/// (from the callers `slice` keeps), merged, over the generators' whole runs (those histograms
/// have no time axis; the scenario allows no window here).
pub fn latency_p99_by_destination(run: &RunData, slice: &ZoneSlice) -> Measured {
    let zones = pod_zones(run);
    let mut merged: Option<Histogram<u64>> = None;
    let mut pods: Vec<&str> = Vec::new();
    let mut bad = Vec::new();
    for g in callers(run, slice) {
        for (pod, b) in &g.report.by_backend {
            if b.requests == 0 || !zones.contains_key(pod) || !answered_in(&zones, slice, pod) {
                continue;
            }
            let mut h = match decode_histogram(&b.histogram) {
                Ok(h) => h,
                Err(e) => {
                    bad.push(format!("{} {pod}: {e}", g.name));
                    continue;
                }
            };
            h.auto(true);
            match &mut merged {
                None => merged = Some(h),
                Some(acc) => {
                    if let Err(e) = acc.add(&h) {
                        bad.push(format!("{} {pod}: {e:?}", g.name));
                        continue;
                    }
                }
            }
            pods.push(pod);
        }
    }
    pods.sort_by(|a, b| crate::text::natural_key(a).cmp(&crate::text::natural_key(b)));
    pods.dedup();
    let unreadable = if bad.is_empty() {
        String::new()
    } else {
        format!("; left out, unreadable: {}", bad.join(", "))
    };
    match merged.filter(|h| !h.is_empty()) {
        Some(h) => {
            let ms = h.value_at_quantile(0.99) as f64 / 1000.0;
            Measured {
                value: Some(ms / 1000.0),
                evidence: format!(
                    "p99 {ms:.1} ms over {} responses from {} ({}), the generators' whole runs{unreadable}",
                    h.len(),
                    slice_text(slice),
                    pods.join(", ")
                ),
            }
        }
        None => Measured {
            value: None,
            evidence: format!("no responses from {}{unreadable}", slice_text(slice)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(requests: u64, sent: u64, received: u64) -> Traffic {
        Traffic {
            requests,
            bytes: ByteCounts { sent, received },
        }
    }

    /// Two zones, three pods: a's callers reach a-1 (same) and b-1 (cross), b's callers reach
    /// b-1 (same) and a-1 (cross); `unknown` has no zone.
    #[test]
    fn the_split_follows_the_answering_pods_zone() {
        let zones: BTreeMap<String, String> = [("a-1", "a"), ("b-1", "b")]
            .map(|(p, z)| (p.to_owned(), z.to_owned()))
            .into();
        let mut m = TrafficMatrix::new();
        m.entry("a".into()).or_default().extend([
            ("a-1".to_owned(), t(600, 60_000, 1_200_000)),
            ("b-1".to_owned(), t(200, 20_000, 400_000)),
            ("unknown".to_owned(), t(5, 500, 0)),
        ]);
        m.entry("b".into()).or_default().extend([
            ("b-1".to_owned(), t(150, 15_000, 300_000)),
            ("a-1".to_owned(), t(50, 5_000, 100_000)),
        ]);
        let s = split(&m, &zones);
        assert_eq!(s.same, t(750, 75_000, 1_500_000));
        assert_eq!(s.cross, t(250, 25_000, 500_000));
        assert_eq!(s.unzoned, t(5, 500, 0));
        assert_eq!(s.attributed(), 1_000);
        assert_eq!(s.share(), Some(0.25));
        assert_eq!(s.total(), t(1_005, 100_500, 2_000_000));
    }

    /// 525 MB across zones in 40 s is 13.125 MB/s; a month is 2,592,000 s, so 34,020 GB, and
    /// at $0.01/GB that is $340.20.
    #[test]
    fn the_monthly_cost_extrapolates_the_measured_rate() {
        let cost = monthly_cost_usd(525_000_000, 40.0, 0.01).unwrap();
        assert!((cost - 340.2).abs() < 1e-9, "{cost}");
        // GCP's price is per GiB: 0.01 / 1.073741824 per GB.
        let gib = monthly_cost_usd(1_073_741_824, SECONDS_PER_MONTH, 0.01).unwrap();
        assert!((gib - 0.010_737_418_24).abs() < 1e-15, "{gib}");
        assert_eq!(monthly_cost_usd(1, 0.0, 0.01), None);
        assert_eq!(monthly_cost_usd(0, 10.0, 0.01), Some(0.0));
    }

    #[test]
    fn amounts_read_in_decimal_units() {
        assert_eq!(bytes_text(999), "999 B");
        assert_eq!(bytes_text(4_100_000), "4.10 MB");
        assert_eq!(bytes_text(41_000_000), "41.0 MB");
        assert_eq!(bytes_text(410_000_000), "410 MB");
        assert_eq!(bytes_text(2_000_000_000), "2.00 GB");
        assert_eq!(usd_text(340.2), "$340.20");
        assert_eq!(usd_text(12_345.6), "$12,346");
        assert_eq!(usd_text(0.0), "$0.00");
        assert_eq!(usd_text(0.0042), "$0.0042");
        assert_eq!(usd_text(0.000_123), "$0.00012");
    }
}

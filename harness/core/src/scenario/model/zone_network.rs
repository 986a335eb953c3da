//! The `zoneNetwork` timeline action: a fault on the links between two zones (or one zone and
//! every other), or its end. Links are unordered pairs of zones: a fault is symmetric.

use std::collections::BTreeSet;
use std::fmt;
use std::time::Duration;

use crate::scenario::units::format_duration;

/// The zones at the other end of the links.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ZoneScope {
    Zone(String),
    /// Every cluster zone but `from`.
    All,
}

/// What happens on the links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZoneFault {
    /// Each packet each way is delayed by `delay` ± up to `jitter` (uniform), and lost with
    /// probability `loss_ppm` per million.
    Degrade {
        delay: Duration,
        jitter: Duration,
        loss_ppm: u32,
    },
    /// Nothing passes: new connections time out, established ones stall.
    Partition,
    /// End the faults active on these links.
    Clear,
}

impl ZoneFault {
    /// The loss as a probability.
    pub fn loss(self) -> f64 {
        match self {
            ZoneFault::Degrade { loss_ppm, .. } => f64::from(loss_ppm) / 1e6,
            _ => 0.0,
        }
    }
}

/// A `zoneNetwork` action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZoneNetworkChange {
    pub from: String,
    pub to: ZoneScope,
    pub fault: ZoneFault,
}

/// An unordered pair of zones, smaller name first.
pub type Link = (String, String);

/// The link between `a` and `b`.
pub fn link(a: &str, b: &str) -> Link {
    if a <= b {
        (a.to_owned(), b.to_owned())
    } else {
        (b.to_owned(), a.to_owned())
    }
}

impl ZoneNetworkChange {
    /// The links the change acts on, among `zones` (the cluster's).
    pub fn links(&self, zones: &[String]) -> BTreeSet<Link> {
        match &self.to {
            ZoneScope::Zone(to) => BTreeSet::from([link(&self.from, to)]),
            ZoneScope::All => zones
                .iter()
                .filter(|z| **z != self.from)
                .map(|z| link(&self.from, z))
                .collect(),
        }
    }
}

impl fmt::Display for ZoneScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ZoneScope::Zone(z) => f.write_str(z),
            ZoneScope::All => f.write_str("every other zone"),
        }
    }
}

impl fmt::Display for ZoneFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ZoneFault::Degrade {
                delay,
                jitter,
                loss_ppm,
            } => {
                write!(f, "+{} each way", format_duration(delay))?;
                if !jitter.is_zero() {
                    write!(f, " ±{}", format_duration(jitter))?;
                }
                if loss_ppm > 0 {
                    write!(f, ", {}% loss", f64::from(loss_ppm) / 1e4)?;
                }
                Ok(())
            }
            ZoneFault::Partition => f.write_str("partitioned"),
            ZoneFault::Clear => f.write_str("cleared"),
        }
    }
}

impl fmt::Display for ZoneNetworkChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.fault {
            ZoneFault::Clear => write!(f, "network between {} and {} restored", self.from, self.to),
            fault => write!(f, "network between {} and {}: {fault}", self.from, self.to),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_unordered_pairs_and_all_means_every_other_zone() {
        let zones: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let change = ZoneNetworkChange {
            from: "b".into(),
            to: ZoneScope::All,
            fault: ZoneFault::Partition,
        };
        assert_eq!(
            change.links(&zones),
            BTreeSet::from([link("a", "b"), link("b", "c")])
        );
        assert_eq!(link("b", "a"), link("a", "b"));
        let degrade = ZoneFault::Degrade {
            delay: Duration::from_millis(20),
            jitter: Duration::from_millis(2),
            loss_ppm: 5_000,
        };
        assert_eq!(degrade.to_string(), "+20ms each way ±2ms, 0.5% loss");
        assert!((degrade.loss() - 0.005).abs() < 1e-12);
    }
}

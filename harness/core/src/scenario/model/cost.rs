//! The price of cross-zone bytes (`cost`), for the reports' estimated monthly cost.

/// What the bytes that cross between zones cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cost {
    /// US dollars per GB (10^9 bytes), applied to the bytes of each direction.
    pub price_per_gb: f64,
}

impl Cost {
    /// The common public-cloud list price between zones of a region: AWS $0.01/GB in each
    /// direction, GCP $0.01/GiB (docs/scenario-format.md cites both).
    pub const DEFAULT_PRICE_PER_GB: f64 = 0.01;
}

impl Default for Cost {
    fn default() -> Self {
        Cost {
            price_per_gb: Cost::DEFAULT_PRICE_PER_GB,
        }
    }
}

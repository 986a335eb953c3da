//! `cost`: what the bytes that cross between zones are priced at, for the reports' estimated
//! monthly cost of the run's cross-zone traffic.

use schemars::JsonSchema;
use serde::Deserialize;

/// The price of data crossing between zones of a region. The reports multiply the run's
/// cross-zone bytes (sent and received, both directions) by it and extrapolate the measured
/// rate to a month (30 days).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CostSpec {
    /// US dollars per GB (10^9 bytes) that crosses between zones, charged on the bytes of each
    /// direction (requests and responses). Default 0.01: AWS's inter-AZ data transfer within a
    /// region ($0.01/GB, charged in each direction) and GCP's between zones of a region
    /// ($0.01/GiB); Azure charges nothing between availability zones since 2024 (set 0).
    #[serde(default)]
    #[schemars(extend("minimum" = 0))]
    pub price_per_gb: Option<f64>,
}

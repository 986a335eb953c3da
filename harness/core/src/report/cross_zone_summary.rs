//! The cross-zone part of the summary: the traffic matrix split by whether the answering pod
//! was in its caller's zone, the bytes, the monthly cost at the run's rate, and the traffic of
//! the callers through the load balancer or the ingress (whose hops it does not count).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Traffic between zones over the load window: responses answered by a pod in another zone
/// than the caller's (a generator's zone against the answering pod's), their bytes, and what
/// those bytes would cost in a month at the measured rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CrossZoneSummary {
    /// Responses answered by a pod in another zone than the caller's.
    pub requests: u64,
    /// Their bytes in both directions (`bytesSent + bytesReceived`): each direction crosses
    /// between zones and is charged.
    pub bytes: u64,
    /// Of `bytes`, the requests' (caller → pod).
    pub bytes_sent: u64,
    /// Of `bytes`, the answers' (pod → caller).
    pub bytes_received: u64,
    /// `requests / attributedRequests`; null without attributed responses.
    pub share: Option<f64>,
    /// Responses attributed to a pod of the run: `requests + sameZoneRequests`.
    pub attributed_requests: u64,
    /// Responses answered by a pod in the caller's zone.
    pub same_zone_requests: u64,
    /// Their bytes in both directions.
    pub same_zone_bytes: u64,
    /// Responses that named no pod of the run (no `x-pod`, a load balancer's own error): no
    /// zone to compare, in neither count.
    pub unzoned_requests: u64,
    /// Their bytes in both directions.
    pub unzoned_bytes: u64,
    /// Seconds of load the figures cover: the rate's denominator.
    pub seconds: f64,
    /// US dollars per GB (10^9 bytes), applied to the bytes of each direction (the scenario's
    /// `cost.pricePerGb`, 0.01 by default).
    pub price_per_gb: f64,
    /// `bytes / seconds × 2,592,000 s (30 days) / 10^9 × pricePerGb`: the month's cost of the
    /// cross-zone bytes at this run's rate. Null when no time was measured.
    pub estimated_monthly_usd: Option<f64>,
    /// The callers that went through the load balancer or the ingress replicas, and their
    /// traffic over the same window; null when every caller went through kube-proxy.
    #[serde(default)]
    pub proxied: Option<ProxiedTraffic>,
}

/// The traffic of the callers through the load balancer or the ingress replicas. Their path
/// has a hop to the balancer or a replica and one from it to the pod, each of which crosses
/// zones when its ends are in different ones; the cross-zone figures compare only the
/// caller's zone with the answering pod's, so they do not count those hops.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProxiedTraffic {
    /// The generators through the load balancer or the ingress, by name.
    pub generators: Vec<String>,
    /// Their responses in the traffic matrix (attributed to a pod of the run or not).
    pub requests: u64,
    /// Their bytes in both directions.
    pub bytes: u64,
}

impl CrossZoneSummary {
    /// `cross-zone: 12.3% of requests (1,230 of 10,000), 4.10 MB in 40 s, about $2.66/month at
    /// this rate and $0.01/GB each way`.
    pub fn sentence(&self) -> String {
        use crate::measure::{bytes_text, usd_text};
        let share = match self.share {
            Some(s) => format!(
                "{:.1}% of requests ({} of {})",
                s * 100.0,
                crate::text::thousands(self.requests),
                crate::text::thousands(self.attributed_requests)
            ),
            None => "no responses attributed to a pod".to_owned(),
        };
        let cost = match self.estimated_monthly_usd {
            Some(usd) => format!(
                ", about {}/month at this rate and {}/GB each way",
                usd_text(usd),
                price_text(self.price_per_gb)
            ),
            None => String::new(),
        };
        let proxied = match &self.proxied {
            Some(p) if p.requests > 0 => format!(
                "; {} of the responses went through the load balancer or the ingress, whose own \
                 hops between zones these figures do not count (they compare each caller's zone \
                 with its answering pod's)",
                crate::text::thousands(p.requests)
            ),
            _ => String::new(),
        };
        format!(
            "cross-zone: {share}, {} in {:.0} s{cost}{proxied}",
            bytes_text(self.bytes),
            self.seconds
        )
    }
}

/// `$0.01`, `$0.0093`: a price per GB as written.
fn price_text(price: f64) -> String {
    let text = format!("{price:.6}");
    let text = text.trim_end_matches('0');
    let (whole, decimals) = text.split_once('.').unwrap_or((text, ""));
    format!("${whole}.{decimals:0<2}")
}

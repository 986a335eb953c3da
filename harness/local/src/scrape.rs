//! Reading the workloads over HTTP: a readiness probe (`GET /readyz`, as the kubelet's httpGet
//! probe: any 2xx or 3xx within the timeout is success) and scrapes of their Prometheus text,
//! parsed as the workload contract says.

use std::net::SocketAddr;
use std::time::Duration;

use workload_contract::loadgen::LoadgenCounters;
use workload_contract::prometheus;
use workload_contract::sidecar::SidecarMetrics;

/// HTTP client shared by probes and scrapes (no proxy, short timeouts, loopback only).
#[derive(Debug, Clone)]
pub struct Scraper {
    client: reqwest::Client,
}

impl Scraper {
    pub fn new(timeout: Duration) -> Self {
        let client = reqwest::Client::builder()
            .no_proxy()
            .timeout(timeout)
            .pool_max_idle_per_host(2)
            .build()
            .expect("a plain HTTP client always builds");
        Self { client }
    }

    /// The kubelet's httpGet probe: success on 200–399.
    pub async fn probe_ready(&self, addr: SocketAddr) -> bool {
        self.probe(addr, "/readyz").await
    }

    /// An HTTP GET health check of `path`: success on 200–399.
    pub async fn probe(&self, addr: SocketAddr, path: &str) -> bool {
        match self.client.get(format!("http://{addr}{path}")).send().await {
            Ok(resp) => {
                let code = resp.status().as_u16();
                (200..400).contains(&code)
            }
            Err(_) => false,
        }
    }

    /// The text of `http://addr/metrics`; `None` when nothing answers.
    async fn metrics_text(&self, addr: SocketAddr) -> Option<String> {
        let resp = self
            .client
            .get(format!("http://{addr}/metrics"))
            .send()
            .await
            .ok()?;
        resp.text().await.ok()
    }

    /// Reads one unlabelled counter or gauge from `http://addr/metrics`.
    pub async fn counter(&self, addr: SocketAddr, name: &str) -> Option<f64> {
        let text = self.metrics_text(addr).await?;
        prometheus::value(&text, name)
    }

    /// Scrapes `http://admin/metrics`; `None` when the sidecar does not answer.
    pub async fn sidecar_metrics(&self, admin: SocketAddr) -> Option<SidecarMetrics> {
        let text = self.metrics_text(admin).await?;
        Some(SidecarMetrics::parse(&text))
    }

    /// Scrapes a generator's `/metrics`; `None` when it does not answer (not started yet, or
    /// finished).
    pub async fn loadgen_counters(&self, addr: SocketAddr) -> Option<LoadgenCounters> {
        let text = self.metrics_text(addr).await?;
        Some(LoadgenCounters::parse(&text))
    }
}

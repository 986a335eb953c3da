//! Reading the sidecars: a readiness probe (`GET /readyz`, as the kubelet's httpGet probe: any
//! 2xx or 3xx within the timeout is success) and a scrape of the admin port's Prometheus text
//! into the numbers the measurements use.

use std::net::SocketAddr;
use std::time::Duration;

/// One scrape of a sidecar's destination-side metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SidecarMetrics {
    pub in_flight: u64,
    pub queue_depth: u64,
    pub received: u64,
    pub admitted: u64,
    pub rejected_queue_full: u64,
    pub rejected_queue_timeout: u64,
}

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
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
    }

    /// Scrapes `http://admin/metrics`; `None` when the sidecar does not answer.
    pub async fn sidecar_metrics(&self, admin: SocketAddr) -> Option<SidecarMetrics> {
        let text = self.metrics_text(admin).await?;
        Some(parse_sidecar_metrics(&text))
    }
}

/// A generator's source-side counters (`loadgen --metrics-listen`), cumulative.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadgenCounters {
    pub attempted: u64,
    /// Responses of any status plus transport errors.
    pub completed: u64,
    /// Non-2xx responses plus transport errors.
    pub failed: u64,
}

impl std::ops::Add for LoadgenCounters {
    type Output = Self;

    fn add(self, o: Self) -> Self {
        Self {
            attempted: self.attempted + o.attempted,
            completed: self.completed + o.completed,
            failed: self.failed + o.failed,
        }
    }
}

impl Scraper {
    /// Scrapes a generator's `/metrics`; `None` when it does not answer (not started yet, or
    /// finished).
    pub async fn loadgen_counters(&self, addr: SocketAddr) -> Option<LoadgenCounters> {
        let text = self.metrics_text(addr).await?;
        Some(parse_loadgen_counters(&text))
    }
}

/// Every `series value` line of Prometheus text exposition, values as whole counts.
fn samples(text: &str) -> impl Iterator<Item = (&str, u64)> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            let value = value.trim().parse::<f64>().ok()?;
            Some((series, value.max(0.0) as u64))
        })
}

/// Picks loadgen's request counters out of Prometheus text exposition.
pub fn parse_loadgen_counters(text: &str) -> LoadgenCounters {
    let mut c = LoadgenCounters::default();
    for (series, value) in samples(text) {
        if series == "loadgen_attempted_total" {
            c.attempted = value;
        } else if let Some(labels) = series.strip_prefix("loadgen_responses_total{") {
            c.completed += value;
            if !labels.contains("code=\"2") {
                c.failed += value;
            }
        } else if series.starts_with("loadgen_transport_errors_total{") {
            c.completed += value;
            c.failed += value;
        }
    }
    c
}

/// Picks the sidecar's series out of Prometheus text exposition.
pub fn parse_sidecar_metrics(text: &str) -> SidecarMetrics {
    let mut m = SidecarMetrics::default();
    for (series, value) in samples(text) {
        match series {
            "sidecar_in_flight" => m.in_flight = value,
            "sidecar_queue_depth" => m.queue_depth = value,
            "sidecar_received_total" => m.received = value,
            "sidecar_admitted_total" => m.admitted = value,
            s if s.starts_with("sidecar_rejected_total{")
                && s.contains("reason=\"queue_full\"") =>
            {
                m.rejected_queue_full = value
            }
            s if s.starts_with("sidecar_rejected_total{")
                && s.contains("reason=\"queue_timeout\"") =>
            {
                m.rejected_queue_timeout = value
            }
            _ => {}
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_generators_counters() {
        let text = "# TYPE loadgen_attempted_total counter\nloadgen_attempted_total 120\n\
                    loadgen_responses_total{code=\"200\"} 90\nloadgen_responses_total{code=\"503\"} 5\n\
                    loadgen_transport_errors_total{kind=\"timeout\"} 20\n\
                    loadgen_transport_errors_total{kind=\"reset\"} 1\nloadgen_in_flight 4\n# EOF\n";
        assert_eq!(
            parse_loadgen_counters(text),
            LoadgenCounters {
                attempted: 120,
                completed: 116,
                failed: 26,
            }
        );
    }

    #[test]
    fn parses_the_sidecar_series() {
        let text = "# HELP sidecar_in_flight x\n# TYPE sidecar_in_flight gauge\nsidecar_in_flight 7\n\
                    sidecar_queue_depth 3\nsidecar_received_total 1300\nsidecar_admitted_total 1200\n\
                    sidecar_rejected_total{reason=\"queue_full\"} 4\n\
                    sidecar_rejected_total{reason=\"queue_timeout\"} 9\n\
                    sidecar_request_duration_seconds_bucket{le=\"0.1\"} 5\n# EOF\n";
        assert_eq!(
            parse_sidecar_metrics(text),
            SidecarMetrics {
                in_flight: 7,
                queue_depth: 3,
                received: 1300,
                admitted: 1200,
                rejected_queue_full: 4,
                rejected_queue_timeout: 9,
            }
        );
    }
}

//! The data plane in-process on loopback for the cross-workload tests: flagsvc and the sidecar
//! (their real `serve` functions on 127.0.0.1:0) and metric scraping. The counting upstream
//! (measurements at the upstream side), the bounded one-shot HTTP client and the bounded wait
//! are `workload_test_support`'s.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use workload_common::serve::{ServeOptions, ServeSummary};
pub use workload_test_support::{UPSTREAM_POD, Upstream, get, identity, wait_until};

/// Everything waits at most this long for a server to stop.
const STOP_LIMIT: Duration = Duration::from_secs(10);

pub async fn bind() -> TcpListener {
    TcpListener::bind("127.0.0.1:0").await.unwrap()
}

/// A running flagsvc.
pub struct Flagsvc {
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<ServeSummary>,
}

impl Flagsvc {
    /// flagsvc as pod `pod`, with this service time and no flag flips.
    pub async fn start(pod: &str, service_time: flagsvc::ServiceTime) -> Self {
        let listener = bind().await;
        let addr = listener.local_addr().unwrap();
        let config = flagsvc::Config {
            service_time,
            sse_heartbeat: Duration::from_secs(1),
            flag_change_interval: Duration::ZERO,
            identity: identity(pod),
            serve: ServeOptions::default(),
        };
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(flagsvc::serve(listener, config, async {
            let _ = rx.await;
        }));
        Self {
            addr,
            stop: Some(tx),
            task,
        }
    }

    pub fn uri(&self) -> http::Uri {
        format!("http://{}", self.addr).parse().unwrap()
    }

    /// Signals shutdown and waits (bounded) for the serve loop to end.
    pub async fn stop(mut self) -> ServeSummary {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        tokio::time::timeout(STOP_LIMIT, &mut self.task)
            .await
            .expect("flagsvc stops within 10 s")
            .unwrap()
    }
}

impl Drop for Flagsvc {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A sidecar config in front of `upstream` with `max` slots, identity `sidecar-0`.
pub fn sidecar_config(upstream: http::Uri, max: usize) -> sidecar::Config {
    sidecar::Config {
        upstream,
        max_concurrency: max,
        identity: identity("sidecar-0"),
        ..sidecar::Config::default()
    }
}

/// A running sidecar.
pub struct Sidecar {
    pub addr: SocketAddr,
    pub admin: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<Result<sidecar::Summary, sidecar::SidecarError>>,
}

impl Sidecar {
    pub async fn start(config: sidecar::Config) -> Self {
        let (listener, admin_listener) = (bind().await, bind().await);
        let addr = listener.local_addr().unwrap();
        let admin = admin_listener.local_addr().unwrap();
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(sidecar::serve(listener, admin_listener, config, async {
            let _ = rx.await;
        }));
        Self {
            addr,
            admin,
            stop: Some(tx),
            task,
        }
    }

    pub fn url(&self, path: &str) -> http::Uri {
        format!("http://{}{path}", self.addr).parse().unwrap()
    }

    /// One scrape of the admin `/metrics`.
    pub async fn scrape(&self) -> Scrape {
        let reply = get(self.admin, "/metrics").await.expect("scrape /metrics");
        assert_eq!(reply.status, 200, "{}", reply.body);
        Scrape(reply.body)
    }

    /// One sample, scraped now.
    pub async fn metric(&self, series: &str) -> u64 {
        self.scrape().await.get(series)
    }

    /// Signals shutdown and waits (bounded) for both listeners to finish.
    pub async fn stop(mut self) -> sidecar::Summary {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        tokio::time::timeout(STOP_LIMIT, &mut self.task)
            .await
            .expect("sidecar stops within 10 s")
            .unwrap()
            .unwrap()
    }
}

impl Drop for Sidecar {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The text of one `/metrics` scrape.
#[derive(Debug, Clone)]
pub struct Scrape(pub String);

impl Scrape {
    /// The integer value of `series` (name with labels, as exposed); panics when absent.
    pub fn get(&self, series: &str) -> u64 {
        self.find(series)
            .unwrap_or_else(|| panic!("no sample {series} in:\n{}", self.0))
    }

    /// The integer value of `series`, `None` when it is not exposed.
    pub fn find(&self, series: &str) -> Option<u64> {
        self.0.lines().find_map(|line| {
            let value = line.strip_prefix(series)?.strip_prefix(' ')?;
            let v: f64 = value.trim().parse().ok()?;
            assert!(v >= 0.0 && v.fract() == 0.0, "{series} is not a count: {v}");
            Some(v as u64)
        })
    }

    /// Every `name{label="value"}` sample of a one-label family, by label value.
    pub fn family(&self, name: &str, label: &str) -> BTreeMap<String, u64> {
        let prefix = format!("{name}{{{label}=\"");
        self.0
            .lines()
            .filter_map(|line| {
                let rest = line.strip_prefix(&prefix)?;
                let (value, sample) = rest.split_once("\"} ")?;
                let n: f64 = sample.trim().parse().ok()?;
                Some((value.to_string(), n as u64))
            })
            .collect()
    }
}

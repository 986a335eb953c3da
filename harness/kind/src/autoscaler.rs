//! The real HorizontalPodAutoscaler on the timeline: a kube-runtime watcher on the run's
//! `autoscaling/v2` HPA (the one KEDA creates, named after the service) turns each change of
//! its status into the local target's events — `autoscaler` (replicas before the sync, the
//! controller's decision, both sides' request rates) and a `note` when a condition
//! (`AbleToScale`, `ScalingActive`, `ScalingLimited`) changes — so `timeToScaleUp`, the
//! explanation and the report's chart of source vs destination rate read as locally.
//!
//! The rates are totals, as the local model records them. The HPA's own side is what the
//! controller saw: `status.currentMetrics[].external.current.averageValue` is the total divided
//! by the scale's status replicas of that sync (`GetExternalPerPodMetricReplicas` in
//! `pkg/controller/podautoscaler/replica_calculator.go`, called from
//! `computeStatusForExternalMetric` in `horizontal.go`, v1.34), so the total is that average
//! times `status.currentReplicas` (the scale's spec replicas: the same number except while a
//! scaling's new pods are still being created). The other side, which the HPA does not read,
//! is asked from the same Prometheus with the same kind of query, through the API server's
//! service proxy (`prometheus-operated`, port `web`: prometheus-operator
//! `makeStatefulSetService`, `pkg/prometheus/server/statefulset.go`).

use std::time::Duration;

use futures::StreamExt;
use harness_core::measure::EventKind;
use harness_core::scenario::model::Reporter;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use kube::Client;
use kube::api::Api;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event as WatchEvent};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::manifests::autoscaler::{PROMETHEUS_SERVICE, rate_query};
use crate::watch::Recorder;

/// How long one Prometheus query through the service proxy may take.
pub const QUERY_TIMEOUT: Duration = Duration::from_secs(2);

/// One HPA condition: type, status, reason, message.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    pub type_: String,
    pub status: String,
    pub reason: String,
    pub message: String,
}

/// What an HPA's status says.
#[derive(Debug, Clone, PartialEq)]
pub struct HpaView {
    pub current: u32,
    pub desired: u32,
    /// The External metric's current average per pod, when the controller read one.
    pub average: Option<f64>,
    pub conditions: Vec<Condition>,
}

impl HpaView {
    /// The view of `hpa`, or `None` before the controller wrote a status.
    pub fn of(hpa: &HorizontalPodAutoscaler) -> Option<HpaView> {
        let status = hpa.status.as_ref()?;
        let average = status.current_metrics.iter().flatten().find_map(|m| {
            let current = &m.external.as_ref()?.current;
            current
                .average_value
                .as_ref()
                .or(current.value.as_ref())
                .and_then(|q| parse_quantity(&q.0))
        });
        let conditions = status
            .conditions
            .iter()
            .flatten()
            .map(|c| Condition {
                type_: c.type_.clone(),
                status: c.status.clone(),
                reason: c.reason.clone().unwrap_or_default(),
                message: c.message.clone().unwrap_or_default(),
            })
            .collect();
        Some(HpaView {
            current: u32::try_from(status.current_replicas.unwrap_or(0)).unwrap_or(0),
            desired: u32::try_from(status.desired_replicas).unwrap_or(0),
            average,
            conditions,
        })
    }

    /// The HPA's side as a total: the average times the replicas it was computed over.
    pub fn total(&self) -> Option<f64> {
        self.average.map(|a| a * f64::from(self.current))
    }
}

/// A Kubernetes quantity (`12500m`, `15`, `1.5k`, `2Mi`, `1e3`) as a number.
pub fn parse_quantity(text: &str) -> Option<f64> {
    let text = text.trim();
    if let Ok(v) = text.parse::<f64>() {
        return v.is_finite().then_some(v);
    }
    const SUFFIXES: [(&str, f64); 15] = [
        ("Ki", 1024.0),
        ("Mi", 1048576.0),
        ("Gi", 1073741824.0),
        ("Ti", 1099511627776.0),
        ("Pi", 1125899906842624.0),
        ("Ei", 1152921504606846976.0),
        ("n", 1e-9),
        ("u", 1e-6),
        ("m", 1e-3),
        ("k", 1e3),
        ("M", 1e6),
        ("G", 1e9),
        ("T", 1e12),
        ("P", 1e15),
        ("E", 1e18),
    ];
    SUFFIXES.iter().find_map(|(suffix, factor)| {
        let number = text.strip_suffix(suffix)?;
        let v: f64 = number.parse().ok()?;
        v.is_finite().then_some(v * factor)
    })
}

/// Turns HPA status changes into timeline events.
#[derive(Debug, Clone)]
pub struct HpaTracker {
    name: String,
    reporter: Reporter,
    last: Option<HpaView>,
}

impl HpaTracker {
    pub fn new(name: &str, reporter: Reporter) -> Self {
        HpaTracker {
            name: name.to_owned(),
            reporter,
            last: None,
        }
    }

    /// The view of `hpa` when its status changed since the last one seen.
    pub fn changed(&mut self, hpa: &HorizontalPodAutoscaler) -> Option<HpaView> {
        let view = HpaView::of(hpa)?;
        if self.last.as_ref() == Some(&view) {
            return None;
        }
        Some(view)
    }

    /// The events for `view` (a changed status), with the other side's total rate when it
    /// could be read; remembers `view`.
    pub fn events(&mut self, view: HpaView, other_side: Option<f64>) -> Vec<EventKind> {
        let mut events = Vec::new();
        for c in &view.conditions {
            let before = self
                .last
                .as_ref()
                .and_then(|l| l.conditions.iter().find(|o| o.type_ == c.type_));
            if before.is_some_and(|b| b.status == c.status && b.reason == c.reason) {
                continue;
            }
            let why = match (c.reason.is_empty(), c.message.is_empty()) {
                (true, true) => String::new(),
                (false, true) => format!(" ({})", c.reason),
                (true, false) => format!(": {}", c.message),
                (false, false) => format!(" ({}): {}", c.reason, c.message),
            };
            events.push(EventKind::Note {
                message: format!(
                    "HorizontalPodAutoscaler {}: {} {}{why}",
                    self.name, c.type_, c.status
                ),
            });
        }
        let seen = view.total();
        let moved = self.last.as_ref().is_none_or(|l| {
            l.current != view.current || l.desired != view.desired || l.average != view.average
        });
        if moved && (seen.is_some() || view.current > 0) {
            let own = seen.unwrap_or(0.0);
            let other = other_side.unwrap_or(0.0);
            let (source_rps, destination_rps) = match self.reporter {
                Reporter::Destination => (other, own),
                Reporter::Source => (own, other),
            };
            events.push(EventKind::Autoscaler {
                current: view.current,
                desired: view.desired,
                source_rps,
                destination_rps,
                destination_by_pod: Default::default(),
            });
        }
        self.last = Some(view);
        events
    }
}

/// The side the HPA does not read.
pub fn other_side(reporter: Reporter) -> Reporter {
    match reporter {
        Reporter::Destination => Reporter::Source,
        Reporter::Source => Reporter::Destination,
    }
}

/// Everything but RFC 3986's unreserved characters is percent-encoded.
const QUERY_VALUE: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// The API server's service-proxy path of a Prometheus instant query in `ns`.
pub fn query_path(ns: &str, query: &str) -> String {
    format!(
        "/api/v1/namespaces/{ns}/services/{PROMETHEUS_SERVICE}:web/proxy/api/v1/query?query={}",
        percent_encoding::utf8_percent_encode(query, QUERY_VALUE)
    )
}

/// The value of a Prometheus instant-query answer with one series (or none: 0).
pub fn query_value(body: &str) -> Result<f64, String> {
    let v: serde_json::Value = serde_json::from_str(body).map_err(|e| e.to_string())?;
    if v["status"] != "success" {
        return Err(format!(
            "Prometheus answered {}: {}",
            v["status"],
            v["error"].as_str().unwrap_or("no error text")
        ));
    }
    match v["data"]["result"].as_array() {
        Some(series) if series.is_empty() => Ok(0.0),
        Some(series) => series[0]["value"][1]
            .as_str()
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|x| x.is_finite())
            .ok_or_else(|| format!("no number in {}", series[0])),
        None => Err("no `data.result` in the answer".into()),
    }
}

/// Asks the run's Prometheus for `query` through the service proxy.
pub async fn query_prometheus(client: &Client, ns: &str, query: &str) -> Result<f64, String> {
    let request = http::Request::get(query_path(ns, query))
        .body(Vec::new())
        .map_err(|e| e.to_string())?;
    let text = tokio::time::timeout(QUERY_TIMEOUT, client.request_text(request))
        .await
        .map_err(|_| format!("no answer within {}s", QUERY_TIMEOUT.as_secs()))?
        .map_err(|e| e.to_string())?;
    query_value(&text)
}

/// What the HPA watcher needs to know.
#[derive(Debug, Clone)]
pub struct HpaWatch {
    pub namespace: String,
    /// The HPA's name (the service's).
    pub name: String,
    pub reporter: Reporter,
    /// The `rate()` window of the queries, in seconds.
    pub window_s: u32,
}

/// Watches the HPA until `stop`, recording its status changes.
pub fn spawn_hpa_watcher(
    client: &Client,
    watch: HpaWatch,
    recorder: &Recorder,
    stop: &CancellationToken,
) -> JoinHandle<()> {
    let (client, recorder, stop) = (client.clone(), recorder.clone(), stop.clone());
    tokio::spawn(async move {
        let api: Api<HorizontalPodAutoscaler> = Api::namespaced(client.clone(), &watch.namespace);
        let config = watcher::Config::default().fields(&format!("metadata.name={}", watch.name));
        let what = format!("HorizontalPodAutoscaler {}/{}", watch.namespace, watch.name);
        let other_query = rate_query(other_side(watch.reporter), &watch.namespace, watch.window_s);
        let mut tracker = HpaTracker::new(&watch.name, watch.reporter);
        let mut query_failed = false;
        let mut stream = watcher::watcher(api, config).default_backoff().boxed();
        loop {
            let item = tokio::select! {
                () = stop.cancelled() => return,
                item = stream.next() => item,
            };
            let hpa = match item {
                None => {
                    recorder.watch_error(&what, "the stream ended");
                    return;
                }
                Some(Err(e)) => {
                    recorder.watch_error(&what, &e.to_string());
                    continue;
                }
                Some(Ok(WatchEvent::Apply(h) | WatchEvent::InitApply(h))) => h,
                Some(Ok(_)) => continue,
            };
            let Some(view) = tracker.changed(&hpa) else {
                continue;
            };
            let other = match query_prometheus(&client, &watch.namespace, &other_query).await {
                Ok(v) => Some(v),
                Err(e) => {
                    if !query_failed {
                        query_failed = true;
                        recorder.record(vec![EventKind::Note {
                            message: format!(
                                "cannot read the side the autoscaler does not use from Prometheus ({e}); it is recorded as 0 until it can"
                            ),
                        }]);
                    }
                    None
                }
            };
            recorder.record(tracker.events(view, other));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_parse() {
        assert_eq!(parse_quantity("12500m"), Some(12.5));
        assert_eq!(parse_quantity("15"), Some(15.0));
        assert_eq!(parse_quantity("1.5k"), Some(1500.0));
        assert_eq!(parse_quantity("2Mi"), Some(2.0 * 1048576.0));
        assert_eq!(parse_quantity("1e3"), Some(1000.0));
        assert_eq!(parse_quantity("x"), None);
    }

    #[test]
    fn prometheus_answers_read_as_numbers() {
        let one = r#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1700000000.1,"187.5"]}]}}"#;
        assert_eq!(query_value(one), Ok(187.5));
        let none = r#"{"status":"success","data":{"resultType":"vector","result":[]}}"#;
        assert_eq!(query_value(none), Ok(0.0));
        let bad = r#"{"status":"error","error":"parse error"}"#;
        assert!(query_value(bad).unwrap_err().contains("parse error"));
    }

    #[test]
    fn the_query_is_percent_encoded_on_the_service_proxy_path() {
        assert_eq!(
            query_path("ns", "sum(rate(a{b=\"c\"}[3s]))"),
            "/api/v1/namespaces/ns/services/prometheus-operated:web/proxy/api/v1/query?query=sum%28rate%28a%7Bb%3D%22c%22%7D%5B3s%5D%29%29"
        );
    }
}

//! The admin listener: `PUT /endpoints` takes the Service's ready endpoints (the workload
//! contract's `EndpointSet` as JSON) and hands them to the controller; `GET /endpoints` shows
//! the last set; `GET /stats` is the accounting (`LbStats` as JSON); `GET /targets` the pods
//! routable now (`RoutableTargets`, what a readiness gate follows); `GET /metrics` the same
//! in OpenMetrics text; `/healthz` answers 200. When the endpoints come from an EndpointSlice
//! watch (`--watch-service`), `PUT /endpoints` answers 409 and `GET /endpoints` shows the
//! watch's set.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use tokio::sync::watch;
use workload_contract::loadbalancer::{
    ENDPOINTS_PATH, EndpointSet, LbStats, RoutableTargets, STATS_PATH, TARGETS_PATH,
};

use crate::proxy::LoadBalancer;

/// OpenMetrics content type, as Prometheus expects it.
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
/// Largest endpoint set accepted, in bytes.
const MAX_BODY: usize = 4 * 1024 * 1024;

type Body = Full<Bytes>;
type ResponseFuture = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

/// The admin service; cheap to clone.
#[derive(Clone)]
pub struct Admin {
    inner: Arc<Inner>,
}

struct Inner {
    proxy: LoadBalancer,
    feed: watch::Sender<EndpointSet>,
    /// `namespace/service` when an EndpointSlice watch feeds the endpoints.
    watched: Option<String>,
}

impl Admin {
    pub fn new(proxy: LoadBalancer, feed: watch::Sender<EndpointSet>) -> Self {
        Self::with_watch(proxy, feed, None)
    }

    /// `watched`: the `namespace/service` whose EndpointSlices feed the endpoints (PUT then
    /// answers 409).
    pub fn with_watch(
        proxy: LoadBalancer,
        feed: watch::Sender<EndpointSet>,
        watched: Option<String>,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                proxy,
                feed,
                watched,
            }),
        }
    }

    async fn handle(&self, req: Request<Incoming>) -> Response<Body> {
        let path = req.uri().path().to_owned();
        match (req.method().clone(), path.as_str()) {
            (Method::PUT, ENDPOINTS_PATH) => self.put_endpoints(req).await,
            (Method::GET, ENDPOINTS_PATH) => json(&*self.inner.feed.borrow()),
            (Method::GET, STATS_PATH) => json(&self.inner.proxy.snapshot()),
            (Method::GET, TARGETS_PATH) => {
                let mut pods: Vec<String> = self
                    .inner
                    .proxy
                    .targets()
                    .into_iter()
                    .map(|t| t.pod)
                    .collect();
                pods.sort();
                json(&RoutableTargets { pods })
            }
            (Method::GET, "/metrics") => {
                let mut resp = Response::new(Full::new(Bytes::from(render(
                    &self.inner.proxy.snapshot(),
                    self.inner.proxy.targets().len(),
                ))));
                resp.headers_mut()
                    .insert(header::CONTENT_TYPE, HeaderValue::from_static(OPENMETRICS));
                resp
            }
            (Method::GET, "/healthz") => text(StatusCode::OK, "ok\n".into()),
            _ => text(StatusCode::NOT_FOUND, "not found\n".into()),
        }
    }

    async fn put_endpoints(&self, req: Request<Incoming>) -> Response<Body> {
        if let Some(service) = &self.inner.watched {
            return text(
                StatusCode::CONFLICT,
                format!(
                    "the endpoints come from the EndpointSlice watch of Service {service} (--watch-service); PUT /endpoints is only for a balancer started without it\n"
                ),
            );
        }
        let body = match Limited::new(req.into_body(), MAX_BODY).collect().await {
            Ok(body) => body.to_bytes(),
            Err(e) => return text(StatusCode::BAD_REQUEST, format!("reading the body: {e}\n")),
        };
        match serde_json::from_slice::<EndpointSet>(&body) {
            Ok(set) => {
                self.inner.feed.send_replace(set);
                Response::builder()
                    .status(StatusCode::NO_CONTENT)
                    .body(Full::new(Bytes::new()))
                    .unwrap_or_default()
            }
            Err(e) => text(
                StatusCode::BAD_REQUEST,
                format!(
                    "the body is not an endpoint set ({{\"endpoints\":[{{\"pod\":\"pod-0\",\"addr\":\"10.0.0.1:8080\"}}]}}): {e}\n"
                ),
            ),
        }
    }
}

impl hyper::service::Service<Request<Incoming>> for Admin {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn call(&self, req: Request<Incoming>) -> Self::Future {
        let admin = self.clone();
        Box::pin(async move { Ok(admin.handle(req).await) })
    }
}

fn text(status: StatusCode, body: String) -> Response<Body> {
    let mut resp = Response::new(Full::new(Bytes::from(body)));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    resp
}

fn json<T: serde::Serialize>(value: &T) -> Response<Body> {
    match serde_json::to_vec(value) {
        Ok(bytes) => {
            let mut resp = Response::new(Full::new(Bytes::from(bytes)));
            resp.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            resp
        }
        Err(e) => text(StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")),
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PodLabel {
    pod: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PodCodeLabel {
    pod: String,
    code: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PodReasonLabel {
    pod: String,
    reason: &'static str,
}

/// The accounting as OpenMetrics text: `loadbalancer_requests_total{pod}`,
/// `loadbalancer_responses_total{pod,code}`, `loadbalancer_errors_total{pod,reason}`,
/// `loadbalancer_no_target_total` and `loadbalancer_routable_targets`.
fn render(stats: &LbStats, routable: usize) -> String {
    let mut registry = Registry::default();
    let requests = Family::<PodLabel, Counter>::default();
    let responses = Family::<PodCodeLabel, Counter>::default();
    let errors = Family::<PodReasonLabel, Counter>::default();
    let no_target = Counter::<u64>::default();
    let targets = Gauge::<i64>::default();
    for (pod, p) in &stats.pods {
        requests
            .get_or_create(&PodLabel { pod: pod.clone() })
            .inc_by(p.totals.sent);
        for (code, n) in &p.totals.by_status {
            responses
                .get_or_create(&PodCodeLabel {
                    pod: pod.clone(),
                    code: *code,
                })
                .inc_by(*n);
        }
        for (reason, n) in &p.totals.lb_errors {
            errors
                .get_or_create(&PodReasonLabel {
                    pod: pod.clone(),
                    reason: reason.as_str(),
                })
                .inc_by(*n);
        }
    }
    no_target.inc_by(stats.no_target);
    targets.set(i64::try_from(routable).unwrap_or(i64::MAX));
    registry.register(
        "loadbalancer_requests",
        "Requests sent to each target pod",
        requests,
    );
    registry.register(
        "loadbalancer_responses",
        "Responses for requests sent to each pod, by status (relayed or generated)",
        responses,
    );
    registry.register(
        "loadbalancer_errors",
        "The balancer's own 502/504 answers, by pod and reason",
        errors,
    );
    registry.register(
        "loadbalancer_no_target",
        "Requests answered 503 because no target was routable",
        no_target,
    );
    registry.register(
        "loadbalancer_routable_targets",
        "Targets receiving new requests now",
        targets,
    );
    let mut out = String::new();
    if let Err(e) = prometheus_client::encoding::text::encode(&mut out, &registry) {
        tracing::warn!("encoding metrics failed: {e}");
    }
    out
}
